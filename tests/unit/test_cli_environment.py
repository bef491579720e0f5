"""The FAITHSCREEN_* names a command knows, and how a refused value is told."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from app.cli.environment import (
    accepted,
    bad_setting_lines,
    known_variables,
    unknown_variable_warnings,
)
from app.settings import ProviderSettings, Settings


def test_every_setting_and_every_role_field_is_a_known_name() -> None:
    known = known_variables()
    for name in Settings.model_fields:
        assert f"FAITHSCREEN_{name.upper()}" in known
    for role in ("TRANSLATOR", "JUDGE"):
        for name in ProviderSettings.model_fields:
            assert f"FAITHSCREEN_{role}_{name.upper()}" in known
    assert {"FAITHSCREEN_API_KEY", "FAITHSCREEN_MIGRATIONS_DIR"} <= known


def test_unknown_names_are_warned_about_and_test_names_are_not() -> None:
    environ = {
        "FAITHSCREEN_TEST_POSTGRES_URL": "x",
        "FAITHSCREEN_TEST_ANYTHING": "x",
        "faithscreen_judge_model": "x",  # read case-insensitively, as the settings do
        "PATH": "/bin",
        "FAITHSCREEN_JUGDE_MODEL": "x",
        "FAITHSCREEN_NOTHING_LIKE_IT_AT_ALL_QQQ": "x",
    }
    assert unknown_variable_warnings(environ) == [
        "FAITHSCREEN_JUGDE_MODEL is not a FaithScreen setting and is ignored; "
        "did you mean FAITHSCREEN_JUDGE_MODEL?",
        "FAITHSCREEN_NOTHING_LIKE_IT_AT_ALL_QQQ is not a FaithScreen setting and is ignored",
    ]


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("confirmations", "a whole number from 0 to 5"),
        ("max_batch_items", "a whole number of at least 1"),
        ("job_lease_seconds", "a number above 0"),
        ("auth", "one of on, off"),
        ("database_url", "text"),
    ],
)
def test_what_a_setting_takes(name: str, expected: str) -> None:
    assert accepted(Settings.model_fields[name]) == expected


def test_a_refused_value_names_its_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAITHSCREEN_JUDGE_MAX_RETRIES", "11")
    with pytest.raises(ValidationError) as refused:
        Settings()
    assert bad_setting_lines(refused.value) == [
        "FAITHSCREEN_JUDGE_MAX_RETRIES='11' is not accepted: it takes a whole number from 0 to 10"
    ]
