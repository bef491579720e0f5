"""FAITHSCREEN_LEAN_*: read into Settings.lean, bounded, and never shown in clear."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from app.settings import Settings


def test_the_lean_variables_are_read_and_the_secrets_masked(
    clean_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAITHSCREEN_LEAN_SERVER_URL", "http://kimi:na@lean:8000")
    monkeypatch.setenv("FAITHSCREEN_LEAN_SERVER_API_KEY", "lean-secret")
    monkeypatch.setenv("FAITHSCREEN_LEAN_TIMEOUT_SECONDS", "30")
    monkeypatch.setenv("FAITHSCREEN_LEAN_MAX_IN_FLIGHT", "2")
    settings = Settings()
    assert settings.lean.server_url == "http://kimi:na@lean:8000"
    assert (settings.lean.timeout_seconds, settings.lean.max_in_flight) == (30, 2)
    shown = str(settings.masked())
    assert "lean-secret" not in shown and ":na@" not in shown


def test_without_a_url_lean_is_off(clean_env: None) -> None:
    assert Settings().lean.server_url is None


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("FAITHSCREEN_LEAN_TIMEOUT_SECONDS", "0"),
        ("FAITHSCREEN_LEAN_TIMEOUT_SECONDS", "1.5"),
        ("FAITHSCREEN_LEAN_MAX_IN_FLIGHT", "0"),
    ],
)
def test_a_value_out_of_bounds_is_refused(
    clean_env: None, monkeypatch: pytest.MonkeyPatch, name: str, value: str
) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(ValidationError):
        Settings()
