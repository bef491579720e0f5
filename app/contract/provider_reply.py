"""What a provider's reply holds for the readers: its content, its finish reason and its
tool calls, as plain values. Pure."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One entry of `choices[0].message.tool_calls`. `name` is the function's name and
    `arguments` its arguments, byte for byte, each None when absent or not a string (or
    when the entry is not a function call): the reader then finds the call `invalid`."""

    name: str | None
    arguments: str | None


@dataclass(frozen=True, slots=True)
class ProviderReply:
    content: str | None
    finish_reason: str | None
    tool_calls: tuple[ToolCall, ...] = ()
