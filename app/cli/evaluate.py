"""`faithscreen eval run|show|compare`: the screen's error rates on labelled pairs.

`run` screens a labelled file as one batch (on a server, or here with the embedded database
and worker, as `screen` does) and prints its calibration; `show` prints a stored batch's;
`compare` two batches on the pairs both screened. stdout carries the product (the text,
or with --json only the object the API returns); progress and messages go to stderr.
Exit codes as `submit`: 0 done, 1 the server or the run failed, 2 the input must be fixed,
3 (`run`, after printing) every screening that needed a provider ended in a provider error.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, TypeVar
from urllib.parse import quote, urlencode

import httpx2
import typer
from sqlalchemy.ext.asyncio import AsyncSession

from app.calibration.html import calibration_page
from app.calibration.rows import calibration_csv
from app.calibration.service import batch_calibration, compare_batches, find_batch
from app.calibration.text import calibration_text, comparison_text
from app.cli.batch import (
    EXIT_BAD_INPUT,
    HTTP_TIMEOUT,
    NDJSON,
    CommandFailed,
    PairsArgument,
    SkipInvalidOption,
    conclude,
    fail_command,
    poll,
    post_batch,
    refuse_plain_key,
    surveyed,
    wait_for_batch,
)
from app.cli.db import DatabaseUrlOption, open_database, run_in_session
from app.cli.environment import API_KEY_ENV
from app.cli.pairs_file import LineProblem, PairsFileError, Survey, ndjson_body, read_pairs
from app.cli.root import cli
from app.cli.screen import (
    intake_locally,
    local_runtime,
    refuse_without_providers,
    wait_for_local_batch,
)
from app.cli.terminal import echo, echo_json
from app.errors import AppError
from app.intake.batches import BatchBody
from app.settings import Settings, get_settings

evaluate = typer.Typer(
    help="Calibrate the screen on labelled pairs: run a file, show a batch, compare two.",
    no_args_is_help=True,
)
cli.add_typer(evaluate, name="eval")

T = TypeVar("T")
Body = dict[str, Any]

ServerOption = Annotated[
    str | None,
    typer.Option("--server", help="A FaithScreen server (else the local database)."),
]
ApiKeyOption = Annotated[
    str | None,
    typer.Option(
        "--api-key",
        envvar=API_KEY_ENV,
        show_envvar=True,
        help="A reviewer or admin key (calibration is theirs to read).",
    ),
]
JsonOption = Annotated[
    bool, typer.Option("--json", help="Print only the JSON object the API returns.")
]


class Shown(StrEnum):
    """What `run` and `show` print on stdout."""

    TEXT = "text"
    JSON = "json"
    CSV = "csv"


FormatOption = Annotated[
    Shown,
    typer.Option(
        "--format",
        help="text (the report), json (as --json) or csv (one row per rate and slice, "
        "as GET /v1/batches/{id}/calibration?format=csv).",
    ),
]
HtmlOption = Annotated[
    Path | None, typer.Option("--html", metavar="FILE", help="Also write a self-contained page.")
]


@evaluate.command("run")
def run_command(
    pairs: PairsArgument,
    name: Annotated[str | None, typer.Option("--name", help="A name for the batch.")] = None,
    server: ServerOption = None,
    api_key: ApiKeyOption = None,
    as_json: JsonOption = False,
    shown: FormatOption = Shown.TEXT,
    html: HtmlOption = None,
    skip_invalid: SkipInvalidOption = False,
    poll_seconds: Annotated[
        float, typer.Option("--poll-seconds", min=0.1, help="Progress poll interval.")
    ] = 1.0,
) -> None:
    """Screen a labelled pairs file as one batch, then print its calibration: the matrix,
    every rate with its 95% interval, slices by tag and kind, the configurations seen.

    Rows need a `label` ("faithful" or "mismatch"); the shared labelled set's rows and the
    lines of GET /v1/decisions/export work as they are. Each run is a new batch.
    """
    try:
        found = surveyed(pairs, skip_invalid=skip_invalid)
        require_labels(pairs, found)
        if server is None:
            body, progress = _run_locally(pairs, found, name, get_settings())
        else:
            body, progress = _run_on_server(pairs, found, server, api_key, name, poll_seconds)
        report = Report.of_calibration(name)
        emit(body, report, shown=Shown.JSON if as_json else shown, html=html)
        conclude(progress)
    except CommandFailed as error:
        fail_command("eval run", error)


def require_labels(pairs: Path, found: Survey) -> None:
    """CommandFailed (exit 2) unless some row carries a label: without one there is
    nothing to calibrate against."""
    try:
        labelled = any(
            not isinstance(line, LineProblem) and line.item.get("label") is not None
            for line in read_pairs(pairs, found)
        )
    except PairsFileError as error:
        raise CommandFailed(str(error), EXIT_BAD_INPUT) from error
    if not labelled:
        raise CommandFailed(
            f'{pairs} has no labelled row: give rows a "label" ("faithful" or "mismatch") '
            "to calibrate against, or use `faithscreen screen` to screen without one",
            EXIT_BAD_INPUT,
        )


def _run_on_server(
    pairs: Path,
    found: Survey,
    server: str,
    api_key: str | None,
    name: str | None,
    poll_seconds: float,
) -> tuple[Body, Body]:
    """The batch's calibration and its last progress body."""
    # A new key every run: the same file run again after a change is a new measurement.
    key = str(uuid.uuid4())
    with _client(server, api_key) as client:
        batch_id = post_batch(client, pairs, found, name, key)
        echo(f"batch {batch_id}: {found.total} pairs", err=True)
        progress = wait_for_batch(client, batch_id, poll_seconds)
        return poll(client, f"/v1/batches/{batch_id}/calibration"), progress


