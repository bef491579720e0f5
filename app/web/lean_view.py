"""How the item page shows a screening's Lean check: each error marked at its line and
column in the Lean box (header or statement, as the snippet sent put them), the elaborated
goal under the statement, the status and the messages. Pure: it reads the API's check."""

from __future__ import annotations

from dataclasses import dataclass, field

from app.api.lean_schemas import LeanCheckOut, LeanMessageOut
from app.web.marked_text import Mark

# Marks numbered past any evidence finding's, so the page's jump buttons tell them apart.
FIRST_MARK = 1001
TO_LINE_END = 10**9


@dataclass(frozen=True, slots=True)
class LeanMessageShown:
    message: LeanMessageOut
    # `formal, line 1, columns 8-9` (1-based for people); None when it lies past the text.
    where: str | None
    # Its mark's number on the page when it is marked (errors only), else None.
    index: int | None


@dataclass(frozen=True, slots=True)
class LeanShown:
    check: LeanCheckOut
    messages: list[LeanMessageShown]
    marks: dict[str, list[Mark]] = field(default_factory=dict)


def lean_shown(check: LeanCheckOut | None, header: str) -> LeanShown | None:
    if check is None:
        return None
    header_lines = header.count("\n") + 1 if header else 0
    shown: list[LeanMessageShown] = []
    marks: dict[str, list[Mark]] = {"header": [], "formal": []}
    for message in check.messages:
        place = _place(message.line, header_lines)
        index = None
        if message.severity == "error" and place is not None:
            index = FIRST_MARK + len(marks["header"]) + len(marks["formal"])
            marks[place[0]].append(_mark(message, place[1], index))
        shown.append(LeanMessageShown(message, _where(message, place), index))
    return LeanShown(check, shown, marks)


def _place(line: int, header_lines: int) -> tuple[str, int] | None:
    """(field, line in it) of a line of the snippet sent: header, newline, formal."""
    if line < 1:
        return None
    if line <= header_lines:
        return "header", line
    return "formal", line - header_lines


def _mark(message: LeanMessageOut, line: int, index: int) -> Mark:
    same_line = message.end_line is not None and message.end_line == message.line
    end = message.end_column if same_line and message.end_column is not None else TO_LINE_END
    first_line = message.data.split("\n", 1)[0]
    return Mark(line, message.column, max(end, message.column + 1), index,
                f"Lean {message.severity}: {first_line}", "severity-flag lean-error")  # fmt: skip


def _where(message: LeanMessageOut, place: tuple[str, int] | None) -> str | None:
    if place is None:
        return None
    spot = f"{place[0]}, line {place[1]}, column {message.column + 1}"
    same_line = message.end_line == message.line and message.end_column is not None
    if same_line and message.end_column is not None and message.end_column > message.column + 1:
        spot = f"{place[0]}, line {place[1]}, columns {message.column + 1}-{message.end_column}"
    return spot
