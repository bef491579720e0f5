"""`faithscreen report`: the summary report, read straight from the database."""

from __future__ import annotations

import asyncio
import os
from datetime import datetime
from pathlib import Path
from typing import Annotated, NoReturn

import typer

from app.cli.db import DatabaseUrlOption, announce_database, utc_time
from app.cli.root import cli
from app.cli.terminal import echo
from app.clock import utcnow
from app.db.engine import create_engine, make_session_factory
from app.reports.html import summary_html
from app.reports.service import summary_report
from app.reports.summary import Summary
from app.reports.text import summary_text
from app.repositories import batches
from app.repositories.reports import ReportFilters
from app.settings import get_settings
from app.vocabulary import Role

EXIT_FAILURE = 1


@cli.command("report")
def report(
    batch: Annotated[str | None, typer.Option("--batch", help="Only this batch.")] = None,
    since: Annotated[
        datetime | None, typer.Option(help="Created at or after (UTC).", callback=utc_time)
    ] = None,
    until: Annotated[
        datetime | None, typer.Option(help="Created before (UTC).", callback=utc_time)
    ] = None,
    role: Annotated[Role | None, typer.Option(help="Only calls of this role.")] = None,
    model: Annotated[str | None, typer.Option(help="Only calls to this model.")] = None,
    prompt_version: Annotated[str | None, typer.Option(help="Only this prompt version.")] = None,
    html: Annotated[
        Path | None,
        typer.Option(
            "--html",
            metavar="FILE",
            help="Also write a self-contained HTML report with charts to FILE (the tables "
            "still go to stdout, 'wrote FILE' to stderr).",
        ),
    ] = None,
    database_url: DatabaseUrlOption = None,
) -> None:
    """Print outcomes, reasons, per role/model/prompt call statistics, agreement, rates
    against people's decisions (each rate with its 95% interval), how needs_review
    screenings were decided by reason, the review queue backlog, outcomes by tag and
    screenings per day."""
    filters = ReportFilters(
        batch_id=batch,
        since=since,
        until=until,
        role=role,
        model=model,
        prompt_version=prompt_version,
    )
    if html is not None:
        _check_writable(html)
    url = database_url or get_settings().database_url
    announce_database(url)
    now = utcnow()  # the backlog's ages and the page's time are one moment
    summary = asyncio.run(_read(url, filters, now))
    if summary is None:
        _fail(f"no batch {batch}")
    echo(summary_text(summary), nl=False)
    if html is not None:
        _write(html, summary_html(summary, filters=filters.described(), generated_at=now))


def _check_writable(path: Path) -> None:
    """Refuse a path that cannot be written before the report is read, not after."""
    folder = path.parent
    if not folder.is_dir():
        _fail(f"cannot write {path}: {folder} is not a folder")
    if path.is_dir():
        _fail(f"cannot write {path}: it is a folder")
    if not os.access(folder, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        _fail(f"cannot write {path}: permission denied")


def _write(path: Path, page: str) -> None:
    try:
        path.write_text(page, encoding="utf-8")
    except OSError as error:
        _fail(f"cannot write {path}: {error.strerror or error}")
    echo(f"wrote {path}", err=True)


def _fail(message: str) -> NoReturn:
    echo(f"faithscreen report: {message}", err=True)
    raise typer.Exit(EXIT_FAILURE)


async def _read(url: str, filters: ReportFilters, now: datetime) -> Summary | None:
    """The report; None when it is of a batch that does not exist."""
    engine = create_engine(url)
    try:
        async with make_session_factory(engine)() as session:
            batch_id = filters.batch_id
            if batch_id is not None and await batches.get(session, batch_id) is None:
                return None
            return await summary_report(session, filters, now=now)
    finally:
        await engine.dispose()
