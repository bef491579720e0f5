"""`faithscreen submit`: a pairs file sent to a server as one batch; and what it shares
with `faithscreen screen` (`app.cli.screen`) and `faithscreen eval run`: reading the file
first, naming invalid items by their lines, the results file, the end of a run.

All read the same files (see `app.cli.pairs_file`), send them through the same batch
intake (over HTTP, `submit` through `faithscreen_client`; or `app.intake.batches` in process),
report invalid items by their lines in the file, and write the same results: JSON Lines
`{"index", "id", "external_id", "status", "outcome", "reasons", "line"}` in input order,
with a row for each line --skip-invalid left out (`app.cli.results_file`). stdout
carries the product (the batch id, or the results when no --out is given); progress, one
line per failure cause (`app.cli.failures`) and messages go to stderr. Exit codes: 0 done,
1 the server or the run failed, 2 the input must be fixed (nothing was screened), 3 every
screening that needed a provider ended in a provider error.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any, BinaryIO, Literal, NoReturn

import httpx2
import typer

from app.cli.environment import API_KEY_ENV
from app.cli.failures import EXIT_PROVIDERS_FAILED, failure_lines, providers_failed
from app.cli.pairs_file import (
    LineProblem,
    PairsFileError,
    Survey,
    describe_ignored,
    describe_left_out,
    describe_problems,
    ndjson_body,
    survey,
)
from app.cli.progress import ProgressReport, Snapshot
from app.cli.results_file import lined_results, parsed
from app.cli.root import cli
from app.cli.terminal import echo
from faithscreen_client import Backoff, Batch, Client, FaithScreenError
from faithscreen_client.credentials import mask_credentials_in_text
from faithscreen_client.plain_http import check_key_transport

EXIT_FAILURE = 1
EXIT_BAD_INPUT = 2
NDJSON = "application/x-ndjson"
# Ingesting 10,000 items takes the server a while: the read timeout covers the whole POST.
HTTP_TIMEOUT = httpx2.Timeout(300.0, connect=5.0)
# While waiting, how long the server may stay unreachable before submit gives up.
UNREACHABLE_GRACE_SECONDS = 60.0
# Submitting: a couple of quick retries; waiting: about UNREACHABLE_GRACE_SECONDS of them.
SUBMIT_BACKOFF = Backoff(retries=2, first=0.5, cap=2.0)
WAIT_BACKOFF = Backoff(retries=10, first=1.0, cap=8.0)
STATUS_HINTS = {
    401: f"pass --api-key or set {API_KEY_ENV}",
    403: "this key's role may not do this; a submitter key is needed",
    404: "is this a FaithScreen server with the batches API? Check --server",
    409: "a new --idempotency-key (or --name) makes a new batch",
    413: "split the file into smaller batches",
}

PairsArgument = Annotated[
    Path, typer.Argument(metavar="PAIRS.jsonl", help="One screening request per line.")
]
SkipInvalidOption = Annotated[
    bool,
    typer.Option(
        "--skip-invalid",
        help="Leave out the invalid lines (each named on stderr by its line) and screen the "
        "rest; without it a file with one invalid line is refused whole.",
    ),
]
OutOption = Annotated[
    Path | None,
    typer.Option("--out", metavar="RESULTS.jsonl", help="Write the results here (else stdout)."),
]
ResultsFormatOption = Annotated[
    Literal["jsonl", "csv"],
    typer.Option(
        "--format",
        help="jsonl, or csv (needs --out): the same fields as columns under a header row, a "
        "cell that would start a spreadsheet formula prefixed with '.",
    ),
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
    results_format: ResultsFormatOption = "jsonl",
    name: Annotated[str | None, typer.Option("--name", help="A name for the batch.")] = None,
    skip_invalid: SkipInvalidOption = False,
    idempotency_key: Annotated[
        str | None,
        typer.Option(
            "--idempotency-key",
            help="Default: sha256 of the file's bytes, --name and --skip-invalid, so re-running "
            "the same submit returns the same batch instead of screening it again. Pass another "
            "key (or --name) to screen the same file anew.",
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
        as_csv = csv_to_file(results_format, out)
        found = surveyed(pairs, skip_invalid=skip_invalid)
        key = idempotency_key or default_idempotency_key(found.digest, name, skip_invalid)
        refuse_plain_key(server, api_key)
        client = Client(
            server, api_key, timeout=HTTP_TIMEOUT, backoff=SUBMIT_BACKOFF, poll_seconds=poll_seconds
        )
        with client:
            batch = submit_file(client, pairs, found, name, key)
            if out is not None or not wait:
                echo(batch.id)
            if wait:
                echo(f"batch {batch.id}: {found.total} pairs", err=True)
                done = wait_with_progress(client, batch.id)
                with results_sink(out) as sink:
                    lines = served(client.batch_result_lines(batch.id), "reading results")
                    # Written anew (app/json_lines.py): a server older than this CLI may
                    # send U+2028 raw.
                    sink.writelines(lined_results(parsed(lines), found, as_csv=as_csv))
                conclude(done.model_dump(mode="json"))
    except CommandFailed as error:
        fail_command("submit", error)


def submit_file(client: Client, pairs: Path, found: Survey, name: str | None, key: str) -> Batch:
    """The file's valid lines as one batch; the lines the server refuses named."""
    try:
        return client.submit_batch_jsonl(ndjson_body(pairs, found), name=name, idempotency_key=key)
    except FaithScreenError as error:
        if error.status == 422 and error.details:
            problems = found.intake_problems(error.details)
            raise bad_lines(pairs, error.message, problems) from error
        raise command_failed(error, "submitting the batch") from error


