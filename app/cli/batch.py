"""`faithscreen submit` (a pairs file to a server, as one batch) and `faithscreen screen` (a
pairs file screened here, with the embedded database and worker).

Both read the same files (see `app.cli.pairs_file`), send them through the same batch
intake (over HTTP, or `app.intake.batches` in process), report invalid items by their
lines in the file, and write the same results: JSON Lines `{"index", "id", "external_id",
"status", "outcome", "reasons"}` in input order. stdout carries the product (the batch id,
or the results when no --out is given); progress, one line per failure cause
(`app.cli.failures`) and messages go to stderr. Exit codes: 0 done, 1 the server or the
run failed, 2 the input must be fixed (nothing was screened), 3 every screening that
needed a provider ended in a provider error.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import hashlib
import json
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any, BinaryIO, NoReturn

import httpx2
import typer

from app.api.batch_schemas import BatchOut
from app.cli.environment import API_KEY_ENV
from app.cli.failures import EXIT_PROVIDERS_FAILED, failure_lines, providers_failed
from app.cli.pairs_file import (
    LineProblem,
    PairsFileError,
    Survey,
    describe_ignored,
    describe_problems,
    ndjson_body,
    survey,
)
from app.cli.progress import ProgressReport, Snapshot
from app.cli.root import cli
from app.db.migrate import upgrade_to_head
from app.errors import AppError
from app.intake.batches import Accepted, BatchBody, BatchRejected, submit_batch
from app.models.batch import Batch
from app.repositories import batches
from app.runtime import Runtime
from app.settings import Settings, get_settings, mask_credentials_in_text

EXIT_FAILURE = 1
EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report it
NDJSON = "application/x-ndjson"
# Ingesting 10,000 items takes the server a while: the read timeout covers the whole POST.
HTTP_TIMEOUT = httpx2.Timeout(300.0, connect=5.0)
# While waiting, how long the server may stay unreachable before submit gives up.
UNREACHABLE_GRACE_SECONDS = 60.0
LOCAL_POLL_SECONDS = 0.5
RESULTS_PAGE = 1000

PairsArgument = Annotated[
    Path, typer.Argument(metavar="PAIRS.jsonl", help="One screening request per line.")
]
OutOption = Annotated[
    Path | None,
    typer.Option("--out", metavar="RESULTS.jsonl", help="Write the results here (else stdout)."),
]


class CommandFailed(Exception):
    def __init__(self, message: str, exit_code: int = EXIT_FAILURE) -> None:
        super().__init__(message)
        self.exit_code = exit_code


# ======================================= submit ==========================================


@cli.command("submit")
def submit_command(
    pairs: PairsArgument,
    server: Annotated[str, typer.Option("--server", help="e.g. http://127.0.0.1:8000")],
    wait: Annotated[bool, typer.Option("--wait", help="Wait, showing progress.")] = False,
    out: OutOption = None,
    name: Annotated[str | None, typer.Option("--name", help="A name for the batch.")] = None,
    idempotency_key: Annotated[
        str | None,
        typer.Option(
            "--idempotency-key",
            help="Default: sha256 of the file's bytes and --name, so re-running the same "
            "submit returns the same batch instead of screening it again. Pass another key "
            "(or --name) to screen the same file anew.",
        ),
    ] = None,
    poll_seconds: Annotated[
        float, typer.Option("--poll-seconds", min=0.1, help="Progress poll interval.")
    ] = 1.0,
    api_key: Annotated[
        str | None,
        typer.Option(
            "--api-key",
            envvar=API_KEY_ENV,
            show_envvar=True,
            help="A submitter key (`faithscreen keys create`), sent as a Bearer token.",
        ),
    ] = None,
) -> None:
    """Send a pairs file to a FaithScreen server as one batch; print the batch id.

    With --wait, show progress until every pair has an outcome, then write the results.
    """
    try:
        found = surveyed(pairs)
        key = idempotency_key or default_idempotency_key(found.digest, name)
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        with httpx2.Client(base_url=server, timeout=HTTP_TIMEOUT, headers=headers) as client:
            batch_id = post_batch(client, pairs, found, name, key)
            if out is not None or not wait:
                print(batch_id, flush=True)
            if wait:
                typer.echo(f"batch {batch_id}: {found.total} pairs", err=True)
                progress = wait_for_batch(client, batch_id, poll_seconds)
                _write_server_results(client, batch_id, out)
                conclude(progress)
    except CommandFailed as error:
        fail_command("submit", error)


def default_idempotency_key(digest: str, name: str | None) -> str:
    """sha256 of the file's digest and the batch name: the same file and name, the same key."""
    return hashlib.sha256(f"{digest}\n{name or ''}".encode()).hexdigest()


