"""`faithscreen report`: the summary report, read straight from the database."""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import Annotated

import typer

from app.cli.db import DatabaseUrlOption
from app.cli.root import cli
from app.db.engine import create_engine, make_session_factory
from app.reports.service import summary_report
from app.reports.summary import Summary
from app.reports.text import summary_text
from app.repositories.reports import ReportFilters
from app.settings import get_settings
from app.vocabulary import Role


@cli.command("report")
def report(
    batch: Annotated[str | None, typer.Option("--batch", help="Only this batch.")] = None,
    since: Annotated[datetime | None, typer.Option(help="Created at or after (UTC).")] = None,
    until: Annotated[datetime | None, typer.Option(help="Created before (UTC).")] = None,
    role: Annotated[Role | None, typer.Option(help="Only calls of this role.")] = None,
    model: Annotated[str | None, typer.Option(help="Only calls to this model.")] = None,
    prompt_version: Annotated[str | None, typer.Option(help="Only this prompt version.")] = None,
    database_url: DatabaseUrlOption = None,
) -> None:
    """Print outcomes, reasons, per role/model/prompt call statistics, agreement and rates
    against people's decisions, each rate with its 95% interval."""
    filters = ReportFilters(
        batch_id=batch,
        since=since,
        until=until,
        role=role.value if role else None,
        model=model,
        prompt_version=prompt_version,
    )
    url = database_url or get_settings().database_url
    typer.echo(summary_text(asyncio.run(_read(url, filters))), nl=False)


async def _read(url: str, filters: ReportFilters) -> Summary:
    engine = create_engine(url)
    try:
        async with make_session_factory(engine)() as session:
            return await summary_report(session, filters)
    finally:
        await engine.dispose()
