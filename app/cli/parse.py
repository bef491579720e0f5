"""`faithscreen parse`: read replies with the contract parser and print what was read.

`--format` names the reply format the reply was asked in, and its reader reads it
(app/llm/reply_input.py), never another: `text` (the default) and `grammar` take the reply
text; `tool` and `json` take the provider's whole response body (a chat completion, as the
raw endpoint serves a tool reply) and `--role`, whose fields the object must hold. A body
that is not a chat completion is an input the command cannot read (exit 2, or the line
named for JSONL), never read leniently.

A parse status is data: the exit code is 0 whatever the statuses. An input the command
cannot read (a missing file, a reply that is not UTF-8) exits 2 with a message on stderr.
JSONL is streamed: a line that cannot be read (not UTF-8, not a JSON object with a string
`response`) is named on stderr as `line N: ...`, the rest are read and written, and the
command exits 1 at the end.

Input is decoded from UTF-8 bytes with no newline translation, so a bare CR in a file
reaches the parser (text mode would have turned it into a line end). A byte-order mark at
the start of the input (or of a JSONL line) is dropped: it belongs to the file, not the
reply. Blank JSONL lines are skipped. Output is UTF-8 JSON, one object per line.
"""

from __future__ import annotations

import contextlib
import json
import sys
from contextlib import AbstractContextManager
from typing import Annotated, Any, BinaryIO, NoReturn

import typer

from app.cli.root import cli
from app.cli.terminal import echo
from app.contract import Reading
from app.json_lines import json_line
from app.llm.reply_input import MalformedBody, MissingRole, read_given_reply
from app.vocabulary import ReplyFormat, Role

EXIT_BAD_LINES = 1
EXIT_BAD_INPUT = 2
JSON_WHITESPACE = " \t\r\n"


class BadInput(Exception):
    """An input the command cannot read; the message says where."""


@cli.command("parse")
def parse_command(
    source: Annotated[
        str, typer.Argument(metavar="FILE|-", help="The input file; - (default) reads stdin.")
    ] = "-",
    jsonl: Annotated[
        bool,
        typer.Option(
            "--jsonl",
            help='Read lines {"id": ..., "response": ...}; write one object per line.',
        ),
    ] = False,
    reply_format: Annotated[
        ReplyFormat,
        typer.Option(
            "--format",
            help="The format the reply was asked in: text and grammar read the reply text; "
            "tool and json the provider's whole response body (needs --role).",
        ),
    ] = ReplyFormat.TEXT,
    role: Annotated[
        Role | None,
        typer.Option("--role", help="Whose fields a tool or json reply holds."),
    ] = None,
) -> None:
    """Read replies with the reply contract; print the verdict and parse status as JSON."""
    if reply_format in (ReplyFormat.TOOL, ReplyFormat.JSON) and role is None:
        _fail(f"--format {reply_format.value} reads a role's fields: give --role")
    reader = _Reader(reply_format, role)
    try:
        with _open_binary(source) as stream:
            if jsonl:
                _parse_jsonl(stream, reader)
            else:
                _write(_reading_fields(reader.read(_decode(stream.read(), "input"), "input")))
    except BadInput as error:
        _fail(str(error))
    finally:
        sys.stdout.buffer.flush()


def _open_binary(source: str) -> AbstractContextManager[BinaryIO]:
    if source == "-":
        return contextlib.nullcontext(sys.stdin.buffer)
    try:
        return open(source, "rb")  # the caller's `with` closes it
    except OSError as error:
        raise BadInput(f"cannot read {source}: {error.strerror}") from error


class _Reader:
    """The reader of one format, for every reply of the input."""

    def __init__(self, reply_format: ReplyFormat, role: Role | None) -> None:
        self.reply_format, self.role = reply_format, role

    def read(self, given: str, where: str) -> Reading:
        try:
            return read_given_reply(self.reply_format, self.role, given)
        except (MalformedBody, MissingRole) as error:
            kind = self.reply_format.value
            raise BadInput(f"{where}: not a {kind} reply's response body ({error})") from error


def _parse_jsonl(stream: BinaryIO, reader: _Reader) -> None:
    bad = 0
    # Iterating a binary stream splits at b"\n" only, as the JSONL format does.
    for number, raw in enumerate(stream, start=1):
        try:
            _parse_line(raw, number, reader)
        except BadInput as error:
            bad += 1
            echo(f"faithscreen parse: {error}", err=True)
    if bad:
        sys.stdout.buffer.flush()
        echo(f"faithscreen parse: {bad} lines could not be read", err=True)
        raise typer.Exit(EXIT_BAD_LINES)


def _parse_line(raw: bytes, number: int, reader: _Reader) -> None:
    text = _decode(raw, f"line {number}")
    if text.strip(JSON_WHITESPACE):
        item = _jsonl_item(text, number)
        reading = reader.read(item["response"], f"line {number}")
        _write({"id": item.get("id"), **_reading_fields(reading)})


def _jsonl_item(text: str, number: int) -> dict[str, Any]:
    try:
        item = json.loads(text, parse_constant=_reject_constant)
    except (ValueError, RecursionError) as error:
        raise BadInput(f"line {number}: not valid JSON ({error})") from error
    if not isinstance(item, dict) or not isinstance(item.get("response"), str):
        raise BadInput(f"line {number}: expected a JSON object with a string 'response'")
    return item


def _reject_constant(name: str) -> NoReturn:
    # NaN and Infinity are not JSON; echoing one back as an id would write invalid JSON.
    raise ValueError(f"{name} is not allowed")


def _decode(data: bytes, where: str) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise BadInput(f"{where}: not valid UTF-8 at byte {error.start}") from error


def _reading_fields(reading: Reading) -> dict[str, str | None]:
    return {
        "verdict": reading.verdict.value,
        "parse_status": reading.parse_status.value,
        "back_translation": reading.back_translation,
        "issues": reading.issues,
        "parser_version": reading.parser_version,
    }


def _write(record: dict[str, Any]) -> None:
    sys.stdout.buffer.write(json_line(record))


def _fail(message: str) -> NoReturn:
    sys.stdout.buffer.flush()
    echo(f"faithscreen parse: {message}", err=True)
    raise typer.Exit(EXIT_BAD_INPUT)
