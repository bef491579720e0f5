"""The `tool` and `json` reply formats: the one JSON object each role answers with.

Pure: plain values out. The same object either way: the arguments of a forced tool call
`submit_review` (format `tool`), or the reply content under a JSON-schema response format
(format `json`). Its fields are the text contract's, in its order: the translator's
`back_translation`, `verdict`, `issues`; the judge's `verdict`, `issues` (the judge is not
asked to back-translate, as in the text contract). `verdict` is one of the three upper-case
words, exactly. Strict: every field required, no other field allowed.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from app.vocabulary import Role, Verdict

TOOL_NAME = "submit_review"
# The verdict words exactly as the schema's enum has them: the readers compare case and all.
VERDICT_WORDS: Mapping[str, Verdict] = MappingProxyType(
    {verdict.value.upper(): verdict for verdict in Verdict}
)
BACK_TRANSLATION = "back_translation"
VERDICT = "verdict"
ISSUES = "issues"

_FIELDS: Mapping[Role, tuple[str, ...]] = MappingProxyType(
    {
        Role.TRANSLATOR: (BACK_TRANSLATION, VERDICT, ISSUES),
        Role.JUDGE: (VERDICT, ISSUES),
    }
)
_DESCRIPTIONS: Mapping[str, str] = MappingProxyType(
    {
        BACK_TRANSLATION: "The Lean statement in plain English, read from the Lean text alone.",
        VERDICT: "Exactly one of FAITHFUL, MISMATCH or UNCLEAR.",
        ISSUES: "Each difference found, briefly; or none.",
    }
)


def reply_fields(role: Role) -> tuple[str, ...]:
    """The fields `role`'s object holds, every one required, in the contract's order."""
    return _FIELDS[role]


def reply_schema(role: Role) -> dict[str, Any]:
    """The JSON schema of `role`'s object (a fresh dict: a caller may embed it)."""
    properties: dict[str, Any] = {}
    for name in reply_fields(role):
        kind: dict[str, Any] = {"type": "string", "description": _DESCRIPTIONS[name]}
        if name == VERDICT:
            kind["enum"] = list(VERDICT_WORDS)
        properties[name] = kind
    return {
        "type": "object",
        "properties": properties,
        "required": list(reply_fields(role)),
        "additionalProperties": False,
    }
