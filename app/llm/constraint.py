"""What a chat completion request adds for the reply format its provider is set to.

`text` adds nothing. `grammar` adds the role's GBNF grammar (app/contract/grammar.py) in the
one field the provider's server reads it from (`grammar_field`): llama.cpp's `grammar`,
vLLM's `structured_outputs.grammar` (`guided_grammar` before 0.12), SGLang's `ebnf`. One
field only: a server that ignores an unknown field would also ignore a misnamed one, and
the reply would come back unconstrained (it is still read strictly, like any reply).

`tool` adds the OpenAI chat `tools` with the one function `submit_review`, whose parameters
are the role's reply schema (app/contract/reply_schema.py), `tool_choice: "required"`, and
`parallel_tool_calls: false`. With one function offered, `"required"` forces exactly that
function, as the object form naming it does on OpenAI; the string is what llama.cpp's
`llama-server` reads (it ignores the object form, logs a type error and does not force the
call), and vLLM and OpenAI read it too. `json` adds `response_format` of type `json_schema` with the
same schema, `strict: true`. Either way the reply is read strictly by its format's reader
(app/contract/structured.py): a server that ignores the fields sends a reply that reader
finds unreadable, never one it reads leniently.
"""

from __future__ import annotations

from typing import Any

from app.contract.grammar import reply_grammar
from app.contract.reply_schema import TOOL_NAME, reply_schema
from app.settings import ProviderSettings
from app.vocabulary import Role

_TOOL_DESCRIPTION = "Submit your review of the pair: every field is required."


def reply_constraint(settings: ProviderSettings, role: Role | None) -> dict[str, object]:
    """The request fields that constrain `role`'s reply; ValueError for a format that
    needs the role and has none (a grammar or a schema: the translator's has three
    fields, the judge's two)."""
    if settings.reply_format == "text":
        return {}
    if role is None:
        raise ValueError(
            f"the {settings.reply_format} reply format needs the role the client calls for"
        )
    if settings.reply_format == "tool":
        return tool_request(role)
    if settings.reply_format == "json":
        return json_request(role)
    grammar = reply_grammar(role)
    if settings.grammar_field == "structured_outputs":
        return {"structured_outputs": {"grammar": grammar}}
    return {settings.grammar_field: grammar}


def tool_request(role: Role) -> dict[str, object]:
    """The forced `submit_review` tool call, as the OpenAI chat API asks for one."""
    function: dict[str, Any] = {
        "name": TOOL_NAME,
        "description": _TOOL_DESCRIPTION,
        "parameters": reply_schema(role),
        "strict": True,
    }
    return {
        "tools": [{"type": "function", "function": function}],
        # The string form: with one function offered it forces that one (module docstring).
        "tool_choice": "required",
        "parallel_tool_calls": False,
    }


def json_request(role: Role) -> dict[str, object]:
    """A JSON-schema response format, as the OpenAI chat API asks for one."""
    schema = {"name": TOOL_NAME, "strict": True, "schema": reply_schema(role)}
    return {"response_format": {"type": "json_schema", "json_schema": schema}}
