"""The format retry: ask again after an unreadable, truncated or empty reply.

Fix format, never content. The retry repeats the original request and the reply format,
names the fault of form, and says the note concerns only the form. It never names a
verdict as wanted, never calls the earlier answer wrong, and never asks to reconsider.

The unreadable reply is quoted, fenced as data, when its form is the fault (missing,
invalid, conflicting, bare_cr, ambiguous), so the model can see what to repair. A truncated
reply is not quoted: it is long and incomplete, and the model is asked for a shorter reply
instead. An empty reply has nothing to quote.

The retry keeps the original two turns (system, user) and appends its note to the user
turn rather than adding turns: many chat templates of OpenAI-compatible servers reject
two user turns in a row, and an assistant turn would present the quoted reply as trusted.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from app.prompts.fence import fence_code
from app.prompts.messages import Message, reply_contract, system_prompt
from app.prompts.texts import template
from app.vocabulary import FORMAT_RETRY_STATUSES, ParseStatus, ReplyFormat, Role


@dataclass(frozen=True, slots=True)
class RetryNote:
    problem: str
    quote_reply: bool


# Explicit table with no catch-all; a test checks its keys equal FORMAT_RETRY_STATUSES.
RETRY_NOTES: Mapping[ParseStatus, RetryNote] = {
    ParseStatus.MISSING: RetryNote(
        "A required field was not found: each field must begin its own line with its name "
        "and a colon.",
        quote_reply=True,
    ),
    ParseStatus.INVALID: RetryNote(
        "Its VERDICT line did not hold exactly one of the allowed words.", quote_reply=True
    ),
    ParseStatus.CONFLICTING: RetryNote(
        "It gave more than one verdict, so it is not clear which one was meant.",
        quote_reply=True,
    ),
    ParseStatus.BARE_CR: RetryNote(
        "Its lines were separated by bare carriage returns; end every line with a newline.",
        quote_reply=True,
    ),
    ParseStatus.AMBIGUOUS: RetryNote(
        "Its lines and field names can be read in more than one way: a line was broken by "
        "a character other than a newline, or a field name held invisible or unusual "
        "characters. End every line with a newline, and write each field name in plain "
        "letters directly followed by a colon.",
        quote_reply=True,
    ),
    ParseStatus.TRUNCATED: RetryNote(
        "It was cut off at the length limit before it was complete. Keep this reply short: "
        "a few sentences per field at most.",
        quote_reply=False,
    ),
    ParseStatus.EMPTY: RetryNote("It was empty.", quote_reply=False),
}


# The same for the tool and json formats, in their words. The reply is never quoted: its
# fault may be in tool-call arguments the content does not hold, and a structured reply
# quoted back as data is easily taken for an example to copy.
STRUCTURED_RETRY_NOTES: Mapping[ParseStatus, RetryNote] = {
    ParseStatus.MISSING: RetryNote(
        "It did not give its answer in the form asked for, or left out a required field.",
        quote_reply=False,
    ),
    ParseStatus.INVALID: RetryNote(
        "It was not one JSON object with exactly the fields asked for, each a string, a key "
        "named once, and a verdict of exactly FAITHFUL, MISMATCH or UNCLEAR in capitals.",
        quote_reply=False,
    ),
    ParseStatus.CONFLICTING: RetryNote(
        "It gave more than one answer: more than one call, or text beside its answer.",
        quote_reply=False,
    ),
    ParseStatus.BARE_CR: RetryNote("It could not be read as asked.", quote_reply=False),
    ParseStatus.AMBIGUOUS: RetryNote("It could be read in more than one way.", quote_reply=False),
    ParseStatus.TRUNCATED: RetryNote(
        "It was cut off before it was complete. Keep this reply short: a few sentences per "
        "field at most.",
        quote_reply=False,
    ),
    ParseStatus.EMPTY: RetryNote("It was empty.", quote_reply=False),
}
_STRUCTURED = frozenset({ReplyFormat.TOOL, ReplyFormat.JSON})


def format_retry_messages(
    original: Sequence[Message], bad_reply: str, parse_status: ParseStatus
) -> list[Message]:
    """The role's original review messages, with a format note appended to the user turn.

    Pass the messages of the original review, not those of an earlier retry. Raises
    ValueError for a status no format retry may repair (`ok`, `provider_error`,
    `refused`) and for messages this package did not build.
    """
    if parse_status not in FORMAT_RETRY_STATUSES:
        raise ValueError(f"parse status {parse_status.value!r} is not repaired by a retry")
    role, reply_format = _role_of(original)
    notes = STRUCTURED_RETRY_NOTES if reply_format in _STRUCTURED else RETRY_NOTES
    note = _retry_note(role, reply_format, bad_reply, notes[parse_status])
    system, user = original
    return [system, {"role": "user", "content": user["content"] + "\n\n" + note}]


def _retry_note(role: Role, reply_format: ReplyFormat, bad_reply: str, note: RetryNote) -> str:
    previous = ""
    if note.quote_reply:
        code = fence_code([bad_reply])
        previous = "\n\n" + template("previous_reply.txt").format(code=code, reply=bad_reply)
    return template("format_retry.txt").format(
        problem=note.problem,
        previous_reply=previous,
        contract=reply_contract(role, reply_format),
    )


def _role_of(original: Sequence[Message]) -> tuple[Role, ReplyFormat]:
    """The role whose review `original` is, and the reply format it asks for, known from
    its (per role and format constant) system turn; a grammar review reads as `text`, whose
    words it shares."""
    roles = [message["role"] for message in original]
    if roles == ["system", "user"]:
        for role in Role:
            for reply_format in ReplyFormat:
                if original[0]["content"] == system_prompt(role, reply_format):
                    return role, reply_format
    raise ValueError("expected the (system, user) messages of a review built by app.prompts")
