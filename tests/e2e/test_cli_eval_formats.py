"""`faithscreen eval formats` as a process of its own: rows of the shared labelled set as
they are, the scripted provider on loopback answering by the format asked, the embedded
database and worker; the text on stdout, the HTML page, and what is refused before any
call (app/cli/format_study.py; the counts themselves: tests/integration/test_format_study.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.test_cli_batch import faithscreen
from tests.support.calibration import quiet_rows
from tests.support.scripted_openai import RecordedRequest, Reply, ScriptedOpenAI, contract_reply
from tests.support.serve_process import provider_env

pytestmark = pytest.mark.one_database("sqlite")

# A model name from outside, shown on the page: it must arrive there as text.
JUDGE = "judge-<i>model</i>"


def answer(request: RecordedRequest) -> Reply:
    """As text, the judge says FAITHFUL behind a preamble and the translator cannot write
    the contract; under the grammar both answer MISMATCH in the contract."""
    grammar = "grammar" in request.json
    if request.model == JUDGE:
        reply = contract_reply("MISMATCH" if grammar else "FAITHFUL", back_translation=None)
        return Reply(reply if grammar else "Here is my review.\n" + reply)
    return Reply(contract_reply("MISMATCH") if grammar else "It is the same statement.")


def test_eval_formats_prints_the_study_and_writes_its_page(
    database_url: str, scripted_openai: ScriptedOpenAI, tmp_path: Path
) -> None:
    scripted_openai.default = answer
    rows = quiet_rows("mismatch", 2) + quiet_rows("faithful", 1)
    path = tmp_path / "labelled.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    env = provider_env(
        scripted_openai.base_url,
        FAITHSCREEN_DATABASE_URL=database_url,
        FAITHSCREEN_JUDGE_MODEL=JUDGE,
    )
    page = tmp_path / "formats.html"
    args = ("eval", "formats", str(path), "--formats", "text,grammar", "--attempts", "2")
    done = faithscreen(env, *args, "--html", str(page))
    assert done.returncode == 0, done.stderr
    summary = [line.split() for line in done.stdout.splitlines()[4:8]]
    assert summary == [
        ["translator", "text", "0/3", "0/3", "-", "0/2", "1/1", summary[0][-1]],
        ["judge", "text", "3/3", "3/3", "-", "2/2", "0/1", summary[1][-1]],
        ["translator", "grammar", "3/3", "3/3", "-", "0/2", "1/1", summary[2][-1]],
        ["judge", "grammar", "3/3", "3/3", "-", "0/2", "1/1", summary[3][-1]],
    ]
    assert "each seat asked at most 2 times a pair" in done.stdout
    assert "missing (no verdict field) 6" in done.stdout  # the translator's, twice a pair
    assert "preamble              3/3 = 100.0%" in done.stdout  # the judge's, as text
    assert "judge  text vs grammar  0/3 = 0.0%" in done.stdout
    assert "translator  text vs grammar  0/0 (no cases)" in done.stdout
    assert "format text: batch " in done.stderr and "format grammar: batch " in done.stderr
    # Two attempts for each unreadable translator reply, one for everything else.
    assert len(scripted_openai.requests) == (3 * 2 + 3) + (3 + 3)

    html = page.read_text(encoding="utf-8")
    assert "judge-&lt;i&gt;model&lt;/i&gt;" in html and "<i>" not in html
    assert "Content-Security-Policy" in html and "<script" not in html
    assert html.count("<td>text</td>") == 3 and html.count("<td>grammar</td>") == 3
    assert html.count(">not asked<") == 4  # a third attempt, never made

    as_json = faithscreen(env, *args, "--json")
    assert as_json.returncode == 0, as_json.stderr
    study = json.loads(as_json.stdout)
    assert [part["format"] for part in study["formats"]] == ["text", "grammar"]
    assert study["formats"][0]["seats"]["judge"]["models"] == [JUDGE]


def test_eval_formats_refuses_an_unknown_format_before_any_call(
    database_url: str, scripted_openai: ScriptedOpenAI, tmp_path: Path
) -> None:
    path = tmp_path / "labelled.jsonl"
    path.write_text(json.dumps(quiet_rows("mismatch", 1)[0]) + "\n", encoding="utf-8")
    env = provider_env(scripted_openai.base_url, FAITHSCREEN_DATABASE_URL=database_url)
    done = faithscreen(env, "eval", "formats", str(path), "--formats", "text,xml")
    assert done.returncode == 2
    assert "xml is not a reply format" in done.stderr and "text, grammar" in done.stderr
    assert done.stdout == "" and scripted_openai.requests == []
