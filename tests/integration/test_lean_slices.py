"""A screening's `lean_status` where a batch is read back (issue 34: "the screening says so
in a field, so calibration can be sliced by it"), on SQLite and PostgreSQL: each line of
GET /v1/batches/{id}/results (JSONL and CSV), the calibration's `by_lean_status` with its
`lean:<status>` CSV rows, the text and HTML calibration reports (a Lean section only when
two statuses or more are present), and the process counter of Lean checks on /metrics.

One labelled batch, every pair Lean-checked by the worker against a scripted Kimina
(tests/support/scripted_kimina.py), those with supplied replies too (then their replies
decide where Lean elaborated the pair); `not_checked` is the slice of a batch screened
without a Lean server. The rates are counted by hand below."""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from app.api.batch_schemas import BatchResultLine
from app.calibration.html import calibration_page
from app.calibration.rows import CALIBRATION_COLUMNS
from app.calibration.text import calibration_text
from app.repositories.batches import ItemResult
from app.settings import LeanSettings, Settings
from tests.support.batches import (
    TRANSLATOR_MISMATCH,
    no_api_keys,  # noqa: F401 (autouse)
    post_batch,
    queued_item,
    results,
    supplied_item,
    wait_batch_done,
)
from tests.support.in_process_api import StartApi
from tests.support.scripted_kimina import Recorded, ScriptedKimina
from tests.support.scripted_openai import ScriptedOpenAI

F, M = "faithful", "mismatch"
# n -> (label, how it is decided, its lean_status, its outcome). The provider answers
# FAITHFUL to every call it gets; Kimina a clean sorry unless scripted an error.
PLAN: dict[int, tuple[str, str, str, str]] = {
    1: (F, "supplied", "ok", "passed"),
    2: (M, "supplied", "ok", "passed"),  # a false pass
    3: (F, "supplied mismatch", "ok", "flagged"),  # a false alarm
    4: (F, "lean ok", "ok", "passed"),
    5: (M, "lean ok", "ok", "passed"),  # a false pass
    6: (M, "lean error", "error", "flagged"),
    7: (F, "lean error", "error", "flagged"),  # a false alarm
}
# status -> (false pass k/n, false alarm k/n), counted from PLAN by hand.
BY_STATUS = {"ok": ((2, 2), (1, 3)), "error": ((0, 1), (1, 1))}
_METRIC = re.compile(r'^faithscreen_process_lean_checks_total\{status="([a-z_]+)"\} (\S+)$')


@pytest.fixture
def kimina() -> Iterator[ScriptedKimina]:
    with ScriptedKimina() as server:
        yield server


def item(n: int) -> dict[str, Any]:
    label, how, _, _ = PLAN[n]
    if how == "supplied":
        return supplied_item(n, label=label)
    if how == "supplied mismatch":
        return supplied_item(n, translator=TRANSLATOR_MISMATCH, label=label)
    return queued_item(n, label=label)


def lean_counts(body: str) -> dict[str, float]:
    return {m[1]: float(m[2]) for line in body.splitlines() if (m := _METRIC.match(line))}