def _run_locally(
    pairs: Path, found: Survey, name: str | None, settings: Settings
) -> tuple[Body, Body]:
    refuse_without_providers(pairs, found, settings)  # before any database is created
    body = BatchBody.of(bytearray(b"".join(ndjson_body(pairs, found))), NDJSON)
    open_database(settings.database_url)
    return asyncio.run(_screen_locally(pairs, found, body, name, settings))


async def _screen_locally(
    pairs: Path, found: Survey, body: BatchBody, name: str | None, settings: Settings
) -> tuple[Body, Body]:
    runtime = local_runtime(settings)
    try:
        batch = (await intake_locally(runtime, pairs, found, body, name)).batch
        echo(f"batch {batch.id}: {found.total} pairs", err=True)
        runtime.start()
        progress = await wait_for_local_batch(runtime, batch, label=f"screening {pairs.name}")
        async with runtime.sessions() as session:
            return await batch_calibration(session, batch.id), progress
    finally:
        await runtime.stop()


@evaluate.command("show")
def show_command(
    batch: Annotated[str, typer.Argument(metavar="BATCH", help="A batch id or name.")],
    server: ServerOption = None,
    api_key: ApiKeyOption = None,
    as_json: JsonOption = False,
    shown: FormatOption = Shown.TEXT,
    html: HtmlOption = None,
    database_url: DatabaseUrlOption = None,
) -> None:
    """Print the calibration of a stored batch (the local database, or --server), given
    by its id or its name."""
    try:
        if server is None:
            body, name = _local(database_url, lambda session: _shown(session, batch))
        else:
            with _client(server, api_key) as client:
                body = poll(client, f"/v1/batches/{quote(batch, safe='')}/calibration")
            name = _name_given(batch, body["batch_id"])
        report = Report.of_calibration(name)
        emit(body, report, shown=Shown.JSON if as_json else shown, html=html)
    except CommandFailed as error:
        fail_command("eval show", error)


@evaluate.command("compare")
def compare_command(
    a: Annotated[str, typer.Argument(metavar="A", help="The baseline batch (id or name).")],
    b: Annotated[
        str, typer.Argument(metavar="B", help="The batch with one thing changed (id or name).")
    ],
    server: ServerOption = None,
    api_key: ApiKeyOption = None,
    as_json: JsonOption = False,
    html: HtmlOption = None,
    database_url: DatabaseUrlOption = None,
) -> None:
    """Compare batch B against baseline A on the labelled pairs both screened: false-pass
    and false-alarm under each, the pairs each gets wrong alone, the exact McNemar p."""
    try:
        paged = html is not None  # the page shows B's calibration below the comparison
        if server is None:
            found = _local(database_url, lambda session: _compared(session, a, b, paged))
        else:
            found = _compared_on_server(server, api_key, a, b, paged)
        comparison, calibration, names = found
        shown = Shown.JSON if as_json else Shown.TEXT
        report = Report.of_comparison(comparison, names)
        emit(comparison, report, shown=shown, html=html, calibration=calibration)
    except CommandFailed as error:
        fail_command("eval compare", error)


