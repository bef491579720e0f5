"""The failure lines a batch command ends with, and when it exits 3."""

from __future__ import annotations

from typing import Any

from app.cli.failures import MAX_ERROR_CHARS, failure_lines, providers_failed


def body(needed: int, failed: int, *failures: dict[str, Any]) -> dict[str, Any]:
    return {"total": 60, "needed_provider": needed, "provider_failed": failed,
            "failures": list(failures)}  # fmt: skip


def test_one_line_per_cause_with_the_error_on_one_line() -> None:
    refused = {"reason": "translator_provider_error", "error": "connection\nrefused", "count": 58}
    long = {"reason": "judge_provider_error", "error": "x" * 1000, "count": 2}
    lines = failure_lines(body(60, 60, refused, long))
    assert lines[0] == "58 of 60 screenings: translator_provider_error — connection refused"
    assert lines[1].startswith("2 of 60 screenings: judge_provider_error — xxx")
    assert lines[1].endswith("…") and len(lines[1].split(" — ")[1]) == MAX_ERROR_CHARS


def test_exit_3_only_when_every_screening_that_needed_a_provider_failed() -> None:
    assert providers_failed(body(58, 58)) is not None
    assert "all 58 screenings" in (providers_failed(body(58, 58)) or "")
    assert providers_failed(body(58, 57)) is None
    assert providers_failed(body(0, 0)) is None  # supplied replies alone need no provider
    assert providers_failed({"total": 1}) is None  # an older server's body
