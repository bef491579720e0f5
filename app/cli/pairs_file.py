"""Reading a pairs file: JSON Lines, one screening request per line.

Three shapes of line, told apart by their fields:

- a row of `GET /v1/decisions/export` has a `decision_id`. It becomes the request
  {`informal`, `formal`, `header`, `external_id`, `label`: its `decision`}. A row that is
  `superseded` or `withdrawn` (true), or whose decision is `unsure`, is skipped: no item,
  no error. Of several current decisions on one pair (the same informal, formal and
  header), the last in the file is the pair's final one; the earlier ones are skipped.
- any other row is a screening request. It keeps every field the request schema knows
  (`informal`, `formal`, `header`, `external_id`, `options`, `replies`, `label`, `tags`);
  its `id` becomes the `external_id` when it has none (a shared data set's rows), and is
  ignored otherwise; its `source` becomes the tag `source:<source>` (every character
  outside the tag alphabet replaced by `-`, cut to 64 characters; added to its own tags
  unless already there or they are already 16). The rest (`why`, `repo`, `commit`, ...)
  is ignored, and `Survey.ignored` counts the rows that had each such field.

Lines are numbered from 1, as an editor shows them. Blank lines and skipped lines are
counted, so an item's index (what the batch intake reports) and its line number can differ:
`Survey` keeps the line of every index, and the lines it skipped with why. Whether a
decision is its pair's final one takes the whole file to know, so the upload body is read
with the survey's `skipped` and checked against its `line_numbers`: both see the same
items. Bytes are decoded as UTF-8 per line (a byte-order mark is dropped), split at b"\\n"
only, as JSON Lines are.

`survey` checks every line against the request schema before anything is sent, so one
report names every malformed line; what only intake can judge (size limits, a provider
being configured) comes back from it by item index and is named by line the same way.
With `skip_invalid` (`--skip-invalid`) the lines with problems are skipped as well, so the
items sent and `line_numbers` still agree line for line.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from pydantic import ValidationError

from app.intake.requests import (
    MAX_TAG_LENGTH,
    MAX_TAGS,
    TAG_ALPHABET,
    ScreeningRequest,
    plain_message,
)
from app.vocabulary import LABELS

JSON_WHITESPACE = " \t\r\n"
REQUEST_FIELDS = tuple(ScreeningRequest.model_fields)
# Read from a row though no request field: `id` (as external_id) and `source` (as a tag).
MAPPED_FIELDS = ("id", "source")
EXPORT_ROW_FIELDS = ("informal", "formal", "header", "external_id")
UNSURE = "unsure"  # a decision saying the reviewer could not tell
# Outside the alphabet of app.intake.requests.TAG_PATTERN (a unit test holds them together).
NOT_TAG_CHARACTER = re.compile(f"[^{TAG_ALPHABET}]")
# Why a line is no item (Survey.skipped).
SKIP_SUPERSEDED = "superseded"
SKIP_WITHDRAWN = "withdrawn"
SKIP_UNSURE = UNSURE
SKIP_NOT_FINAL = "a later decision on the same pair"
SKIP_INVALID = "invalid"  # left out by `survey(..., skip_invalid=True)`; see Survey.left_out
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
    # A decision (an export row): a digest of the pair it decides, None for other lines.
    decided_pair: bytes | None = None
    ignored: tuple[str, ...] = ()  # the row's fields no request has, left out


@dataclass(frozen=True, slots=True)
class LineProblem:
    number: int | None  # None: about the batch as a whole
    message: str
    field: str = ""
    external_id: str | None = None  # the line's, when it could be read (results name it)


@dataclass(frozen=True, slots=True)
class SkippedLine:
    """An export row that is no item: superseded, withdrawn or unsure."""

    number: int
    why: str


@dataclass
class Survey:
    """One pass over the file before anything is sent."""

    digest: str = ""  # sha256 of the file's bytes
    line_numbers: list[int] = field(default_factory=list)  # item index -> line number
    problems: list[LineProblem] = field(default_factory=list)
    skipped: dict[int, str] = field(default_factory=dict)  # line number -> why no item
    ignored: dict[str, int] = field(default_factory=dict)  # field -> rows it was left out of
    left_out: list[LineProblem] = field(default_factory=list)  # problems of lines left out
    # The lines of items with no supplied replies: each needs a provider to be screened.
    without_replies: list[int] = field(default_factory=list)

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

    def add(self, line: PairLine | LineProblem | SkippedLine) -> None:
        if isinstance(line, LineProblem):
            self.problems.append(line)
        elif isinstance(line, SkippedLine):
            self.skipped[line.number] = line.why
        else:
            self.line_numbers.append(line.number)
            self.problems.extend(schema_problems(line))
            if line.item.get("replies") is None:
                self.without_replies.append(line.number)
            for name in line.ignored:
                self.ignored[name] = self.ignored.get(name, 0) + 1

    def drop_skipped_items(self) -> None:
        """Decisions a later line showed not to be final are no items after all."""
        self.line_numbers = [n for n in self.line_numbers if n not in self.skipped]
        self.without_replies = [n for n in self.without_replies if n not in self.skipped]
        self.problems = [p for p in self.problems if p.number not in self.skipped]

    def leave_out_invalid(self) -> None:
        """Every line with a problem becomes a skipped line: no item, not sent, not read,
        so `line_numbers` holds exactly the lines sent. Its problems move to `left_out`."""
        invalid = {problem.number for problem in self.problems if problem.number is not None}
        self.skipped |= dict.fromkeys(invalid, SKIP_INVALID)
        self.left_out, self.problems = self.problems, []
        self.drop_skipped_items()

    @property
    def left_out_lines(self) -> int:
        return len({problem.number for problem in self.left_out})


def survey(path: Path, *, skip_invalid: bool = False) -> Survey:
    """The digest, the line of every item, every line that is not a valid request, and
    every line skipped with why. With `skip_invalid`, the invalid lines are skipped too
    (`Survey.leave_out_invalid`): what is wrong with them is in `left_out`."""
    result = Survey()
    digest = hashlib.sha256()
    latest: dict[bytes, int] = {}  # a decided pair -> the line of its latest decision
    for number, raw in _raw_lines(path):
        digest.update(raw)
        line = _pair_line(number, raw)
        if isinstance(line, PairLine) and (earlier := _replaced(latest, line)) is not None:
            result.skipped[earlier] = SKIP_NOT_FINAL
        if line is not None:
            result.add(line)
    result.drop_skipped_items()
    if skip_invalid:
        result.leave_out_invalid()
    result.digest = digest.hexdigest()
    return result


def _replaced(latest: dict[bytes, int], line: PairLine) -> int | None:
    """The line of the decision on the same pair that `line`, a later one, replaces."""
    if line.decided_pair is None:
        return None
    earlier = latest.get(line.decided_pair)
    latest[line.decided_pair] = line.number
    return earlier


def schema_problems(line: PairLine) -> list[LineProblem]:
    try:
        ScreeningRequest.model_validate(line.item)
    except ValidationError as error:
        external_id = line.item.get("external_id")
        named = external_id if isinstance(external_id, str) else None
        return [
            LineProblem(
                line.number, plain_message(e), ".".join(str(part) for part in e["loc"]), named
            )
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


def describe_left_out(found: Survey) -> str | None:
    """`left out 2 invalid lines:` and `describe_problems` of them, one a line; None when
    no line was left out."""
    if not found.left_out:
        return None
    count = found.left_out_lines
    listing = "".join(f"\n  {entry}" for entry in describe_problems(found.left_out))
    return f"left out {count} invalid line{'' if count == 1 else 's'}:{listing}"


def _where(lines: list[int | None]) -> str:
    numbers = [str(n) for n in lines if n is not None]
    if not numbers:
        return "the batch"
    more = f" and {len(numbers) - LINES_SHOWN} more" if len(numbers) > LINES_SHOWN else ""
    return ("line " if len(numbers) == 1 else "lines ") + ", ".join(numbers[:LINES_SHOWN]) + more


def line_error(problems: Iterable[LineProblem]) -> str:
    """What is wrong with one line, every problem of it: `formal: Field required`."""
    return "; ".join(_what(problem.field, problem.message) for problem in problems)


def _what(field_name: str, message: str) -> str:
    return f"{field_name}: {message}" if field_name else message


def read_pairs(path: Path, found: Survey | None = None) -> Iterator[PairLine | LineProblem]:
    """Every line that is an item as a request object (other shapes mapped), or what is
    wrong with it. The lines `found` (`survey(path)`) skipped are left out; without it the
    file is surveyed first, as only the whole file says which decisions are final."""
    skipped = (found if found is not None else survey(path)).skipped
    for number, raw in _raw_lines(path):
        if number in skipped:
            continue
        line = _pair_line(number, raw)
        if isinstance(line, PairLine | LineProblem):
            yield line


def ndjson_body(path: Path, found: Survey | None = None) -> Iterator[bytes]:
    """The file's items as an application/x-ndjson body, in blocks: the items of `found`
    (`survey(path)`, made here when not given), read again from their lines. A file that
    has changed since the survey stops the upload, at the latest before its last block."""
    found = found if found is not None else survey(path)
    block = bytearray()
    for wire in _surveyed_items(path, found):
        block += wire
        if len(block) >= BODY_BLOCK_BYTES:
            yield bytes(block)
            block.clear()
    if block:
        yield bytes(block)


def _surveyed_items(path: Path, found: Survey) -> Iterator[bytes]:
    """The wire line of every item `found` counted, from the file as it is now;
    PairsFileError where the two no longer agree (the bytes are compared at the end)."""
    digest = hashlib.sha256()
    expected = iter(found.line_numbers)
    for number, raw in _raw_lines(path):
        digest.update(raw)
        line = None if number in found.skipped else _pair_line(number, raw)
        if line is None:
            continue
        if not isinstance(line, PairLine) or number != next(expected, None):
            raise _changed(path, number)
        yield line.wire
    missing = next(expected, None)
    if missing is not None or digest.hexdigest() != found.digest:
        raise _changed(path, missing)


def _changed(path: Path, number: int | None) -> PairsFileError:
    where = f" (line {number})" if number is not None else ""
    return PairsFileError(f"{path} changed while it was read{where}")


def request_fields(row: dict[str, Any]) -> dict[str, Any]:
    """A line's screening request: an export row or any other row mapped as the module
    docstring says. (Whether an export row is an item at all is `skipped_row`'s to say.)"""
    if is_export_row(row):
        kept = {name: row[name] for name in EXPORT_ROW_FIELDS if name in row}
        return kept | {"label": row.get("decision")}
    kept = {name: row[name] for name in REQUEST_FIELDS if name in row}
    if "id" in row and "external_id" not in row:
        kept["external_id"] = row["id"]
    if "source" in row:
        tags = with_source_tag(kept.get("tags", []), row["source"])
        kept |= {"tags": tags} if tags or "tags" in kept else {}
    return kept


def ignored_fields(row: Mapping[str, Any]) -> tuple[str, ...]:
    """The fields of a (non-export) row that `request_fields` leaves out."""
    if is_export_row(row):
        return ()
    ignored = [n for n in row if n not in REQUEST_FIELDS and n not in MAPPED_FIELDS]
    if "id" in row and "external_id" in row:
        ignored.insert(0, "id")
    return tuple(ignored)


def describe_ignored(ignored: Mapping[str, int]) -> str | None:
    """`ignored fields no request has: why (3 rows), repo (1 row)`, or None."""
    if not ignored:
        return None
    counts = ", ".join(f"{n} ({c} row{'' if c == 1 else 's'})" for n, c in ignored.items())
    return f"ignored fields no screening request has: {counts}"


def is_export_row(row: Mapping[str, Any]) -> bool:
    return "decision_id" in row


def source_tag(source: str) -> str:
    """`source:<source>` with every character outside the tag alphabet made `-`, cut to
    the longest tag."""
    return ("source:" + NOT_TAG_CHARACTER.sub("-", source))[:MAX_TAG_LENGTH]


def with_source_tag(tags: object, source: object) -> object:
    """`tags` with the source's tag added. Left as they are when there is no source, when
    they are not a list (the schema then names them), when the tag is there already, or
    when they are already as many as a request may carry: the row's own tags come first."""
    if not isinstance(source, str) or not source or not isinstance(tags, list):
        return tags
    tag = source_tag(source)
    if tag in tags or len(tags) >= MAX_TAGS:
        return tags
    return [*tags, tag]


def skipped_row(number: int, row: Mapping[str, Any]) -> SkippedLine | LineProblem | None:
    """Why an export row is no item (superseded, withdrawn, unsure), what is wrong with
    the fields that say so, or None: it is an item."""
    if not is_export_row(row):
        return None
    for flag in (SKIP_SUPERSEDED, SKIP_WITHDRAWN):  # each named by its field
        value = row.get(flag)
        if value is True:
            return SkippedLine(number, flag)
        if value is not None and not isinstance(value, bool):
            return LineProblem(number, "Input should be true or false", flag)
    decision = row.get("decision")
    if decision == UNSURE:
        return SkippedLine(number, SKIP_UNSURE)
    if decision not in LABELS:
        return LineProblem(number, "Input should be 'faithful', 'mismatch' or 'unsure'", "decision")
    return None


def _decided_pair(row: Mapping[str, Any], item: Mapping[str, Any]) -> bytes | None:
    if not is_export_row(row):
        return None
    pair = [item.get("informal"), item.get("formal"), item.get("header", "")]
    # ASCII escapes keep a lone surrogate encodable; a list keeps the fields apart.
    return hashlib.sha256(json.dumps(pair).encode("ascii")).digest()


def _raw_lines(path: Path) -> Iterator[tuple[int, bytes]]:
    with _open(path) as stream:
        # Iterating a binary stream splits at b"\n" only, as JSON Lines do.
        yield from enumerate(stream, start=1)


def _open(path: Path) -> BinaryIO:
    try:
        return path.open("rb")  # the caller's `with` closes it
    except OSError as error:
        raise PairsFileError(f"cannot read {path}: {error.strerror}") from error


def _pair_line(number: int, raw: bytes) -> PairLine | LineProblem | SkippedLine | None:
    row = _json_object(number, raw)
    if not isinstance(row, dict):
        return row
    skipped = skipped_row(number, row)
    if skipped is not None:
        return skipped
    item = request_fields(row)
    try:
        # NaN and Infinity are read (shared rows hold some in fields that are dropped)
        # but are not JSON: one left in the request is refused here, not sent.
        wire = json.dumps(item, ensure_ascii=True, allow_nan=False)
    except ValueError:
        return LineProblem(number, "NaN or Infinity is not a JSON value")
    # ASCII escapes keep a lone surrogate (a JSON "\ud800") sendable as valid JSON.
    wire_line = wire.encode("ascii") + b"\n"
    return PairLine(number, item, wire_line, _decided_pair(row, item), ignored_fields(row))


def _json_object(number: int, raw: bytes) -> dict[str, Any] | LineProblem | None:
    """The line's JSON object; None for a blank line."""
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
    return row
