"""app/mcp/explain.py and results.py: reason meanings read from the policy's own table,
replies read by the contract parser, the summary line an agent acts on."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from app.contract import parse_reply
from app.evidence import CHECKS
from app.mcp.explain import UnknownReason, explain_reason, read_reply
from app.mcp.results import screening_result
from app.policy.reasons import FLAGGING_REASONS, REASON_DESCRIPTIONS, Reason
from faithscreen_client import Screening


@pytest.mark.parametrize("reason", list(Reason))
def test_every_reason_is_explained_from_the_policy_table(reason: Reason) -> None:
    meaning = explain_reason(reason.value)
    assert meaning.meaning is REASON_DESCRIPTIONS[reason]
    assert meaning.qualifier is None
    expected = "flagged" if reason in FLAGGING_REASONS else "needs_review"
    assert meaning.outcome == expected


def test_a_qualified_evidence_reason_names_its_check() -> None:
    check = CHECKS[-1]
    meaning = explain_reason(f"evidence_review:{check.code}")
    assert (meaning.reason, meaning.qualifier) == ("evidence_review", check.code)
    assert meaning.qualifier_meaning == check.description


def test_an_unknown_code_is_refused_with_the_known_ones() -> None:
    with pytest.raises(UnknownReason) as refused:
        explain_reason("judge_grumpy")
    assert "judge_grumpy" in str(refused.value) and "judge_mismatch" in str(refused.value)


@pytest.mark.parametrize(
    "text",
    ["VERDICT: FAITHFUL\nISSUES: none\n", "VERDICT: MAYBE\n", "VERDICT: FAITHFUL\rISSUES: x\n", ""],
)
def test_read_reply_is_the_contract_parser(text: str) -> None:
    reading = parse_reply(text)
    answer = read_reply(text)
    assert (answer.verdict, answer.parse_status) == (
        reading.verdict.value,
        reading.parse_status.value,
    )
    assert answer.issues == reading.issues and answer.parser_version == reading.parser_version


def screening(**fields: object) -> Screening:
    base: dict[str, object] = {
        "id": "s-1",
        "status": "done",
        "outcome": "flagged",
        "reasons": ["judge_mismatch"],
        "external_id": None,
        "batch_id": None,
        "priority": "interactive",
        "policy_version": "policy-1",
        "created_at": datetime(2026, 1, 1, tzinfo=UTC),
        "finished_at": None,
        "informal": "i",
        "formal": "f",
        "header": "",
        "confirmations": 0,
        "evidence": [],
        "evidence_version": None,
        "error": None,
        "reviews": [],
    }
    return Screening.model_validate(base | fields)


def test_the_summary_says_what_to_do() -> None:
    flagged = screening_result(screening()).summary
    assert flagged.startswith("flagged (judge_mismatch): The judge said MISMATCH")
    assert "Fix the Lean statement" in flagged
    passed = screening_result(screening(outcome="passed", reasons=[])).summary
    assert passed.startswith("passed:") and "not proof" in passed
    queued = screening_result(screening(status="queued", outcome=None, reasons=[]), 5).summary
    assert (
        queued == "queued: not done after 5 s; call get_screening with id s-1 to read its outcome."
    )
