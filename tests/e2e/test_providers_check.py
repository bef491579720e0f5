"""`faithscreen providers check` as a process of its own, against the scripted provider on
loopback, a closed port, a reply the contract cannot read, and no provider at all."""

from __future__ import annotations

import re

import pytest

from tests.e2e.test_cli_batch import faithscreen
from tests.support.scripted_openai import Reply, ScriptedOpenAI
from tests.support.serve_process import free_port, provider_env

pytestmark = pytest.mark.e2e


def block(stdout: str, role: str) -> dict[str, str]:
    """The role's lines, `question -> answer` (the heading under its role's name)."""
    found = re.search(rf"^{role}: (.*)\n((?:  .*\n)*)", stdout, re.MULTILINE)
    assert found, stdout
    lines = dict(line.strip().split(maxsplit=1) for line in found[2].splitlines())
    return {"heading": found[1], **lines}


def test_both_roles_answer_readably(scripted_openai: ScriptedOpenAI) -> None:
    done = faithscreen(provider_env(scripted_openai.base_url), "providers", "check")
    assert done.returncode == 0, done.stdout + done.stderr
    for role in ("translator", "judge"):
        found = block(done.stdout, role)
        assert found["heading"] == f"{role}-model at {scripted_openai.base_url}"
        assert found["reachable"] == "yes (HTTP 200)"
        assert found["answered"] == f"yes ({role}-model, finish stop)"
        assert re.fullmatch(r"\d+ ms", found["latency"]), found
        assert re.fullmatch(r"prompt \d+, completion \d+, total \d+", found["tokens"]), found
        assert found["readable"] == "yes (ok, verdict faithful)"
        assert "cause" not in found
    # One probe per role, sent as a review: the role's model and its contract prompt.
    requests = scripted_openai.requests
    assert sorted(r.model or "" for r in requests) == ["judge-model", "translator-model"]
    assert all("VERDICT" in r.text and "probe_add_zero" in r.text for r in requests)


def test_a_closed_port_fails_with_the_cause(scripted_openai: ScriptedOpenAI) -> None:
    closed = f"http://127.0.0.1:{free_port()}/v1"
    env = provider_env(
        scripted_openai.base_url,
        FAITHSCREEN_JUDGE_BASE_URL=closed,
        FAITHSCREEN_JUDGE_MAX_RETRIES="0",
    )
    done = faithscreen(env, "providers", "check")
    assert done.returncode == 1, done.stdout + done.stderr
    judge = block(done.stdout, "judge")
    assert judge["heading"] == f"judge-model at {closed}"
    assert (judge["reachable"], judge["answered"], judge["readable"]) == ("no", "no", "no")
    assert judge["cause"].startswith("connection error: ConnectError"), judge
    assert block(done.stdout, "translator")["readable"] == "yes (ok, verdict faithful)"
    assert done.stderr.strip() == "faithscreen providers check: failed for judge"


def test_an_unreadable_reply_fails_with_its_parse_status(scripted_openai: ScriptedOpenAI) -> None:
    scripted_openai.script(model="translator-model", steps=[Reply("Looks right to me.")])
    done = faithscreen(provider_env(scripted_openai.base_url), "providers", "check")
    assert done.returncode == 1, done.stdout + done.stderr
    translator = block(done.stdout, "translator")
    assert translator["answered"] == "yes (translator-model, finish stop)"
    assert translator["readable"] == "no (missing)"
    assert (
        translator["cause"] == "unreadable (missing): The translator's reply had no VERDICT field."
    )


def test_a_role_not_configured_names_its_variables(scripted_openai: ScriptedOpenAI) -> None:
    env = provider_env(scripted_openai.base_url)
    del env["FAITHSCREEN_JUDGE_MODEL"]
    done = faithscreen(env, "providers", "check")
    assert done.returncode == 1
    assert block(done.stdout, "judge") == {
        "heading": "not configured",
        "cause": "not configured: set FAITHSCREEN_JUDGE_MODEL",
    }
    assert len(scripted_openai.requests) == 1  # the translator's probe alone
