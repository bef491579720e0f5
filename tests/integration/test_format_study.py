"""The reply-format study (`faithscreen eval formats`, app/cli/format_study.py) run in
process: four quiet labelled pairs of the shared development set, screened as `text` and as
`grammar` by the embedded worker on `database_url`, with the translator and a panel of two
judges answering through the real LLM client from the scripted OpenAI-compatible server.
Every count of the study is worked out by hand from the script below."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any, Self

import pytest
from pydantic import model_validator

from app.calibration.formats_text import study_text
from app.cli.format_study import run_study, study_settings
from app.cli.pairs_file import survey
from app.settings import Settings
from tests.support.calibration import quiet_rows
from tests.support.in_process_api import TRANSLATOR_KEY, TRANSLATOR_MODEL, provider
from tests.support.scripted_openai import RecordedRequest, Reply, ScriptedOpenAI, contract_reply

STEADY, FAILING = "steady-model", "failing-model"
USAGE = {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}
PREAMBLE = "Sure, here is my review of the statement.\n\n"
NO_CONTRACT = "I think the two statements agree."


class Script:
    """What each model answers, by the pair (its formal statement), the format asked (a
    `grammar` field in the request) and how often it was asked before:
    - the translator: right by the label; as text, behind a preamble;
    - `steady`: as text FAITHFUL to every pair, under the grammar right by the label;
    - `failing`: as text, pair i (0-3) unreadable until attempt i + 1 (pair 3 never
      readable in three), then MISMATCH; under the grammar never readable."""

    def __init__(self, rows: list[dict[str, Any]]) -> None:
        self.rows = rows
        self.asked: Counter[tuple[str | None, bool, int]] = Counter()

    def __call__(self, request: RecordedRequest) -> Reply:
        index = next(i for i, row in enumerate(self.rows) if row["formal"] in request.text)
        grammar = "grammar" in request.json
        model = request.model
        self.asked[model, grammar, index] += 1
        right = "MISMATCH" if self.rows[index]["label"] == "mismatch" else "FAITHFUL"
        if model == TRANSLATOR_MODEL:
            reply = contract_reply(right)
            return Reply(reply if grammar else PREAMBLE + reply, usage=USAGE)
        judged = contract_reply(back_translation=None, verdict=right if grammar else "FAITHFUL")
        if model == STEADY:
            return Reply(judged, usage=USAGE)
        if grammar or self.asked[model, grammar, index] <= index:
            return Reply(NO_CONTRACT, usage=USAGE)
        return Reply(contract_reply("MISMATCH", back_translation=None), usage=USAGE)


@pytest.fixture
def rows() -> list[dict[str, Any]]:
    return quiet_rows("mismatch", 2) + quiet_rows("faithful", 2)


@pytest.fixture
def labelled(tmp_path: Path, rows: list[dict[str, Any]]) -> Path:
    path = tmp_path / "labelled.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def panel_settings(database_url: str, server: ScriptedOpenAI) -> Settings:
    return Settings(
        database_url=database_url,
        translator=provider(server.base_url, TRANSLATOR_MODEL, TRANSLATOR_KEY),
        judges="steady,failing",
        panel_providers={
            "steady": provider(server.base_url, STEADY),
            "failing": provider(server.base_url, FAILING),
        },
        format_retries=0,  # the study asks three times whatever this says
    )


def counts(found: dict[str, Any]) -> tuple[int, int]:
    return found["k"], found["n"]


async def test_text_and_grammar_are_counted_per_seat_and_format(
    clean_env: None,
    database_url: str,
    scripted_openai: ScriptedOpenAI,
    labelled: Path,
    rows: list[dict[str, Any]],
) -> None:
    scripted_openai.default = Script(rows)
    settings = panel_settings(database_url, scripted_openai)
    study, progress = await run_study(
        labelled, survey(labelled), settings, ["text", "grammar"], attempts=3, name="study"
    )
    assert [p["total"] for p in progress] == [4, 4]
    assert study["pairs"] == 4 and study["attempts"] == 3
    text, grammar = study["formats"]
    assert (text["format"], grammar["format"]) == ("text", "grammar")
    assert text["batch_id"] != grammar["batch_id"]
    assert (
        set(text["seats"])
        == set(grammar["seats"])
        == {
            "translator",
            "judge:steady",
            "judge:failing",
        }
    )

    # The requests: a grammar exactly in the second batch's, the three attempts of failing.
    requests = scripted_openai.requests
    assert sum("grammar" in r.json for r in requests) == 4 + 4 + 4 * 3
    assert sum("grammar" not in r.json for r in requests) == 4 + 4 + (1 + 2 + 3 + 3)

    translator = text["seats"]["translator"]
    assert [counts(translator["readable"][n]) for n in "123"] == [(4, 4)] * 3
    assert counts(translator["preamble"]) == (4, 4)
    assert translator["failures"] == {}
    assert counts(translator["false_pass"]) == (0, 2)
    assert counts(translator["false_alarm"]) == (0, 2)
    assert (translator["calls"], translator["prompt_tokens"]) == (4, 400)
    assert translator["tokens_per_pair"] == 110

    steady = text["seats"]["judge:steady"]
    assert counts(steady["preamble"]) == (0, 4)
    assert steady["verdicts"] == {"faithful": 4}
    assert counts(steady["false_pass"]) == (2, 2)
    assert counts(steady["false_alarm"]) == (0, 2)

    failing = text["seats"]["judge:failing"]
    assert [counts(failing["readable"][n]) for n in "123"] == [(1, 4), (2, 4), (3, 4)]
    assert failing["failures"] == {"missing": 0 + 1 + 2 + 3}
    assert failing["calls"] == 9 and failing["completion_tokens"] == 90
    assert failing["tokens_per_pair"] == 9 * 110 / 4
    assert counts(failing["preamble"]) == (0, 3)  # an unreadable reply has no field
    assert failing["verdicts"] == {"mismatch": 3}
    assert counts(failing["false_pass"]) == (0, 2)
    assert counts(failing["false_alarm"]) == (2, 2)  # one said MISMATCH, one unreadable

    assert grammar["seats"]["translator"]["preamble"] is None  # counted for text only
    steady = grammar["seats"]["judge:steady"]
    assert counts(steady["false_pass"]) == (0, 2) and counts(steady["false_alarm"]) == (0, 2)
    failing = grammar["seats"]["judge:failing"]
    assert [counts(failing["readable"][n]) for n in "123"] == [(0, 4)] * 3
    assert failing["failures"] == {"missing": 12}
    assert counts(failing["false_alarm"]) == (2, 2) and failing["verdicts"] == {}

    agreement = {
        seat: [(a["a"], a["b"], a["k"], a["n"]) for a in found]
        for seat, found in study["agreement"].items()
    }
    assert list(agreement) == ["translator", "judge:failing", "judge:steady"]
    assert agreement == {
        "translator": [("text", "grammar", 4, 4)],
        "judge:failing": [("text", "grammar", 0, 0)],
        "judge:steady": [("text", "grammar", 2, 4)],
    }
    # The screen: no mismatch passed under either format (the translator catches both).
    for part in (text, grammar):
        assert part["screen"]["labelled"] == 4
        assert counts(part["screen"]["rates"]["false_pass"]) == (0, 2)

    shown = study_text(study)
    rows = [line.split() for line in shown.splitlines()[3:10]]
    header = "seat format ok@1 ok@2 ok@3 false pass false alarm tok/pair"
    assert rows[0] == header.split()
    assert ["judge:failing", "text", "1/4", "2/4", "3/4", "0/2", "2/2", "248"] in rows
    assert ["judge:failing", "grammar", "0/4", "0/4", "0/4", "0/2", "2/2", "330"] in rows
    assert rows[1][:2] == ["translator", "text"]  # the translator first, then the judges
    assert "missing (no verdict field) 6" in shown
    assert "judge:steady  text vs grammar  2/4 = 50.0%" in shown


class GrammarRefused(Settings):
    """Settings that refuse the grammar format, as settings may refuse a format for a
    provider that cannot be asked in it."""

    @model_validator(mode="after")
    def _no_grammar(self) -> Self:
        if self.translator.reply_format == "grammar":
            raise ValueError("FAITHSCREEN_TRANSLATOR_REPLY_FORMAT='grammar' is not accepted here")
        return self


async def test_a_format_the_settings_refuse_is_reported_and_the_others_still_run(
    clean_env: None,
    database_url: str,
    scripted_openai: ScriptedOpenAI,
    labelled: Path,
    rows: list[dict[str, Any]],
) -> None:
    scripted_openai.default = Script(rows)
    settings = GrammarRefused.model_validate(
        panel_settings(database_url, scripted_openai).model_dump()
    )
    refused = study_settings(settings, "grammar", 3)
    assert isinstance(refused, str) and "'grammar' is not accepted here" in refused

    study, progress = await run_study(
        labelled, survey(labelled), settings, ["grammar", "text"], attempts=2
    )
    grammar, text = study["formats"]
    assert grammar["refused"] == refused and grammar["batch_id"] is None
    assert grammar["seats"] == {} and grammar["screen"] is None
    assert text["refused"] is None and len(progress) == 1
    assert not any("grammar" in r.json for r in scripted_openai.requests)
    # Two attempts at most: pair 2 and 3 of `failing` stay unreadable.
    failing = text["seats"]["judge:failing"]
    assert [counts(failing["readable"][n]) for n in "12"] == [(1, 4), (2, 4)]
    assert "3" not in failing["readable"]  # never asked a third time
    assert failing["failures"] == {"missing": 0 + 1 + 2 + 2}
    assert "format grammar: REFUSED by the settings, nothing screened" in study_text(study)


def test_study_settings_change_only_the_formats_and_the_retries(
    clean_env: None, database_url: str, scripted_openai: ScriptedOpenAI
) -> None:
    settings = panel_settings(database_url, scripted_openai)
    studied = study_settings(settings, "grammar", 3)
    assert isinstance(studied, Settings)
    assert studied.format_retries == 2
    providers = [studied.translator, studied.judge, *studied.panel_providers.values()]
    assert {p.reply_format for p in providers} == {"grammar"}
    assert studied.model_dump(
        exclude={"translator", "judge", "panel_providers", "format_retries"}
    ) == settings.model_dump(exclude={"translator", "judge", "panel_providers", "format_retries"})
    assert studied.panel_providers["failing"].model == FAILING
