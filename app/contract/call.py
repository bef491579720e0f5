"""The reading for one LLM call: what the call's ending says first, then the reply text.

Pure, like the parser. The order of the checks is part of the contract:

1. finish_reason `length` -> `truncated`, whatever the content says (a cut-off reply may
   still hold a complete-looking VERDICT line written before the end).
2. finish_reason `content_filter` -> `refused`, even with no content: the provider
   declined, which is not a format fault and is never re-asked.
3. no content, or whitespace only -> `empty`.
4. otherwise the reply contract (`parse_reply`).

In cases 1 and 2 the back-translation and issues are still read from whatever content
there is, so a person sees what the model wrote; the verdict is always `unclear`.
"""

from __future__ import annotations

from app.contract.parser import PARSER_VERSION, parse_reply
from app.contract.reading import Reading
from app.vocabulary import ParseStatus, Verdict

# Statuses that describe a call rather than a reply text: the only ones a reading
# without parsed content may carry.
CALL_STATUSES: frozenset[ParseStatus] = frozenset(
    {
        ParseStatus.TRUNCATED,
        ParseStatus.EMPTY,
        ParseStatus.PROVIDER_ERROR,
        ParseStatus.REFUSED,
    }
)

_FINISH_STATUSES = {"length": ParseStatus.TRUNCATED, "content_filter": ParseStatus.REFUSED}


def read_call(content: str | None, finish_reason: str | None) -> Reading:
    """The reading for one completed LLM call (see the module docstring for the order)."""
    finish_status = _FINISH_STATUSES.get(finish_reason or "")
    if finish_status is not None:
        return _unclear_with_fields(content or "", finish_status)
    if content is None or not content.strip():
        return failed_call_reading(ParseStatus.EMPTY)
    return parse_reply(content)


def failed_call_reading(status: ParseStatus) -> Reading:
    """A reading for a call that produced no usable content: verdict unclear, no fields.

    Raises ValueError for a status that describes a reply text (`ok`, `missing`, ...):
    those come only from `parse_reply`.
    """
    if status not in CALL_STATUSES:
        raise ValueError(f"parse status {status.value!r} describes a reply, not a call")
    return Reading(Verdict.UNCLEAR, status, None, None, PARSER_VERSION)


def _unclear_with_fields(content: str, status: ParseStatus) -> Reading:
    parsed = parse_reply(content)
    return Reading(
        verdict=Verdict.UNCLEAR,
        parse_status=status,
        back_translation=parsed.back_translation,
        issues=parsed.issues,
        parser_version=PARSER_VERSION,
    )