def surveyed(pairs: Path) -> Survey:
    """The file surveyed; CommandFailed if it cannot be read, has bad lines or no pairs."""
    try:
        found = survey(pairs)
    except PairsFileError as error:
        raise CommandFailed(str(error), EXIT_BAD_INPUT) from error
    if found.problems:
        raise _bad_lines(pairs, "", found.problems)
    if not found.total:
        raise CommandFailed(f"{pairs} holds no pairs", EXIT_BAD_INPUT)
    if (ignored := describe_ignored(found.ignored)) is not None:
        typer.echo(f"faithscreen: {pairs}: {ignored}", err=True)
    return found


def post_batch(
    client: httpx2.Client, pairs: Path, found: Survey, name: str | None, key: str
) -> str:
    response = _request(
        client,
        "POST",
        "/v1/batches",
        content=ndjson_body(pairs, found),
        headers={"Content-Type": NDJSON, "Idempotency-Key": key},
        params={"name": name} if name else None,
    )
    error = _error_body(response)
    if response.status_code == 422 and error.get("details"):
        problems = found.intake_problems(error["details"])
        raise _bad_lines(pairs, str(error.get("message", response.text)), problems)
    _check(response, "submitting the batch")
    return str(response.json()["id"])


def wait_for_batch(client: httpx2.Client, batch_id: str, poll_seconds: float) -> dict[str, Any]:
    """Until every item is done, showing progress; the batch's last GET body."""
    report = ProgressReport(sys.stderr, label=f"batch {batch_id}")
    while True:
        body = poll(client, f"/v1/batches/{batch_id}")
        snapshot = Snapshot(int(body["done"]), int(body["total"]), body.get("outcomes") or {})
        report.update(snapshot)
        if snapshot.done >= snapshot.total:
            break
        time.sleep(poll_seconds)
    report.finish()
    return body


def poll(client: httpx2.Client, path: str) -> dict[str, Any]:
    """GET `path`; a server briefly away (restarting, database 503) is waited for."""
    deadline = time.monotonic() + UNREACHABLE_GRACE_SECONDS
    while True:
        try:
            response = client.get(path)
        except httpx2.TransportError as error:
            if time.monotonic() > deadline:
                raise _unreachable(client, error) from error
        else:
            if response.status_code != 503 or time.monotonic() > deadline:
                _check(response, f"reading {path}")
                body: dict[str, Any] = response.json()
                return body
        time.sleep(1.0)


def _write_server_results(client: httpx2.Client, batch_id: str, out: Path | None) -> None:
    path = f"/v1/batches/{batch_id}/results"
    try:
        with client.stream("GET", path) as response, results_sink(out) as sink:
            if not response.is_success:
                response.read()
                _check(response, f"reading {path}")
            for block in response.iter_bytes():
                sink.write(block)
    except httpx2.TransportError as error:
        raise _unreachable(client, error) from error


def _request(client: httpx2.Client, method: str, path: str, **kwargs: Any) -> httpx2.Response:
    try:
        return client.request(method, path, **kwargs)
    except httpx2.UnsupportedProtocol as error:
        message = f"--server {client.base_url}: give a URL like http://host:8000"
        raise CommandFailed(mask_credentials_in_text(message)) from error
    except httpx2.TransportError as error:
        raise _unreachable(client, error) from error


def _unreachable(client: httpx2.Client, error: Exception) -> CommandFailed:
    # The URL (and the error's text, which may quote it) may carry user info.
    message = mask_credentials_in_text(f"{client.base_url} ({type(error).__name__}: {error})")
    return CommandFailed(
        f"cannot reach the server at {message}; is `faithscreen serve` running there? "
        "Check --server."
    )


def _check(response: httpx2.Response, doing: str) -> None:
    if response.is_success:
        return
    message = _error_body(response).get("message") or response.text[:300]
    status = response.status_code
    hint = {
        401: f"pass --api-key or set {API_KEY_ENV}",
        403: "this key's role may not do this; a submitter key is needed",
        404: "is this a FaithScreen server with the batches API? Check --server",
        409: "a new --idempotency-key (or --name) makes a new batch",
        413: "split the file into smaller batches",
    }.get(status)
    suffix = f" ({hint})" if hint else ""
    raise CommandFailed(f"{doing}: the server answered HTTP {status}: {message}{suffix}")


def _error_body(response: httpx2.Response) -> dict[str, Any]:
    """The {"error": {...}} object of our error responses; {} for anything else."""
    try:
        error = response.json().get("error")
    except (ValueError, AttributeError):
        return {}
    return error if isinstance(error, dict) else {}


