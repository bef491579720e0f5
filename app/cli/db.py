"""`faithscreen db ...`: database maintenance (migrations, pruning old prompts); and how
every command that opens the database says which one (`announce_database`):
`./faithscreen.db` is relative to the directory a command runs in, so `keys create` run
elsewhere would silently write to another database than the server's."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Annotated, TypeVar

import typer
from sqlalchemy.ext.asyncio import AsyncSession

from app.cli.root import cli
from app.cli.terminal import echo
from app.clock import utcnow
from app.db.engine import create_engine, make_session_factory
from app.db.location import database_location
from app.db.migrate import check_at_head, current_revision, head_revision, upgrade_to_head
from app.intake.requests import in_utc
from app.repositories import retention
from app.settings import get_settings
from faithscreen_client.credentials import mask_url_credentials

T = TypeVar("T")

db = typer.Typer(help="Database maintenance.", no_args_is_help=True)
cli.add_typer(db, name="db")

DatabaseUrlOption = Annotated[
    str | None,
    typer.Option(
        "--database-url",
        help="Database to act on (default: FAITHSCREEN_DATABASE_URL, else ./faithscreen.db).",
        show_default=False,
    ),
]


def utc_time(moment: datetime | None) -> datetime | None:
    """A `--since`/`--until` option read as the API reads it (`in_utc`): no offset is UTC,
    a time past the calendar in UTC is a bad parameter (exit 2), not a traceback."""
    try:
        return None if moment is None else in_utc(moment)
    except ValueError as error:
        raise typer.BadParameter(str(error)) from error


def announce_database(url: str) -> None:
    """Say on stderr which database this command opens, before it opens it: a SQLite file
    by its absolute path, another URL with its password masked."""
    echo(f"faithscreen: database {database_location(url)}", err=True)


def open_database(url: str) -> None:
    """Name the database, then migrate it (creating a SQLite file if needed), as `serve`
    does at start: what every command that writes to it does first."""
    announce_database(url)
    upgrade_to_head(url)


def run_in_session(database_url: str | None, work: Callable[[AsyncSession], Awaitable[T]]) -> T:
    """Migrate the database (as `serve` does), then run `work` in one committed session."""
    url = database_url or get_settings().database_url
    open_database(url)
    return asyncio.run(in_session(url, work))


async def in_session(url: str, work: Callable[[AsyncSession], Awaitable[T]]) -> T:
    engine = create_engine(url)
    try:
        async with make_session_factory(engine)() as session:
            result = await work(session)
            await session.commit()
            return result
    finally:
        await engine.dispose()


@db.command("upgrade")
def upgrade(database_url: DatabaseUrlOption = None) -> None:
    """Apply all pending migrations (creating a SQLite file if needed); print the revision."""
    url = database_url or get_settings().database_url
    open_database(url)
    echo(f"{mask_url_credentials(url)}: at revision {current_revision(url)} (head)")


@db.command("current")
def current(database_url: DatabaseUrlOption = None) -> None:
    """Print the database's revision; exit 1 when migrations are pending."""
    url = database_url or get_settings().database_url
    announce_database(url)
    at_head = check_at_head(url)
    state = "head" if at_head else f"behind head {head_revision()}"
    echo(f"{mask_url_credentials(url)}: at revision {current_revision(url)} ({state})")
    if not at_head:
        raise typer.Exit(1)


BeforeOption = Annotated[
    datetime,
    typer.Option(
        "--before",
        help="Clear the prompts of reviews stored before this time (no offset: UTC).",
        show_default=False,
    ),
]


@db.command("prune")
def prune(before: BeforeOption, database_url: DatabaseUrlOption = None) -> None:
    """Clear the prompts (the messages sent) of reviews stored before DATE, keeping each
    prompt's digest, the raw reply and body, every parsed field and version: the audit
    record, which the database refuses to change. Re-scoring reads replies, not prompts."""
    cutoff = utc_time(before)
    assert cutoff is not None  # a required option
    if cutoff > utcnow():
        raise typer.BadParameter("is in the future; prune prompts of reviews already stored")
    url = database_url or get_settings().database_url
    open_database(url)
    cleared = asyncio.run(clear_prompts_before(url, cutoff))
    echo(
        f"cleared the prompts of {cleared} reviews stored before {cutoff.isoformat()}; "
        "replies, parsed fields and versions are kept"
    )


async def clear_prompts_before(url: str, cutoff: datetime) -> int:
    """Walk the reviews by id, a chunk per transaction (short locks while workers run)."""
    engine = create_engine(url)
    sessions = make_session_factory(engine)
    cleared = 0
    try:
        async with sessions() as session:
            first, last = await retention.review_id_bounds(session)
        for start in range(first, last + 1, retention.CHUNK):
            async with sessions() as session:
                end = start + retention.CHUNK - 1
                cleared += await retention.clear_prompts(
                    session, before=cutoff, first=start, last=end
                )
                await session.commit()
    finally:
        await engine.dispose()
    return cleared
