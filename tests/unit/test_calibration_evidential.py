"""The calibration names each seat whose model was marked not evidential, as the reasons
name it (`translator`, `judge`, `judge:<name>`), counted once per screening."""

from __future__ import annotations

from app.calibration.tally import CalibrationTally, Call, LabelledScreening
from app.calibration.text import calibration_text


def call(role: str, judge: str = "", *, evidential: bool = True, attempt: int = 1) -> Call:
    return Call(
        role=role,
        model="m",
        prompt_version="p",
        parser_version="c",
        supplied=False,
        http_status=200,
        prompt_tokens=attempt,
        completion_tokens=1,
        latency_ms=5,
        judge_name=judge,
        evidential=evidential,
    )


def screening(*calls: Call) -> LabelledScreening:
    return LabelledScreening(
        label="mismatch",
        outcome="needs_review",
        reasons=(),
        tags=(),
        kind="theorem",
        confirmations=0,
        policy_version="policy-4",
        evidence_version="e",
        calls=calls,
    )


def test_each_seat_is_counted_once_per_screening_under_its_reason_name() -> None:
    tally = CalibrationTally()
    tally.add(
        screening(
            call("translator"),
            call("judge", "a", evidential=False),
            call("judge", "a", evidential=False, attempt=2),
            call("judge", "b"),
        )
    )
    tally.add(screening(call("translator", evidential=False), call("judge", "judge")))
    tally.add(screening(call("translator"), call("judge", "judge", evidential=False)))
    body = tally.as_json()
    assert body["non_evidential"] == {"judge": 1, "judge:a": 1, "translator": 1}
    text = calibration_text({"batch_id": "b", **body})
    assert "screenings: judge in 1, judge:a in 1, translator in 1;" in text
