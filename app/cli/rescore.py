"""`faithscreen rescore`: replay stored replies with the current parser and policy."""

from __future__ import annotations

import asyncio
import sys
from datetime import datetime
from pathlib import Path
from typing import Annotated

import typer

from app.cli.db import DatabaseUrlOption, announce_database, utc_time
from app.cli.root import cli
from app.cli.terminal import echo, echo_json
from app.db.engine import create_engine, make_session_factory
from app.errors import NotFound
from app.repositories.rescores import Scope
from app.rescore.diff import Diff
from app.rescore.service import RescoreRun, rescore
from app.rescore.text import diff_text
from app.settings import get_settings


@cli.command("rescore")
def rescore_command(
    batch: Annotated[str | None, typer.Option("--batch", help="Only this batch.")] = None,
    since: Annotated[
        datetime | None,
        typer.Option(help="Screenings created at or after (UTC).", callback=utc_time),
    ] = None,
    all_: Annotated[bool, typer.Option("--all", help="Every finished screening.")] = False,
    apply: Annotated[
        bool, typer.Option("--apply", help="Record the new readings and outcomes.")
    ] = False,
    changed_ids: Annotated[
        Path | None,
        typer.Option("--changed-ids", help="Write the changed screening ids here, one a line."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the diff as JSON.")] = False,
    database_url: DatabaseUrlOption = None,
) -> None:
    """Re-read every stored raw reply with the current parser and re-decide with the
    current policy, calling no model. Without --apply only the diff is printed (how many
    outcomes change, from -> to, by reason); with --apply the changes are recorded as new
    rows under the new versions and nothing stored is overwritten."""
    if sum([batch is not None, since is not None, all_]) != 1:
        raise typer.BadParameter("give exactly one of --batch ID, --since DATE or --all")
    settings = get_settings()
    url = database_url or settings.database_url
    announce_database(url)
    scope = Scope(batch_id=batch, since=since)
    # Opened first, so a path that cannot be written fails before the run, not after.
    try:
        ids_file = changed_ids.open("w", encoding="utf-8") if changed_ids else None
    except OSError as error:
        raise typer.BadParameter(f"cannot write {changed_ids}: {error}") from error
    try:
        run = asyncio.run(
            _run(
                url,
                scope,
                apply=apply,
                format_retries=settings.format_retries,
                audit_rate=settings.audit_rate,
                double_rate=settings.review_double_rate,
            )
        )
    except NotFound as error:
        echo(f"error: {error.message}", err=True)
        raise typer.Exit(1) from error
    if run.diff.considered:
        print(file=sys.stderr)  # ends the progress line
    if ids_file is not None:
        with ids_file:
            ids_file.writelines(f"{screening_id}\n" for screening_id in run.diff.changed_ids)
    if as_json:
        echo_json({"rescore_id": run.rescore_id, **run.diff.as_json()})
    else:
        echo(diff_text(run.diff, run.rescore_id), nl=False)


async def _run(
    url: str,
    scope: Scope,
    *,
    apply: bool,
    format_retries: int,
    audit_rate: float,
    double_rate: float,
) -> RescoreRun:
    engine = create_engine(url)
    try:
        return await rescore(
            make_session_factory(engine),
            scope,
            apply=apply,
            actor="cli",
            format_retries=format_retries,
            audit_rate=audit_rate,
            double_rate=double_rate,
            progress=_progress,
        )
    finally:
        await engine.dispose()


def _progress(diff: Diff) -> None:
    print(f"\rreplayed {diff.considered}, changed {diff.changed}", end="", file=sys.stderr)
