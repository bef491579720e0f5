"""The pure parts of calibration: the exact McNemar test, the kind of a statement, and
the tally's rules (pending screenings, a tag counted once, supplied replies named)."""

from __future__ import annotations

import math

import pytest

from app.calibration.compare import Judged, compare, mcnemar_exact
from app.calibration.kind import statement_kind
from app.calibration.tally import CalibrationTally, Call, LabelledScreening


@pytest.mark.parametrize(
    ("a_only", "b_only", "p"),
    [
        (0, 0, 1.0),  # no discordant pair: no evidence of a difference
        (1, 0, 1.0),
        (0, 5, 2 / 32),
        (2, 8, 2 * (1 + 10 + 45) / 1024),
        (1, 9, 2 * (1 + 10) / 1024),
        (3, 3, 1.0),
    ],
)
def test_mcnemar_exact_is_twice_the_rarer_binomial_tail(a_only: int, b_only: int, p: float) -> None:
    assert mcnemar_exact(a_only, b_only) == pytest.approx(p)
    assert mcnemar_exact(b_only, a_only) == pytest.approx(p)


def test_mcnemar_exact_stays_finite_on_large_counts() -> None:
    p = mcnemar_exact(4000, 5000)
    assert 0 < p < 1e-20 and math.isfinite(p)


@pytest.mark.parametrize(
    ("formal", "kind"),
    [
        ("theorem t : 1 = 1 := by sorry", "theorem"),
        ("@[simp] lemma t : 1 = 1 := rfl", "theorem"),
        ("example : 1 = 1 := rfl", "theorem"),
        (
            "-- a def in a comment\nabbrev answer : ℕ := 3\ntheorem t : answer = 3 := rfl",
            "definition",
        ),
        ("noncomputable def f : ℝ → ℝ := id\ntheorem t : f 0 = 0 := rfl", "definition"),
        ("structure S where\n  x : ℕ\ntheorem t (s : S) : s.x = s.x := rfl", "other"),
        ("theorem_like_name := 3", "other"),
        ("/- theorem in a block comment -/ def f : ℕ := 1", "definition"),
        ('set_option x "lemma" in\ninstance : Inhabited ℕ := ⟨0⟩', "other"),
    ],
)
def test_the_kind_is_the_first_declaration(formal: str, kind: str) -> None:
    assert statement_kind(formal) == kind


def screening(label: str, outcome: str | None, **extra: object) -> LabelledScreening:
    fields: dict[str, object] = {
        "reasons": (),
        "tags": (),
        "kind": "theorem",
        "confirmations": 0,
        "policy_version": "policy-1",
        "evidence_version": "evidence-1",
        "calls": (),
    }
    return LabelledScreening(label=label, outcome=outcome, **(fields | extra))  # type: ignore[arg-type]


def call(
    role: str, *, supplied: bool = False, latency: int | None = 10, status: int | None = 200
) -> Call:
    return Call(
        role=role,
        model=None if supplied else f"{role}-model",
        prompt_version=None if supplied else "prompts-1",
        parser_version="contract-1",
        supplied=supplied,
        http_status=None if supplied else status,
        prompt_tokens=100,
        completion_tokens=20,
        latency_ms=latency,
    )


def test_pending_screenings_are_counted_apart_and_a_repeated_tag_once() -> None:
    tally = CalibrationTally()
    tally.add(screening("mismatch", None))
    tally.add(screening("mismatch", "passed", tags=("a", "a")))
    body = tally.as_json()
    assert (body["labelled"], body["pending"], body["partial"]) == (1, 1, True)
    assert body["by_tag"]["a"]["labelled"] == 1
    assert body["rates"]["false_pass"]["k"] == 1


def test_supplied_replies_are_a_config_of_their_own_without_latency() -> None:
    tally = CalibrationTally()
    supplied = (
        call("translator", supplied=True, latency=None),
        call("judge", supplied=True, latency=None),
    )
    tally.add(screening("faithful", "passed", calls=supplied))
    tally.add(
        screening("faithful", "passed", calls=(call("translator"), call("judge", latency=None)))
    )
    body = tally.as_json()
    models = {(c["translator_model"], c["judge_model"], c["count"]) for c in body["configs"]}
    assert models == {("supplied", "supplied", 1), ("translator-model", "judge-model", 1)}
    # Only the one call a provider answered has a latency.
    assert body["cost"]["latency_p50_ms"] == 10
    assert body["cost"]["calls_per_screening"] == 2


def test_a_comparison_leaves_out_label_conflicts_and_pairs_in_one_batch_only() -> None:
    a = {
        1: Judged("mismatch", "passed"),
        2: Judged("faithful", "passed"),
        3: Judged("faithful", "flagged"),
    }
    b = {
        1: Judged("mismatch", "flagged"),
        2: Judged("mismatch", "passed"),
        4: Judged("faithful", "passed"),
    }
    result = compare(a, b).as_json()
    assert (result["common"], result["label_conflicts"]) == (1, 1)
    assert result["rates"]["false_pass"]["discordant"] == {"a_only": 1, "b_only": 0}
    assert result["rates"]["false_alarm"]["a"]["n"] == 0
    assert result["rates"]["false_alarm"]["difference"] is None


def test_the_generic_evidence_reason_is_not_counted_beside_its_codes() -> None:
    tally = CalibrationTally()
    reasons = ("evidence_review", "evidence_review:truncating_division", "judge_unclear")
    tally.add(screening("mismatch", "needs_review", reasons=reasons))
    tally.add(screening("mismatch", "needs_review", reasons=("evidence_review",)))
    assert tally.as_json()["needs_review_reasons"] == {
        "evidence_review": 1,
        "evidence_review:truncating_division": 1,
        "judge_unclear": 1,
    }


def test_a_call_that_never_reached_a_provider_has_no_latency() -> None:
    tally = CalibrationTally()
    # CallResult.not_sent: no HTTP status and 0 ms, a placeholder rather than a latency.
    unsent = (call("translator", latency=0, status=None), call("judge", latency=0, status=None))
    tally.add(screening("faithful", "needs_review", calls=unsent))
    assert tally.as_json()["cost"]["latency_p50_ms"] is None
    tally.add(screening("faithful", "passed", calls=(call("translator", latency=30),)))
    assert tally.as_json()["cost"]["latency_p50_ms"] == 30
