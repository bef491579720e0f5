"""`faithscreen screen`: a pairs file screened here, with the embedded database and worker,
as `submit --wait` screens it on a server (same checks, progress, results and exit codes;
see `app.cli.batch`). `eval run` without --server screens its file the same way.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import signal
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from app.api.batch_schemas import BatchOut
from app.auth.principal import ANONYMOUS
from app.cli.batch import (
    EXIT_BAD_INPUT,
    NDJSON,
    CommandFailed,
    OutOption,
    PairsArgument,
    ResultsFormatOption,
    SkipInvalidOption,
    bad_lines,
    conclude,
    csv_to_file,
    default_idempotency_key,
    fail_command,
    results_sink,
    surveyed,
)
from app.cli.db import open_database
from app.cli.pairs_file import LineProblem, Survey, ndjson_body
from app.cli.progress import ProgressReport, Snapshot
from app.cli.results_file import lined_results
from app.cli.root import cli
from app.cli.terminal import echo
from app.errors import AppError
from app.intake.batches import Accepted, BatchBody, BatchRejected, submit_batch
from app.models.batch import Batch
from app.repositories import batches
from app.runtime import Runtime
from app.settings import Settings, get_settings

EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report it
LOCAL_POLL_SECONDS = 0.5
RESULTS_PAGE = 1000


@cli.command("screen")
def screen_command(
    pairs: PairsArgument,
    out: OutOption = None,
    results_format: ResultsFormatOption = "jsonl",
    again: Annotated[
        bool,
        typer.Option("--again", help="Screen anew a file this database has screened before."),
    ] = False,
    skip_invalid: SkipInvalidOption = False,
) -> None:
    """Screen a pairs file here, with a local database and worker; write the results.

        The database is FAITHSCREEN_DATABASE_URL, else ./faithscreen.db. Every line is checked
        first, as a batch's items are: if any is invalid, they are reported and none is screened
    (with --skip-invalid, they are reported and the valid ones screened).
        The same file screened again on the same database prints the earlier results (its key
        is the file's sha256, as `submit`'s), unless --again.
    """
    settings = get_settings()
    try:
        as_csv = csv_to_file(results_format, out)
        found = surveyed(pairs, skip_invalid=skip_invalid)
        refuse_without_providers(pairs, found, settings)
        body = BatchBody.of(bytearray(b"".join(ndjson_body(pairs, found))), NDJSON)
        key = None if again else default_idempotency_key(found.digest, None, skip_invalid)
        open_database(settings.database_url)
        asyncio.run(_screen(pairs, found, body, settings, (out, as_csv), key))
    except CommandFailed as error:
        fail_command("screen", error)
    except (KeyboardInterrupt, asyncio.CancelledError):  # Ctrl-C, or SIGTERM (_stop_on_sigterm)
        # What was stored stays stored: queued pairs are screened by the next `faithscreen
        # serve` or `faithscreen worker` on this database.
        stopped = CommandFailed("interrupted; stored pairs stay in the database", EXIT_INTERRUPTED)
        fail_command("screen", stopped)


async def _screen(
    pairs: Path,
    found: Survey,
    body: BatchBody,
    settings: Settings,
    out: tuple[Path | None, bool],
    key: str | None,
) -> None:
    _stop_on_sigterm()
    runtime = local_runtime(settings)
    try:
        accepted = await intake_locally(runtime, pairs, found, body, idempotency_key=key)
        batch = accepted.batch
        if not accepted.created:
            echo(
                f"faithscreen screen: {pairs} was submitted before as batch {batch.id}; "
                "these are its results, any still queued screened now (--again screens it "
                "anew)",
                err=True,
            )
        runtime.start()
        progress = await wait_for_local_batch(runtime, batch, label=f"screening {pairs.name}")
        await _write_local_results(runtime, batch.id, found, out)
    finally:
        await runtime.stop()
    conclude(progress)


def _stop_on_sigterm() -> None:
    """SIGTERM (a pipeline's timeout, `kill`) stops `screen` as Ctrl-C does: the run is
    cancelled, the worker drains within the grace and releases what it could not finish,
    so a later run on this database need not wait for those jobs' leases to lapse. (Asyncio
    does this for SIGINT alone, and a background job of a script has SIGINT ignored.)"""
    task = asyncio.current_task()
    # Event loops without signal handlers (Windows') keep SIGTERM's default.
    if task is not None:
        with contextlib.suppress(NotImplementedError):
            asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, task.cancel)


def refuse_without_providers(pairs: Path, found: Survey, settings: Settings) -> None:
    """CommandFailed (exit 2) naming the lines with no replies when no provider is
    configured: checked before the database is opened (or created), so a run that could
    screen nothing leaves nothing behind. Intake checks the same again (the server's)."""
    missing = settings.missing_providers()
    if not missing or not found.without_replies:
        return
    problem = (
        f"no LLM provider is configured: set {', '.join(missing)} (`faithscreen local-model "
        "start` serves a small one here), or supply both replies in the 'replies' field"
    )
    problems = [LineProblem(number, problem, "replies") for number in found.without_replies]
    raise bad_lines(pairs, "", problems)


def local_runtime(settings: Settings) -> Runtime:
    """The embedded database, and a worker when both providers are configured. Without
    one, intake refuses every item that would need it (exit 2), before anything waits."""
    return Runtime.create(settings, with_worker=not settings.missing_providers())


async def intake_locally(
    runtime: Runtime,
    pairs: Path,
    found: Survey,
    body: BatchBody,
    name: str | None = None,
    *,
    idempotency_key: str | None = None,
) -> Accepted:
    """Store every pair in one transaction, as `POST /v1/batches` does; nothing if one
    item is invalid. The batch is named `name`, else after the file. With a key this
    database has seen, the batch stored then (`created` False)."""
    try:
        async with runtime.sessions() as session:
            named = name or pairs.name
            accepted = await submit_batch(
                session,
                body,
                runtime.settings,
                principal=ANONYMOUS,
                name=named,
                idempotency_key=idempotency_key,
            )
            await session.commit()
    except BatchRejected as error:
        if not error.details:  # the batch as a whole: empty, or too many items
            raise CommandFailed(error.message, EXIT_BAD_INPUT) from None
        raise bad_lines(pairs, error.message, found.intake_problems(error.details)) from None
    except AppError as error:
        raise CommandFailed(error.message, EXIT_BAD_INPUT) from None
    return accepted


async def wait_for_local_batch(runtime: Runtime, batch: Batch, *, label: str) -> dict[str, Any]:
    """Until every item is done, showing progress; the body GET /v1/batches/{id} would
    give, so the failure lines read the same as `submit --wait`'s."""
    report = ProgressReport(sys.stderr, label=label)
    # Shielded: this only watches the worker; cancelling it must not stop the worker.
    worker_ended = asyncio.shield(runtime.wait())
    while True:
        async with runtime.sessions() as session:
            progress = await batches.progress(session, batch)
        report.update(Snapshot(progress.done, progress.total, progress.outcomes))
        if progress.done >= progress.total:
            break
        if worker_ended.done():
            raise CommandFailed("the worker stopped before every pair was screened")
        await asyncio.sleep(LOCAL_POLL_SECONDS)
    report.finish()
    return BatchOut.of_progress(batch, progress).model_dump(mode="json")


async def _write_local_results(
    runtime: Runtime, batch_id: str, found: Survey, out: tuple[Path | None, bool]
) -> None:
    """The rows `GET /v1/batches/{id}/results` would stream, read page by page, written as
    `submit --wait` writes them (`app.cli.results_file`); `out`: the file (else stdout),
    and whether as CSV."""
    path, as_csv = out
    with results_sink(path) as sink:
        rows = await _stored_results(runtime, batch_id)
        sink.writelines(lined_results(rows, found, as_csv=as_csv))


async def _stored_results(runtime: Runtime, batch_id: str) -> list[dict[str, Any]]:
    after, rows = -1, list[dict[str, Any]]()
    while True:
        async with runtime.sessions() as session:
            page = await batches.results_page(session, batch_id, after=after, limit=RESULTS_PAGE)
        if not page:
            return rows
        rows += [dataclasses.asdict(item) for item in page]
        after = page[-1].index