# ======================================= screen ==========================================


@cli.command("screen")
def screen_command(
    pairs: PairsArgument,
    out: OutOption = None,
    again: Annotated[
        bool,
        typer.Option("--again", help="Screen anew a file this database has screened before."),
    ] = False,
) -> None:
    """Screen a pairs file here, with a local database and worker; write the results.

    The database is FAITHSCREEN_DATABASE_URL, else ./faithscreen.db. Every line is checked
    first, as a batch's items are: if any is invalid, they are reported and none is screened.
    The same file screened again on the same database prints the earlier results (its key
    is the file's sha256, as `submit`'s), unless --again.
    """
    settings = get_settings()
    try:
        found = surveyed(pairs)
        body = BatchBody.of(bytearray(b"".join(ndjson_body(pairs, found))), NDJSON)
        key = None if again else default_idempotency_key(found.digest, None)
        upgrade_to_head(settings.database_url)
        asyncio.run(_screen(pairs, found, body, settings, out, key))
    except CommandFailed as error:
        fail_command("screen", error)
    except KeyboardInterrupt:
        # What was stored stays stored: queued pairs are screened by the next `faithscreen
        # serve` or `faithscreen worker` on this database.
        stopped = CommandFailed("interrupted; stored pairs stay in the database", EXIT_INTERRUPTED)
        fail_command("screen", stopped)


async def _screen(
    pairs: Path,
    found: Survey,
    body: BatchBody,
    settings: Settings,
    out: Path | None,
    key: str | None,
) -> None:
    runtime = local_runtime(settings)
    try:
        accepted = await intake_locally(runtime, pairs, found, body, idempotency_key=key)
        batch = accepted.batch
        if not accepted.created:
            typer.echo(
                f"faithscreen screen: {pairs} was screened before as batch {batch.id}; "
                "these are its results (--again screens it anew)",
                err=True,
            )
        runtime.start()
        progress = await wait_for_local_batch(runtime, batch, label=f"screening {pairs.name}")
        await _write_local_results(runtime, batch.id, out)
    finally:
        await runtime.stop()
    conclude(progress)


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
                session, body, runtime.settings, name=named, idempotency_key=idempotency_key
            )
            await session.commit()
    except BatchRejected as error:
        if not error.details:  # the batch as a whole: empty, or too many items
            raise CommandFailed(error.message, EXIT_BAD_INPUT) from None
        raise _bad_lines(pairs, error.message, found.intake_problems(error.details)) from None
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


async def _write_local_results(runtime: Runtime, batch_id: str, out: Path | None) -> None:
    """The lines `GET /v1/batches/{id}/results` would stream, read page by page."""
    after = -1
    with results_sink(out) as sink:
        while True:
            async with runtime.sessions() as session:
                page = await batches.results_page(
                    session, batch_id, after=after, limit=RESULTS_PAGE
                )
            if not page:
                return
            for item in page:
                sink.write(result_line(dataclasses.asdict(item)))
            after = page[-1].index


def result_line(record: dict[str, Any]) -> bytes:
    """One results line, byte for byte as the server's results endpoint writes it."""
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


# ======================================= shared ==========================================


@contextlib.contextmanager
def results_sink(out: Path | None) -> Iterator[BinaryIO]:
    """stdout, or `out` written whole: a file that exists holds every result line."""
    if out is None:
        yield sys.stdout.buffer
        sys.stdout.buffer.flush()
        return
    partial = out.with_name(out.name + ".partial")
    try:
        with partial.open("wb") as sink:
            yield sink
        os.replace(partial, out)
    finally:
        partial.unlink(missing_ok=True)


def _bad_lines(pairs: Path, summary: str, problems: list[LineProblem]) -> CommandFailed:
    listing = "".join(f"\n  {entry}" for entry in describe_problems(problems))
    summary = f" ({summary})" if summary else ""
    return CommandFailed(
        f"{pairs}: fix these lines; nothing was screened{summary}:{listing}", EXIT_BAD_INPUT
    )


def conclude(progress: dict[str, Any]) -> None:
    """One stderr line per failure cause of a done batch; CommandFailed (exit 3) when
    every screening that needed a provider ended in a provider error."""
    for line in failure_lines(progress):
        typer.echo(line, err=True)
    problem = providers_failed(progress)
    if problem is not None:
        raise CommandFailed(problem, EXIT_PROVIDERS_FAILED)


def fail_command(command: str, error: CommandFailed) -> NoReturn:
    typer.echo(f"faithscreen {command}: {error}", err=True)
    raise typer.Exit(error.exit_code)