async def _shown(session: AsyncSession, batch: str) -> tuple[Body, str | None]:
    found = await find_batch(session, batch)
    return await batch_calibration(session, found.id), found.name


async def _compared(
    session: AsyncSession, a: str, b: str, paged: bool
) -> tuple[Body, Body | None, dict[str, str]]:
    first, second = await find_batch(session, a), await find_batch(session, b)
    comparison = await compare_batches(session, first.id, second.id)
    calibration = await batch_calibration(session, second.id) if paged else None
    names = {found.id: found.name for found in (first, second) if found.name}
    return comparison, calibration, names


def _compared_on_server(
    server: str, api_key: str | None, a: str, b: str, paged: bool
) -> tuple[Body, Body | None, dict[str, str]]:
    with _client(server, api_key) as client:
        comparison = poll(client, f"/v1/calibrations/compare?{urlencode({'a': a, 'b': b})}")
        b_id = comparison["b"]
        calibration = poll(client, f"/v1/batches/{b_id}/calibration") if paged else None
    given = {comparison["a"]: _name_given(a, comparison["a"]), b_id: _name_given(b, b_id)}
    return comparison, calibration, {id_: name for id_, name in given.items() if name}


def _name_given(given: str, batch_id: str) -> str | None:
    """The name the user typed, when the server resolved it to another id. (The API's
    calibration carries no name, so a batch given by id reads by its id alone.)"""
    return given if given != batch_id else None


@dataclass(frozen=True)
class Report:
    """How a body reads: its text and its page's title, with the batches' names."""

    text: Callable[[Body], str]
    title: str
    names: dict[str, str]

    @staticmethod
    def of_calibration(name: str | None) -> Report:
        title = f"FaithScreen calibration: {name}" if name else "FaithScreen calibration"
        return Report(lambda body: calibration_text(body, name), title, {})

    @staticmethod
    def of_comparison(comparison: Body, names: dict[str, str]) -> Report:
        a, b = (names.get(comparison[side], comparison[side]) for side in ("a", "b"))
        title = f"FaithScreen comparison: {b} against {a}"
        return Report(lambda body: comparison_text(body, names), title, names)


def emit(
    body: Body,
    report: Report,
    *,
    shown: Shown,
    html: Path | None,
    calibration: Body | None = None,
) -> None:
    """Print `body` (as text, as JSON alone on stdout, or a calibration's rows as CSV) and
    write the page if asked. For a comparison, `calibration` is batch B's, shown on the
    page below it."""
    if html is not None:
        title, names = report.title, report.names
        page = (
            calibration_page(body, title=title)
            if calibration is None
            else calibration_page(calibration, body, title=title, names=names)
        )
        try:
            html.write_text(page, encoding="utf-8")
        except OSError as error:
            raise CommandFailed(f"cannot write {html}: {error.strerror}", EXIT_BAD_INPUT) from error
        echo(f"wrote {html}", err=True)
    if shown is Shown.JSON:
        echo_json(body)
    elif shown is Shown.CSV:
        echo(calibration_csv(body).decode(), nl=False)
    else:
        echo(report.text(body), nl=False)


def _client(server: str, api_key: str | None) -> httpx2.Client:
    refuse_plain_key(server, api_key)
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    return httpx2.Client(base_url=server, timeout=HTTP_TIMEOUT, headers=headers)


def _local(database_url: str | None, work: Callable[[AsyncSession], Awaitable[T]]) -> T:
    try:
        return run_in_session(database_url, work)
    except AppError as error:
        raise CommandFailed(error.message) from error


# `eval formats` (the reply-format study) registers itself on `evaluate`, from its module.
from app.cli import format_study as _format_study  # noqa: E402, F401