async def test_a_mixed_batch_carries_lean_status_in_results_calibration_and_metrics(
    start_api: StartApi,
    configured_settings: Settings,
    kimina: ScriptedKimina,
    scripted_openai: ScriptedOpenAI,
) -> None:
    for n, (_, how, _, _) in PLAN.items():
        if how == "lean error":
            kimina.script_code(f"add_comm_{n} (", [Recorded("unknown_identifier.json")])
    settings = configured_settings.model_copy(
        update={"lean": LeanSettings(server_url=kimina.base_url), "audit_rate": 0.0}
    )
    async with start_api(settings) as api:
        before = lean_counts((await api.client.get("/metrics")).text)
        batch = await post_batch(api, [item(n) for n in PLAN])
        await wait_batch_done(api, batch["id"])
        lines = await results(api, batch["id"])
        as_csv = await api.client.get(f"/v1/batches/{batch['id']}/results?format=csv")
        calibration = (await api.client.get(f"/v1/batches/{batch['id']}/calibration")).json()
        rows = await api.client.get(f"/v1/batches/{batch['id']}/calibration?format=csv")
        after = lean_counts((await api.client.get("/metrics")).text)
        shown = {
            line["id"]: (await api.client.get(f"/v1/screenings/{line['id']}")).json()
            for line in lines
        }

    # Every screening went to Lean, supplied replies too: five elaborated, two did not.
    assert len(kimina.checks) == 7
    # Results: each line says what Lean said, as the screening does, in JSONL and CSV.
    for line, n in zip(lines, PLAN, strict=True):
        _, _, lean_status, outcome = PLAN[n]
        assert (line["external_id"], line["outcome"]) == (f"item-{n}", outcome)
        assert line["lean_status"] == shown[line["id"]]["lean_status"] == lean_status
    header, *cells = csv.reader(io.StringIO(as_csv.text, newline=""))
    assert as_csv.status_code == 200
    at = header.index("lean_status")
    assert [row[at] for row in cells] == [PLAN[n][2] for n in PLAN]

    # Calibration sliced by it, every rate as counted by hand above.
    by_status = calibration["by_lean_status"]
    assert set(by_status) == set(BY_STATUS)
    for status, ((pass_k, pass_n), (alarm_k, alarm_n)) in BY_STATUS.items():
        rates = by_status[status]["rates"]
        assert (rates["false_pass"]["k"], rates["false_pass"]["n"]) == (pass_k, pass_n)
        assert (rates["false_alarm"]["k"], rates["false_alarm"]["n"]) == (alarm_k, alarm_n)
        assert by_status[status]["labelled"] == pass_n + alarm_n
    # The CSV rows carry it as a slice, the numbers the JSON's.
    header, *table = csv.reader(io.StringIO(rows.text, newline=""))
    assert tuple(header) == CALIBRATION_COLUMNS
    sliced = {(r[1], r[2]): r for r in table if r[1].startswith("lean:")}
    assert {where for where, _ in sliced} == {f"lean:{status}" for status in BY_STATUS}
    for status, part in by_status.items():
        for measure in ("false_pass", "false_alarm"):
            row = sliced[(f"lean:{status}", measure)]
            assert (int(row[3]), int(row[4])) == (part["rates"][measure]["k"],
                                                  part["rates"][measure]["n"])  # fmt: skip

    # The reports show false pass and false alarm per status.
    text = calibration_text(calibration)
    section = text.split("by Lean status:\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert [line.split()[0] for line in section] == sorted(BY_STATUS)
    for line in section:
        words = line.split()  # ok labelled 5 false_pass 2/2 = ... false_alarm ...
        status, labelled, false_pass = words[0], words[2], words[4]
        (pass_k, pass_n), (alarm_k, alarm_n) = BY_STATUS[status]
        assert (labelled, false_pass) == (str(pass_n + alarm_n), f"{pass_k}/{pass_n}")
        assert f"false_alarm {alarm_k}/{alarm_n} " in line
    page = calibration_page(calibration)
    assert "<h3>By Lean status</h3>" in page
    lean_table = page.split("<h3>By Lean status</h3>", 1)[1].split("</table>", 1)[0]
    for status in BY_STATUS:
        assert f">{status}<" in lean_table

    # /metrics: this process made and stored seven checks, by status.
    grew = {s: after.get(s, 0.0) - before.get(s, 0.0) for s in after}
    assert {s: n for s, n in grew.items() if n} == {"ok": 5, "error": 2}


async def test_a_batch_lean_never_checked_has_no_lean_section(
    start_api: StartApi, configured_settings: Settings, scripted_openai: ScriptedOpenAI
) -> None:
    async with start_api(configured_settings.model_copy(update={"audit_rate": 0.0})) as api:
        batch = await post_batch(api, [queued_item(n, label=F) for n in (1, 2)])
        await wait_batch_done(api, batch["id"])
        lines = await results(api, batch["id"])
        calibration = (await api.client.get(f"/v1/batches/{batch['id']}/calibration")).json()
    assert {line["lean_status"] for line in lines} == {"not_checked"}
    assert set(calibration["by_lean_status"]) == {"not_checked"}
    assert calibration["by_lean_status"]["not_checked"]["labelled"] == 2
    # One status only repeats the overall rates: the reports leave it out.
    assert "by Lean status" not in calibration_text(calibration)
    assert "By Lean status" not in calibration_page(calibration)


def test_a_blind_results_line_withholds_lean_status() -> None:
    item = ItemResult(0, "s1", None, "done", "flagged", ["lean_error"], "error")
    assert BatchResultLine.of(item).lean_status == "error"
    blind = json.loads(BatchResultLine.of(item, blind=True).model_dump_json())
    assert (blind["blind"], blind["outcome"], blind["lean_status"]) == (True, None, None)