def wait_with_progress(client: Client, batch_id: str) -> Batch:
    """Until every item is done, showing progress; a server briefly away (restarting,
    database 503) is waited for (WAIT_BACKOFF)."""
    client.backoff = WAIT_BACKOFF
    report = ProgressReport(sys.stderr, label=f"batch {batch_id}")

    def show(batch: Batch) -> None:
        report.update(Snapshot(batch.done, batch.total, batch.outcomes))

    try:
        done = client.wait_batch(batch_id, on_progress=show)
    except FaithScreenError as error:
        raise command_failed(error, f"reading /v1/batches/{batch_id}") from error
    report.finish()
    return done


def served(lines: Iterator[bytes], doing: str) -> Iterator[bytes]:
    try:
        yield from lines
    except FaithScreenError as error:
        raise command_failed(error, doing) from error


def refuse_plain_key(server: str, api_key: str | None) -> None:
    """CommandFailed when the key would cross the network in clear text (plain http to a
    host that is not this machine); the command has no opt-in, the library has one."""
    try:
        check_key_transport(server, api_key, None, allow_insecure_http=False)
    except FaithScreenError as error:
        raise CommandFailed(
            f"--server {mask_credentials_in_text(server)}: refusing to send the API key in "
            "clear text over http to another machine; use https://, or an SSH tunnel to "
            "127.0.0.1"
        ) from error


def command_failed(error: FaithScreenError, doing: str) -> CommandFailed:
    """What failed and what to do about it, from the client's error."""
    if error.code == "unreadable_answer":
        return CommandFailed(f"{doing}: {error.message}")
    if error.status is None:
        if isinstance(error.__cause__, httpx2.UnsupportedProtocol):
            return CommandFailed("--server: give a URL like http://host:8000")
        return CommandFailed(
            f"{error.message.replace('cannot reach ', 'cannot reach the server at ', 1)}; "
            "is `faithscreen serve` running there? Check --server."
        )
    hint = STATUS_HINTS.get(error.status)
    suffix = f" ({hint})" if hint else ""
    return CommandFailed(
        f"{doing}: the server answered HTTP {error.status}: {error.message}{suffix}"
    )


def default_idempotency_key(digest: str, name: str | None, skip_invalid: bool = False) -> str:
    """sha256 of the file's digest and the batch name: the same file and name, the same key.
    --skip-invalid is part of it, so a run with it is never taken for one without."""
    left_out = "\n--skip-invalid" if skip_invalid else ""  # without it, the key as it always was
    return hashlib.sha256(f"{digest}\n{name or ''}{left_out}".encode()).hexdigest()


def surveyed(pairs: Path, *, skip_invalid: bool = False) -> Survey:
    """The file surveyed; CommandFailed if it cannot be read, has bad lines (unless
    `skip_invalid`: they are named on stderr and left out) or no pairs."""
    try:
        found = survey(pairs, skip_invalid=skip_invalid)
    except PairsFileError as error:
        raise CommandFailed(str(error), EXIT_BAD_INPUT) from error
    if found.problems:
        raise bad_lines(pairs, "", found.problems)
    if (left_out := describe_left_out(found)) is not None:
        echo(f"faithscreen: {pairs}: {left_out}", err=True)
    if not found.total:
        only = ", only invalid lines" if found.left_out else ""
        raise CommandFailed(f"{pairs} holds no pairs{only}", EXIT_BAD_INPUT)
    if (ignored := describe_ignored(found.ignored)) is not None:
        echo(f"faithscreen: {pairs}: {ignored}", err=True)
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
        raise bad_lines(pairs, str(error.get("message", response.text)), problems)
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
    hint = STATUS_HINTS.get(status)
    suffix = f" ({hint})" if hint else ""
    raise CommandFailed(f"{doing}: the server answered HTTP {status}: {message}{suffix}")


def _error_body(response: httpx2.Response) -> dict[str, Any]:
    """The {"error": {...}} object of our error responses; {} for anything else."""
    try:
        error = response.json().get("error")
    except (ValueError, AttributeError):
        return {}
    return error if isinstance(error, dict) else {}


# ======================================= shared ==========================================


def csv_to_file(results_format: str, out: Path | None) -> bool:
    """Whether to write CSV; CommandFailed (exit 2) for CSV without --out: stdout may be a
    terminal, and a CSV cell keeps an external id's control characters as they are, where
    JSONL writes them as escapes."""
    if results_format == "csv" and out is None:
        raise CommandFailed("--format csv writes a file: give --out FILE", EXIT_BAD_INPUT)
    return results_format == "csv"


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


def bad_lines(pairs: Path, summary: str, problems: list[LineProblem]) -> CommandFailed:
    listing = "".join(f"\n  {entry}" for entry in describe_problems(problems))
    summary = f" ({summary})" if summary else ""
    return CommandFailed(
        f"{pairs}: fix these lines; nothing was screened{summary}:{listing}", EXIT_BAD_INPUT
    )


def conclude(progress: dict[str, Any]) -> None:
    """One stderr line per failure cause of a done batch; CommandFailed (exit 3) when
    every screening that needed a provider ended in a provider error."""
    for line in failure_lines(progress):
        echo(line, err=True)
    problem = providers_failed(progress)
    if problem is not None:
        raise CommandFailed(problem, EXIT_PROVIDERS_FAILED)


def fail_command(command: str, error: CommandFailed) -> NoReturn:
    echo(f"faithscreen {command}: {error}", err=True)
    raise typer.Exit(error.exit_code)
