"""What `faithscreen local-model start` prints: settings the service reads, with the values
that fit a small model on a one-slot server (a misspelt name would be silently ignored):
the grammar reply format with caps no reply in it can reach, and verdicts marked not
evidential."""

from __future__ import annotations

import pytest

from app.contract.grammar import worst_case_tokens
from app.local_model.schemas import LocalServer
from app.settings import Settings
from app.vocabulary import Role


@pytest.mark.usefixtures("clean_env")
@pytest.mark.parametrize("slots", [1, 3])
def test_every_printed_line_is_a_setting_the_service_reads(
    monkeypatch: pytest.MonkeyPatch, slots: int
) -> None:
    server = LocalServer(pid=1, port=8091, model="smollm2-135m-instruct", slots=slots)
    for name, value in server.environment().items():
        monkeypatch.setenv(name, value)
    settings = Settings()
    for role in Role:
        provider = settings.provider(role)
        assert (provider.base_url, provider.model) == (
            "http://127.0.0.1:8091/v1",
            "smollm2-135m-instruct",
        )
        # The caps fit the longest reply the role's grammar admits: none can be cut.
        cap = worst_case_tokens(role)
        assert (provider.max_tokens, provider.max_tokens_ceiling) == (cap, cap)
        assert provider.reply_format == "grammar"
        # The model answers at chance: its FAITHFUL must never pass a pair.
        assert provider.evidential is False
    assert (settings.llm_concurrency, settings.format_retries) == (slots, 1)
    assert settings.missing_providers() == []


def test_a_state_file_written_before_slots_were_kept_reads_as_one_slot() -> None:
    server = LocalServer.model_validate_json('{"pid": 1, "port": 8091, "model": "m"}')
    assert server.environment()["FAITHSCREEN_LLM_CONCURRENCY"] == "1"
