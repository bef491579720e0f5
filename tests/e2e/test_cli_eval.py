"""`faithscreen eval run|show|compare` as processes of their own: rows of the shared
labelled set as they are, the scripted provider on loopback, the embedded database and
worker, and a real `faithscreen serve` for --server; on SQLite and PostgreSQL."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_cli_batch import faithscreen
from tests.support.calibration import dev_rows, quiet_rows
from tests.support.scripted_openai import Reply, ScriptedOpenAI, contract_reply
from tests.support.serve_process import StartServe, provider_env

pytestmark = [pytest.mark.e2e, pytest.mark.one_database("postgres")]

MISMATCH = contract_reply("MISMATCH", issues="the statement says something else")


def labelled_rows() -> list[dict[str, Any]]:
    """Three mismatch and three faithful rows of dev.jsonl, untouched (id, source, why...)."""
    return quiet_rows("mismatch", 3) + quiet_rows("faithful", 3)


def catch_all_but_the_last_mismatch(server: ScriptedOpenAI, rows: list[dict[str, Any]]) -> None:
    """The translator says MISMATCH for the first two mismatch rows; everything else is
    FAITHFUL (the default): one false pass, no false alarm."""
    for row in rows[:2]:
        server.script(row["formal"], model="translator-model", steps=[Reply(MISMATCH)] * 5)


def rows_file(tmp_path: Path, rows: list[dict[str, Any]], name: str = "labelled") -> Path:
    path = tmp_path / f"{name}.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def check_calibration(body: dict[str, Any]) -> None:
    assert body["labelled"] == 6 and body["partial"] is False
    assert body["matrix"] == {
        "faithful": {"passed": 3, "flagged": 0, "needs_review": 0},
        "mismatch": {"passed": 1, "flagged": 2, "needs_review": 0},
    }
    assert body["rates"]["false_pass"]["k"] == 1 and body["rates"]["false_pass"]["n"] == 3
    assert body["rates"]["false_alarm"]["k"] == 0
    # Each row's `source` became a tag.
    sources = {row["source"] for row in labelled_rows()}
    assert all(tag.startswith("source:") for tag in body["by_tag"])
    assert len(body["by_tag"]) == len(sources)


def test_eval_run_screens_the_labelled_set_locally_and_prints_only_json(
    database_url: str, scripted_openai: ScriptedOpenAI, tmp_path: Path
) -> None:
    rows = labelled_rows()
    catch_all_but_the_last_mismatch(scripted_openai, rows)
    env = provider_env(scripted_openai.base_url, FAITHSCREEN_DATABASE_URL=database_url)
    page = tmp_path / "calibration.html"
    done = faithscreen(
        env, "eval", "run", str(rows_file(tmp_path, rows)), "--json", "--html", str(page)
    )
    assert done.returncode == 0, done.stderr
    body = json.loads(done.stdout)  # stdout holds the calibration object alone
    check_calibration(body)
    assert "6/6 (100.0%)" in done.stderr  # progress went to stderr
    assert "<svg" in page.read_text(encoding="utf-8")

    shown = faithscreen(env, "eval", "show", body["batch_id"])
    assert shown.returncode == 0, shown.stderr
    assert re.search(r"false_pass\s+1/3 = 33\.3% \[", shown.stdout)
    assert "labelled and done: 6" in shown.stdout


def test_eval_run_refuses_a_file_with_no_labelled_row(
    database_url: str, scripted_openai: ScriptedOpenAI, tmp_path: Path
) -> None:
    unlabelled = [{k: v for k, v in row.items() if k != "label"} for row in dev_rows()[:3]]
    env = provider_env(scripted_openai.base_url, FAITHSCREEN_DATABASE_URL=database_url)
    done = faithscreen(env, "eval", "run", str(rows_file(tmp_path, unlabelled)))
    assert done.returncode == 2
    assert "has no labelled row" in done.stderr and '"label"' in done.stderr
    assert done.stdout == ""
    assert scripted_openai.requests == []


def test_eval_against_a_server_runs_shows_and_compares(
    start_serve: StartServe, scripted_openai: ScriptedOpenAI, tmp_path: Path
) -> None:
    rows = labelled_rows()
    catch_all_but_the_last_mismatch(scripted_openai, rows)
    serve = start_serve(provider_env(scripted_openai.base_url))
    path = rows_file(tmp_path, rows)
    server = ("--server", serve.base_url)
    poll = ("--json", "--poll-seconds", "0.2")
    first = faithscreen({}, "eval", "run", str(path), *server, *poll, "--name", "baseline")
    assert first.returncode == 0, first.stderr
    a = json.loads(first.stdout)
    check_calibration(a)

    # The same file again, after the one mismatch that passed is now caught: a new batch.
    scripted_openai.script(rows[2]["formal"], model="translator-model", steps=[Reply(MISMATCH)] * 5)
    second = faithscreen({}, "eval", "run", str(path), *server, *poll, "--name", "candidate")
    assert second.returncode == 0, second.stderr
    b = json.loads(second.stdout)
    assert b["batch_id"] != a["batch_id"]
    assert b["rates"]["false_pass"]["k"] == 0

    page = tmp_path / "compare.html"
    args = ("eval", "compare", a["batch_id"], b["batch_id"], *server)
    compared = faithscreen({}, *args, "--json", "--html", str(page))
    assert compared.returncode == 0, compared.stderr
    comparison = json.loads(compared.stdout)
    assert comparison["common"] == 6
    assert comparison["rates"]["false_pass"]["discordant"] == {"a_only": 1, "b_only": 0}
    assert comparison["rates"]["false_pass"]["p_value"] == 1.0
    assert page.exists()

    text = faithscreen({}, *args)
    assert text.returncode == 0, text.stderr
    assert "pairs labelled alike and done in both: 6" in text.stdout
    assert "exact McNemar p = 1" in text.stdout

    # By name, as the server resolves it: the names it was given head the text.
    named = faithscreen({}, "eval", "compare", "baseline", "candidate", *server)
    assert named.returncode == 0, named.stderr
    heading = f'A: "baseline" (batch {a["batch_id"]}) vs B: "candidate" (batch {b["batch_id"]})'
    assert named.stdout.splitlines()[0] == heading


def test_eval_show_of_an_unknown_batch_says_so(database_url: str, tmp_path: Path) -> None:
    done = faithscreen({"FAITHSCREEN_DATABASE_URL": database_url}, "eval", "show", "nope")
    assert done.returncode == 1
    assert "batch nope does not exist" in done.stderr


def test_eval_run_skip_invalid_calibrates_on_the_valid_rows_and_names_the_others(
    database_url: str, scripted_openai: ScriptedOpenAI, tmp_path: Path
) -> None:
    rows = labelled_rows()
    catch_all_but_the_last_mismatch(scripted_openai, rows)
    env = provider_env(
        scripted_openai.base_url,
        FAITHSCREEN_DATABASE_URL=database_url,
        FAITHSCREEN_MAX_STATEMENT_BYTES="1000",
    )
    lines = [json.dumps(row) for row in rows]
    lines[3:3] = ["{not json", json.dumps({"informal": "no formal", "label": "faithful"})]
    path = tmp_path / "mixed.jsonl"
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")

    refused = faithscreen(env, "eval", "run", str(path), "--json")
    assert refused.returncode == 2
    assert (
        "line 4: not valid JSON" in refused.stderr
        and "line 5: formal: Field required" in refused.stderr
    )
    assert scripted_openai.requests == []

    done = faithscreen(env, "eval", "run", str(path), "--json", "--skip-invalid")
    assert done.returncode == 0, done.stderr
    assert "left out 2 invalid lines" in done.stderr
    assert (
        "line 4: not valid JSON" in done.stderr and "line 5: formal: Field required" in done.stderr
    )
    check_calibration(json.loads(done.stdout))

    too_long = rows[0] | {"formal": "theorem x : " + "x" * 2000}
    path.write_text("".join(ln + "\n" for ln in [*lines, json.dumps(too_long)]), encoding="utf-8")
    longer = faithscreen(env, "eval", "run", str(path), "--json", "--skip-invalid")
    assert longer.returncode == 2
    assert "line 9: formal:" in longer.stderr


def test_eval_show_and_compare_take_names_and_their_reports_carry_them(
    database_url: str, scripted_openai: ScriptedOpenAI, tmp_path: Path
) -> None:
    rows = labelled_rows()
    catch_all_but_the_last_mismatch(scripted_openai, rows)
    env = provider_env(scripted_openai.base_url, FAITHSCREEN_DATABASE_URL=database_url)
    path = rows_file(tmp_path, rows)

    def run(name: str) -> str:
        done = faithscreen(env, "eval", "run", str(path), "--json", "--name", name)
        assert done.returncode == 0, done.stderr
        return str(json.loads(done.stdout)["batch_id"])

    a = run("baseline")
    scripted_openai.script(rows[2]["formal"], model="translator-model", steps=[Reply(MISMATCH)] * 5)
    b = run("candidate")

    page = tmp_path / "candidate.html"
    shown = faithscreen(env, "eval", "show", "candidate", "--html", str(page))
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.splitlines()[0] == f'calibration of "candidate" (batch {b})'
    assert "<title>FaithScreen calibration: candidate</title>" in page.read_text("utf-8")

    page = tmp_path / "compare.html"
    compared = faithscreen(env, "eval", "compare", "baseline", "candidate", "--html", str(page))
    assert compared.returncode == 0, compared.stderr
    heading = f'A: "baseline" (batch {a}) vs B: "candidate" (batch {b})'
    assert compared.stdout.splitlines()[0] == heading
    html = page.read_text("utf-8")
    assert "<h1>FaithScreen comparison: candidate against baseline</h1>" in html
    # The page opens with the comparison; B's calibration (its matrix first) follows.
    assert html.index('id="comparison"') < html.index("<th>mismatch</th>")

    again = run("baseline")
    refused = faithscreen(env, "eval", "show", "baseline")
    assert refused.returncode == 1 and refused.stdout == ""
    assert "several batches are named 'baseline'" in refused.stderr
    assert a in refused.stderr and again in refused.stderr
