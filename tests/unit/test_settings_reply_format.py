"""FAITHSCREEN_<ROLE>_REPLY_FORMAT and FAITHSCREEN_JUDGE_<NAME>_REPLY_FORMAT: `text` (the
default), `grammar`, `tool` and `json` are read per role and per panel judge; anything else
is refused naming the variable."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

import app.cli.config  # noqa: F401 -- registers the command on `cli`
from app.cli.root import cli
from app.settings import Settings
from app.vocabulary import Role

pytestmark = pytest.mark.usefixtures("clean_env")

PANEL = {
    "FAITHSCREEN_JUDGES": "a,b",
    "FAITHSCREEN_JUDGE_A_BASE_URL": "http://127.0.0.1:8080/v1",
    "FAITHSCREEN_JUDGE_A_MODEL": "m",
    "FAITHSCREEN_JUDGE_B_BASE_URL": "http://127.0.0.1:8000/v1",
    "FAITHSCREEN_JUDGE_B_MODEL": "m",
}


def settings_of(monkeypatch: pytest.MonkeyPatch, env: dict[str, str]) -> Settings:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return Settings()


def test_text_is_the_default_for_every_role_and_judge(monkeypatch: pytest.MonkeyPatch) -> None:
    settings = settings_of(monkeypatch, PANEL)
    providers = [settings.provider(role) for role in Role] + [
        settings.judge_provider(name) for name in settings.panel
    ]
    assert {(p.reply_format, p.grammar_field) for p in providers} == {("text", "grammar")}


def test_grammar_is_read_per_role_and_per_panel_judge(monkeypatch: pytest.MonkeyPatch) -> None:
    env = PANEL | {
        "FAITHSCREEN_TRANSLATOR_REPLY_FORMAT": "grammar",
        "FAITHSCREEN_JUDGE_B_REPLY_FORMAT": "grammar",
        "FAITHSCREEN_JUDGE_B_GRAMMAR_FIELD": "structured_outputs",
    }
    settings = settings_of(monkeypatch, env)
    assert settings.translator.reply_format == "grammar"
    assert settings.judge_provider("a").reply_format == "text"
    b = settings.judge_provider("b")
    assert (b.reply_format, b.grammar_field) == ("grammar", "structured_outputs")


def run(env: dict[str, str]) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["config"], env=env)
    return result.exit_code, result.output


@pytest.mark.parametrize("value", ["tool", "json"])
def test_tool_and_json_are_read_per_role_and_per_panel_judge(
    monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    env = PANEL | {
        "FAITHSCREEN_TRANSLATOR_REPLY_FORMAT": value,
        "FAITHSCREEN_JUDGE_A_REPLY_FORMAT": value,
    }
    settings = settings_of(monkeypatch, env)
    assert settings.translator.reply_format == value
    assert settings.judge_provider("a").reply_format == value
    assert settings.judge_provider("b").reply_format == "text"
    code, output = run(env)
    assert code == 0, output


def test_an_unknown_format_is_refused_naming_the_variable() -> None:
    code, output = run({"FAITHSCREEN_JUDGE_REPLY_FORMAT": "gbnf"})
    assert code == 2
    assert output.startswith("faithscreen: FAITHSCREEN_JUDGE_REPLY_FORMAT='gbnf' is not accepted")


@pytest.mark.parametrize("name", ["reply", "grammar"])
def test_a_judge_may_not_be_named_after_the_new_settings(name: str) -> None:
    # FAITHSCREEN_JUDGE_REPLY_FORMAT is the single judge's setting, not judge `reply`'s.
    code, output = run({"FAITHSCREEN_JUDGES": f"a,{name}"})
    assert code == 2 and f"judge {name!r} must match" in output, output
