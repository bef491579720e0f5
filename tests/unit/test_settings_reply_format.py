"""FAITHSCREEN_<ROLE>_REPLY_FORMAT and FAITHSCREEN_JUDGE_<NAME>_REPLY_FORMAT: `text` (the
default) and `grammar` are read; `tool` and `json` are named but refused, in one line saying
they are not built yet, rather than silently asked for as free text."""

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
@pytest.mark.parametrize(
    "variable",
    [
        "FAITHSCREEN_TRANSLATOR_REPLY_FORMAT",
        "FAITHSCREEN_JUDGE_REPLY_FORMAT",
        "FAITHSCREEN_JUDGE_B_REPLY_FORMAT",
    ],
)
def test_a_format_not_built_yet_is_refused_in_one_line(variable: str, value: str) -> None:
    panel = PANEL if "_B_" in variable else {}  # with a panel the single judge's is unread
    code, output = run(panel | {variable: value})
    assert code == 2
    assert output.strip() == (
        f"faithscreen: {variable}={value!r} is not accepted: the tool and json reply "
        "formats are not built yet; it takes text or grammar"
    ), output


def test_an_unknown_format_is_refused_naming_the_variable() -> None:
    code, output = run({"FAITHSCREEN_JUDGE_REPLY_FORMAT": "gbnf"})
    assert code == 2
    assert output.startswith("faithscreen: FAITHSCREEN_JUDGE_REPLY_FORMAT='gbnf' is not accepted")


@pytest.mark.parametrize("name", ["reply", "grammar"])
def test_a_judge_may_not_be_named_after_the_new_settings(name: str) -> None:
    # FAITHSCREEN_JUDGE_REPLY_FORMAT is the single judge's setting, not judge `reply`'s.
    code, output = run({"FAITHSCREEN_JUDGES": f"a,{name}"})
    assert code == 2 and f"judge {name!r} must match" in output, output
