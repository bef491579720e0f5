"""The elaborated goal beside the source: what a Lean server said the statement means.

Pure. When Lean elaborated a pair (app/lean), the translator's and the judges' user turn
carries the goal it reported for the statement's `sorry` right after the Lean statement,
fenced like every statement (`fence`), so a coercion (`↑n / 2`) or a truncating ℕ division
is visible to the model. The messages differ from the ones without it, so their version
does too: the version they were built under plus GOAL_PROMPT_SUFFIX. Without a goal the
messages and their version are exactly as before.
"""

from __future__ import annotations

from collections.abc import Sequence

from app.prompts.fence import fence_code
from app.prompts.messages import Message
from app.prompts.texts import template
from app.vocabulary import Pair

GOAL_PROMPT_SUFFIX = "+lean-goal-1"


def goal_prompt_version(version: str | None) -> str | None:
    return None if version is None else version + GOAL_PROMPT_SUFFIX


def with_elaborated_goal(messages: Sequence[Message], pair: Pair, goal: str) -> list[Message]:
    """`messages` (a review, a format retry or a confirmation of `pair`) with the fenced
    goal inserted after the Lean statement's closing tag in the user turn. Raises
    ValueError for messages that hold no such tag (not built by this package for `pair`)."""
    closing = f"</lean_statement_{fence_code([pair.informal, pair.header, pair.formal])}>"
    block = template("elaborated_goal.txt").format(
        code=fence_code([pair.informal, pair.header, pair.formal, goal]), goal=goal
    )
    out = [Message(role=m["role"], content=m["content"]) for m in messages]
    for message in out:
        # The first occurrence is the fence's own: no statement holds the code.
        at = message["content"].find(closing) if message["role"] == "user" else -1
        if at >= 0:
            end = at + len(closing)
            message["content"] = f"{message['content'][:end]}\n\n{block}{message['content'][end:]}"
            return out
    raise ValueError("no Lean statement fenced for this pair in the messages")
