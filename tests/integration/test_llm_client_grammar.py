"""The grammar reply format on the wire: the clients a process builds (app/runtime.py) send
each role's own grammar, in the field the provider's server reads it from, with every call;
a provider left at `text` gets nothing it does not expect. Requests go over a real socket
to the scripted provider, which records them as they came."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from app.cli.providers import probe_all
from app.contract.grammar import reply_grammar
from app.llm import LLMClient
from app.runtime import build_clients, build_judge_clients
from app.settings import ProviderSettings, Settings
from app.vocabulary import Role
from tests.support.scripted_openai import ScriptedOpenAI

MESSAGES = [{"role": "user", "content": "Is the formal statement faithful?"}]
GRAMMAR_KEYS = {"grammar", "structured_outputs", "guided_grammar", "ebnf"}


@pytest.fixture
def server() -> Iterator[ScriptedOpenAI]:
    with ScriptedOpenAI() as scripted:
        yield scripted


async def sent_by(client: LLMClient, server: ScriptedOpenAI) -> dict[str, Any]:
    async with client:
        result = await client.complete(MESSAGES)
    assert not result.failed, result.error
    body: dict[str, Any] = server.requests[-1].json
    return body


def provider(server: ScriptedOpenAI, **values: Any) -> dict[str, Any]:
    return {"base_url": server.base_url, "model": "m", "timeout_seconds": 60.0, **values}


@pytest.mark.usefixtures("clean_env")
async def test_each_role_s_client_sends_its_own_grammar(server: ScriptedOpenAI) -> None:
    grammar = provider(server, reply_format="grammar")
    settings = Settings(translator=grammar, judge=grammar)  # type: ignore[arg-type]
    clients = build_clients(settings)
    for role in Role:
        body = await sent_by(clients[role], server)
        assert body["grammar"] == reply_grammar(role)
        assert GRAMMAR_KEYS & set(body) == {"grammar"}
    assert reply_grammar(Role.TRANSLATOR) != reply_grammar(Role.JUDGE)


@pytest.mark.usefixtures("clean_env")
async def test_a_panel_judge_sends_the_judge_s_grammar_in_its_own_field(
    server: ScriptedOpenAI,
) -> None:
    settings = Settings(
        judges="a,b",
        panel_providers={
            "a": ProviderSettings(**provider(server)),
            "b": ProviderSettings(
                **provider(server, reply_format="grammar", grammar_field="structured_outputs")
            ),
        },
    )
    clients = build_judge_clients(settings)
    assert GRAMMAR_KEYS & set(await sent_by(clients["a"], server)) == set()
    body = await sent_by(clients["b"], server)
    assert body["structured_outputs"] == {"grammar": reply_grammar(Role.JUDGE)}
    assert GRAMMAR_KEYS & set(body) == {"structured_outputs"}


@pytest.mark.parametrize("field", ["grammar", "guided_grammar", "ebnf"])
async def test_the_grammar_goes_in_the_field_named(server: ScriptedOpenAI, field: str) -> None:
    settings = ProviderSettings(**provider(server, reply_format="grammar", grammar_field=field))
    body = await sent_by(LLMClient(settings, concurrency=1, role=Role.JUDGE), server)
    assert body[field] == reply_grammar(Role.JUDGE)
    assert GRAMMAR_KEYS & set(body) == {field}


async def test_text_sends_no_constraint(server: ScriptedOpenAI) -> None:
    settings = ProviderSettings(**provider(server))
    body = await sent_by(LLMClient(settings, concurrency=1, role=Role.TRANSLATOR), server)
    assert set(body) == {"model", "messages", "max_tokens", "temperature"}


def test_a_grammar_client_without_a_role_is_refused() -> None:
    # Which grammar to send depends on the role: guessing one would ask the judge for a
    # back-translation, or the translator for none.
    settings = ProviderSettings(base_url="http://127.0.0.1:1/v1", model="m", reply_format="grammar")
    with pytest.raises(ValueError, match="needs the role"):
        LLMClient(settings, concurrency=1)


@pytest.mark.usefixtures("clean_env")
async def test_providers_check_probes_each_role_under_its_grammar(server: ScriptedOpenAI) -> None:
    grammar = provider(server, reply_format="grammar")
    settings = Settings(translator=grammar, judge=grammar)  # type: ignore[arg-type]
    probes = await probe_all(settings)
    assert [p.result is not None and not p.result.failed for p in probes] == [True, True]
    sent = {request.json["grammar"] for request in server.requests}
    assert sent == {reply_grammar(Role.TRANSLATOR), reply_grammar(Role.JUDGE)}
