"""What a chat completion request adds for the reply format its provider is set to.

`text` adds nothing. `grammar` adds the role's GBNF grammar (app/contract/grammar.py) in the
one field the provider's server reads it from (`grammar_field`): llama.cpp's `grammar`,
vLLM's `structured_outputs.grammar` (`guided_grammar` before 0.12), SGLang's `ebnf`. One
field only: a server that ignores an unknown field would also ignore a misnamed one, and
the reply would come back unconstrained (it is still read strictly, like any reply).
"""

from __future__ import annotations

from app.contract.grammar import reply_grammar
from app.settings import ProviderSettings
from app.vocabulary import Role


def reply_constraint(settings: ProviderSettings, role: Role | None) -> dict[str, object]:
    """The request fields that constrain `role`'s reply; ValueError for a format that
    cannot be asked for (a grammar needs the role: the translator's has three fields)."""
    if settings.reply_format == "text":
        return {}
    if settings.reply_format != "grammar":
        raise ValueError(f"reply format {settings.reply_format!r} is not built yet")
    if role is None:
        raise ValueError("the grammar reply format needs the role the client calls for")
    grammar = reply_grammar(role)
    if settings.grammar_field == "structured_outputs":
        return {"structured_outputs": {"grammar": grammar}}
    return {settings.grammar_field: grammar}
