"""Reading a pairs file: JSON Lines, one screening request per line.

A line is a screening request as the API takes it (`informal`, `formal`, `header`?,
`external_id`?, `options`?, `replies`?), or a row of the shared pairs data set: a row with
an `id` and no `external_id` keeps `informal`, `formal` and `header`, takes its `id` as the
`external_id` and drops everything else (`source`, `repo`, `commit`, ...). A request never
has an `id`, so the two shapes cannot be confused.

Lines are numbered from 1, as an editor shows them. Blank lines are skipped but counted, so
an item's index (what the batch intake reports) and its line number can differ: `Survey`
keeps the line of every index. Bytes are decoded as UTF-8 per line (a byte-order mark is
dropped), split at b"\\n" only, as JSON Lines are.

`survey` checks every line against the request schema before anything is sent, so one
report names every malformed line; what only intake can judge (size limits, a provider
being configured) comes back from it by item index and is named by line the same way.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from pydantic import ValidationError

from app.intake.requests import ScreeningRequest

JSON_WHITESPACE = " \t\r\n"
SHARED_ROW_FIELDS = ("informal", "formal", "header")
# Upload blocks: large enough to keep per-chunk overhead low, small enough to stream.
BODY_BLOCK_BYTES = 64 * 1024
# Lines named per distinct problem; a problem shared by thousands of lines is one entry.
LINES_SHOWN = 10


class PairsFileError(Exception):
    """The file as a whole cannot be read (missing, a directory, no permission)."""


@dataclass(frozen=True, slots=True)
class PairLine:
    number: int
    item: dict[str, Any]
    wire: bytes  # the item as one application/x-ndjson line


@dataclass(frozen=True, slots=True)
class LineProblem:
    number: int | None  # None: about the batch as a whole
    message: str
    field: str = ""


@dataclass
class Survey:
    """One pass over the file before anything is sent."""

    digest: str = ""  # sha256 of the file's bytes
    line_numbers: list[int] = field(default_factory=list)  # item index -> line number
    problems: list[LineProblem] = field(default_factory=list)

    @property
    def total(self) -> int:
        return len(self.line_numbers)

    def line_of(self, index: object) -> int | None:
        """The line of the item at `index`; None when there is no such item."""
        if isinstance(index, int) and not isinstance(index, bool) and 0 <= index < self.total:
            return self.line_numbers[index]
        return None

    def intake_problems(self, details: Iterable[Mapping[str, Any]]) -> list[LineProblem]:
        """The batch intake's per-item errors (`index`, `field`, `message`), by line."""
        return [
            LineProblem(
                self.line_of(detail.get("index")),
                str(detail.get("message") or detail.get("code") or "invalid"),
                str(detail.get("field") or ""),
            )
            for detail in details
        ]


def survey(path: Path) -> Survey:
    """The digest, the line of every item, and every line that is not a valid request."""
    result = Survey()
    digest = hashlib.sha256()
    for number, raw in _raw_lines(path):
        digest.update(raw)
        line = _pair_line(number, raw)
        if isinstance(line, LineProblem):
            result.problems.append(line)
        elif line is not None:
            result.line_numbers.append(number)
            result.problems.extend(schema_problems(line))
    result.digest = digest.hexdigest()
    return result


def schema_problems(line: PairLine) -> list[LineProblem]:
    try:
        ScreeningRequest.model_validate(line.item)
    except ValidationError as error:
        return [
            LineProblem(line.number, e["msg"], ".".join(str(part) for part in e["loc"]))
            for e in error.errors(include_input=False)
        ]
    return []


def describe_problems(problems: Iterable[LineProblem]) -> list[str]:
    """`lines 3, 9: informal: Input should be a valid string`, one entry per distinct
    problem, in the order first seen."""
    groups: dict[tuple[str, str], list[int | None]] = {}
    for problem in problems:
        groups.setdefault((problem.field, problem.message), []).append(problem.number)
    return [f"{_where(lines)}: {_what(*key)}" for key, lines in groups.items()]


def _where(lines: list[int | None]) -> str:
    numbers = [str(n) for n in lines if n is not None]
    if not numbers:
        return "the batch"
    more = f" and {len(numbers) - LINES_SHOWN} more" if len(numbers) > LINES_SHOWN else ""
    return ("line " if len(numbers) == 1 else "lines ") + ", ".join(numbers[:LINES_SHOWN]) + more


def _what(field_name: str, message: str) -> str:
    return f"{field_name}: {message}" if field_name else message


def read_pairs(path: Path) -> Iterator[PairLine | LineProblem]:
    """Every non-blank line as a request object (shared rows mapped), or what is wrong."""
    for number, raw in _raw_lines(path):
        line = _pair_line(number, raw)
        if line is not None:
            yield line


def ndjson_body(path: Path) -> Iterator[bytes]:
    """The file as an application/x-ndjson body (shared rows mapped), in blocks.

    Call `survey` first: a line that has become unreadable since stops the upload.
    """
    block = bytearray()
    for line in read_pairs(path):
        if isinstance(line, LineProblem):
            raise PairsFileError(f"{path} changed while it was read (line {line.number})")
        block += line.wire
        if len(block) >= BODY_BLOCK_BYTES:
            yield bytes(block)
            block.clear()
    if block:
        yield bytes(block)


def request_fields(row: dict[str, Any]) -> dict[str, Any]:
    """A line's screening request: a shared-data row mapped, anything else as it is."""
    if "id" not in row or "external_id" in row:
        return row
    kept = {name: row[name] for name in SHARED_ROW_FIELDS if name in row}
    return kept | {"external_id": row["id"]}


def _raw_lines(path: Path) -> Iterator[tuple[int, bytes]]:
    with _open(path) as stream:
        # Iterating a binary stream splits at b"\n" only, as JSON Lines do.
        yield from enumerate(stream, start=1)


def _open(path: Path) -> BinaryIO:
    try:
        return path.open("rb")  # the caller's `with` closes it
    except OSError as error:
        raise PairsFileError(f"cannot read {path}: {error.strerror}") from error


def _pair_line(number: int, raw: bytes) -> PairLine | LineProblem | None:
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        return LineProblem(number, f"not valid UTF-8 at byte {error.start}")
    if not text.strip(JSON_WHITESPACE):
        return None
    try:
        row = json.loads(text)
    except json.JSONDecodeError as error:
        return LineProblem(number, f"not valid JSON ({error.msg} at column {error.colno})")
    except (ValueError, RecursionError):
        return LineProblem(number, "not valid JSON (nested too deeply)")
    if not isinstance(row, dict):
        return LineProblem(number, "expected a JSON object (a screening request)")
    item = request_fields(row)
    try:
        # NaN and Infinity are read (shared rows hold some in fields that are dropped)
        # but are not JSON: one left in the request is refused here, not sent.
        wire = json.dumps(item, ensure_ascii=True, allow_nan=False)
    except ValueError:
        return LineProblem(number, "NaN or Infinity is not a JSON value")
    # ASCII escapes keep a lone surrogate (a JSON "\ud800") sendable as valid JSON.
    return PairLine(number, item, wire.encode("ascii") + b"\n")
