"""Shared by the calibration tests: labelled pairs from the shared development set, and a
scripted provider whose reply depends on the pair and the role asking."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.evidence import run_checks
from app.vocabulary import Pair
from tests.support.in_process_api import JUDGE_MODEL, TRANSLATOR_MODEL
from tests.support.scripted_openai import RecordedRequest, Reply, contract_reply

ROOT = Path(__file__).resolve().parents[2]
DEV_CANDIDATES = (ROOT.parent / "shared", Path("/work/shared"))
DEV = next(
    (base / "data/labelled/dev.jsonl" for base in DEV_CANDIDATES if base.exists()),
    DEV_CANDIDATES[0] / "data/labelled/dev.jsonl",
)

# What a role answers for a pair: a contract verdict, or free text nobody can read.
FAITHFUL, MISMATCH, UNCLEAR, UNREADABLE = "FAITHFUL", "MISMATCH", "UNCLEAR", "unreadable"


def dev_rows() -> list[dict[str, Any]]:
    return [json.loads(line) for line in DEV.read_text(encoding="utf-8").splitlines()]


def quiet_rows(label: str, count: int) -> list[dict[str, Any]]:
    """The first `count` dev rows with this label on which no evidence check fires, so
    that their outcome is the replies' alone (the matrix can be worked out by hand)."""
    chosen = []
    for row in dev_rows():
        pair = Pair(row["informal"], row["formal"], row["header"] or "")
        if row["label"] == label and not tuple(run_checks(pair)):
            chosen.append(row)
    assert len(chosen) >= count, f"only {len(chosen)} quiet {label} rows in {DEV}"
    return chosen[:count]


def item(row: Mapping[str, Any], **extra: Any) -> dict[str, Any]:
    """A screening request for a dev row, with its label (unless overridden)."""
    request = {
        "informal": row["informal"],
        "formal": row["formal"],
        "header": row["header"] or "",
        "external_id": row["id"],
        "label": row["label"],
    }
    return request | extra


@dataclass(frozen=True, slots=True)
class Script:
    """Per pair (keyed by the formal statement), what the translator and judge answer."""

    answers: dict[str, tuple[str, str]]

    def reply(self, request: RecordedRequest) -> Reply:
        text = request.text
        for formal, (translator, judge) in self.answers.items():
            if formal in text:
                answer = translator if request.model == TRANSLATOR_MODEL else judge
                return Reply(_content(answer, request.model == JUDGE_MODEL))
        return Reply(contract_reply(FAITHFUL))


def _content(answer: str, judge: bool) -> str:
    if answer == UNREADABLE:
        return "I looked at it and I think it is probably fine."
    back = None if judge else "It says what the informal statement says."
    return contract_reply(answer, back_translation=back)


def scripted(plan: Mapping[str, tuple[str, str]], rows: Mapping[str, Mapping[str, Any]]) -> Script:
    """`plan`: pair name -> (translator answer, judge answer); `rows`: name -> dev row."""
    return Script({rows[name]["formal"]: answers for name, answers in plan.items()})


def server_default(script: Callable[[], Script]) -> Callable[[RecordedRequest], Reply]:
    """A default step for ScriptedOpenAI that asks the current script."""
    return lambda request: script().reply(request)
