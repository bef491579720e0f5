"""`faithscreen eval formats FILE`: the same labelled pairs screened once per reply format,
with every role (the translator, the judge or each panel judge) asked in that format, then
readability, failure causes, agreement, false pass and false alarm per seat × format
(app/calibration/formats.py).

Each format is one batch of its own in the embedded database, screened by the embedded
worker exactly as `eval run` screens a file, under the configured settings with only two
changed: every provider's reply format, and FAITHSCREEN_FORMAT_RETRIES (attempts - 1, so
readability after 2 and 3 attempts is measured). A format the settings refuse for a
configured provider is reported as refused, with the settings' own message, and the other
formats still run. Registered on `eval` by app/cli/evaluate.py.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated, Any, get_args

import typer
from pydantic import ValidationError

from app.calibration.formats import ATTEMPTS, FormatTally, study_json
from app.calibration.formats_html import study_page
from app.calibration.formats_service import format_tally
from app.calibration.formats_text import study_text
from app.cli.batch import (
    EXIT_BAD_INPUT,
    NDJSON,
    CommandFailed,
    PairsArgument,
    SkipInvalidOption,
    fail_command,
    surveyed,
)
from app.cli.db import open_database
from app.cli.evaluate import HtmlOption, evaluate, require_labels
from app.cli.failures import EXIT_PROVIDERS_FAILED, failure_lines, providers_failed
from app.cli.pairs_file import Survey, ndjson_body
from app.cli.screen import (
    intake_locally,
    local_runtime,
    refuse_without_providers,
    wait_for_local_batch,
)
from app.cli.terminal import echo, echo_json
from app.intake.batches import BatchBody
from app.settings import ProviderSettings, Settings, get_settings

Body = dict[str, Any]
# Every value FAITHSCREEN_*_REPLY_FORMAT may name: what the setting accepts is what may be
# studied, so a format the setting learns is studied without a change here.
REPLY_FORMATS: tuple[str, ...] = get_args(ProviderSettings.model_fields["reply_format"].annotation)


def parse_formats(given: str) -> list[str]:
    """The formats of `--formats` in the order given (repeats dropped); CommandFailed
    (exit 2) naming an unknown one before anything runs."""
    formats = list(dict.fromkeys(part.strip() for part in given.split(",") if part.strip()))
    unknown = [name for name in formats if name not in REPLY_FORMATS]
    if unknown or not formats:
        raise CommandFailed(
            f"--formats {given!r}: {', '.join(unknown) or 'no format'} is not a reply format; "
            f"give some of {', '.join(REPLY_FORMATS)}, comma-separated",
            EXIT_BAD_INPUT,
        )
    return formats


def study_settings(settings: Settings, reply_format: str, attempts: int) -> Settings | str:
    """`settings` with every provider (translator, judge, each panel judge) asked in
    `reply_format` and `attempts - 1` format retries, validated as the environment's
    settings are; the settings' message when they refuse it."""
    data = settings.model_dump()
    for provider in (data["translator"], data["judge"], *data["panel_providers"].values()):
        provider["reply_format"] = reply_format
    data["format_retries"] = attempts - 1
    try:
        return type(settings).model_validate(data)
    except ValidationError as error:
        return "; ".join(str(problem["msg"]) for problem in error.errors())


async def run_study(
    pairs: Path,
    found: Survey,
    settings: Settings,
    formats: list[str],
    *,
    attempts: int,
    name: str | None = None,
) -> tuple[Body, list[Body]]:
    """Screen the file once per format (each its own batch, one after the other); the
    study object and each screened batch's last progress body."""
    tallies: list[FormatTally] = []
    progress: list[Body] = []
    for reply_format in formats:
        chosen = study_settings(settings, reply_format, attempts)
        if isinstance(chosen, str):
            echo(f"format {reply_format}: refused by the settings: {chosen}", err=True)
            tallies.append(FormatTally(reply_format, refused=chosen))
            continue
        batch_name = f"{name or pairs.name} [{reply_format}]"
        tally, done = await _screen_in(pairs, found, chosen, reply_format, batch_name)
        tallies.append(tally)
        progress.append(done)
    return study_json(tallies, pairs=found.total, attempts=attempts), progress


async def _screen_in(
    pairs: Path, found: Survey, settings: Settings, reply_format: str, name: str
) -> tuple[FormatTally, Body]:
    body = BatchBody.of(bytearray(b"".join(ndjson_body(pairs, found))), NDJSON)
    runtime = local_runtime(settings)
    try:
        batch = (await intake_locally(runtime, pairs, found, body, name)).batch
        echo(f"format {reply_format}: batch {batch.id}: {found.total} pairs", err=True)
        runtime.start()
        label = f"screening {pairs.name} as {reply_format}"
        done = await wait_for_local_batch(runtime, batch, label=label)
        async with runtime.sessions() as session:
            return await format_tally(session, batch.id, reply_format), done
    finally:
        await runtime.stop()


@evaluate.command("formats")
def formats_command(
    pairs: PairsArgument,
    formats: Annotated[
        str,
        typer.Option(
            "--formats",
            help=f"The reply formats to screen in, comma-separated ({', '.join(REPLY_FORMATS)}).",
        ),
    ] = ",".join(REPLY_FORMATS),
    attempts: Annotated[
        int,
        typer.Option(
            "--attempts",
            min=1,
            max=6,
            help="How many times a seat is asked a pair at most (FAITHSCREEN_FORMAT_RETRIES "
            "+ 1 for the study's runs).",
        ),
    ] = max(ATTEMPTS),
    name: Annotated[
        str | None, typer.Option("--name", help="Names the batches `NAME [format]`.")
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print only the study as one JSON object.")
    ] = False,
    html: HtmlOption = None,
    skip_invalid: SkipInvalidOption = False,
) -> None:
    """Screen a labelled pairs file once per reply format, every role asked in that format
    (the embedded database and worker, as `eval run`), and print per seat × format:
    readable by the 1st, 2nd and 3rd attempt, failures by cause, the preamble rate of
    `text`, false pass and false alarm of its own verdict (95% Wilson intervals over
    pairs), tokens; the screen's rates per format; and agreement between formats."""
    try:
        chosen = parse_formats(formats)
        found = surveyed(pairs, skip_invalid=skip_invalid)
        require_labels(pairs, found)
        settings = get_settings()
        refuse_without_providers(pairs, found, settings)  # before any database is created
        open_database(settings.database_url)
        study, progress = asyncio.run(
            run_study(pairs, found, settings, chosen, attempts=attempts, name=name)
        )
        _emit(study, as_json=as_json, html=html)
        _conclude(progress)
    except CommandFailed as error:
        fail_command("eval formats", error)


def _conclude(progress: list[Body]) -> None:
    """Each batch's failure lines on stderr; exit 3 only when, in every format screened,
    every screening that needed a provider ended in a provider error (one format failing
    is what the study measures)."""
    problems = []
    for done in progress:
        for line in failure_lines(done):
            echo(line, err=True)
        problems.append(providers_failed(done))
    if progress and all(problem is not None for problem in problems):
        raise CommandFailed(str(problems[-1]), EXIT_PROVIDERS_FAILED)


def _emit(study: Body, *, as_json: bool, html: Path | None) -> None:
    if html is not None:
        try:
            html.write_text(study_page(study), encoding="utf-8")
        except OSError as error:
            raise CommandFailed(f"cannot write {html}: {error.strerror}", EXIT_BAD_INPUT) from error
        echo(f"wrote {html}", err=True)
    if as_json:
        echo_json(study)
    else:
        echo(study_text(study), nl=False)
