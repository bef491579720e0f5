"""`faithscreen local-model start|stop|status`: a real OpenAI-compatible server and a small
open model on loopback, for a first screening without an API key and for the suite's
`real_model` tests. `start` prints `export` lines, so `eval "$(faithscreen local-model
start)"` points this shell's later commands at it; everything else goes to stderr."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from app.cli.root import cli
from app.cli.terminal import echo
from app.local_model import service
from app.local_model.schemas import (
    DEFAULT_PORT,
    NOT_EVIDENTIAL_WHY,
    LocalServer,
    ServerOptions,
)

local_model = typer.Typer(
    help="A local llama.cpp server with SmolLM2-135M-Instruct: start, stop, status.",
    no_args_is_help=True,
)
cli.add_typer(local_model, name="local-model")

EXIT_FAILED = 1
DEFAULT_HOME = Path.home() / ".cache" / "faithscreen" / "local-model"

HomeOption = Annotated[
    Path,
    typer.Option("--home", help="Where the model file, the server's log and its state live."),
]


def _say(line: str) -> None:
    echo(f"faithscreen local-model: {line}", err=True)


def _print_environment(server: LocalServer) -> None:
    for name, value in server.environment().items():
        echo(f"export {name}={value}")


@local_model.command("install")
def install(home: HomeOption = DEFAULT_HOME) -> None:
    """Install (or find) the server and the model, without starting anything."""
    try:
        binary, model = service.server_binary(_say), service.model_file(home, _say)
    except service.LocalModelError as error:
        _say(str(error))
        raise typer.Exit(EXIT_FAILED) from None
    _say(f"server {binary}")
    _say(f"model {model}")


@local_model.command("start")
def start(
    home: HomeOption = DEFAULT_HOME,
    port: Annotated[int, typer.Option("--port", help="Loopback port.")] = DEFAULT_PORT,
    context_tokens: Annotated[
        int, typer.Option("--context-tokens", help="The server's context window.")
    ] = 8192,
) -> None:
    """Install or find llama-server and the model, start it, wait until it is healthy,
    and print the FAITHSCREEN_*_BASE_URL/_MODEL lines to use, with the grammar reply
    format, the caps that fit it, a concurrency for one slot, and both roles marked not
    evidential (the model is at chance; stderr says so). A running one is reused."""
    options = ServerOptions(port=port, context_tokens=context_tokens)
    try:
        server = service.start(home, options, _say)
    except service.LocalModelError as error:
        _say(str(error))
        raise typer.Exit(EXIT_FAILED) from None
    _say(f"serving {server.model} at {server.base_url} (pid {server.pid}); log in {home}")
    _say(NOT_EVIDENTIAL_WHY)
    _print_environment(server)


@local_model.command("stop")
def stop(home: HomeOption = DEFAULT_HOME) -> None:
    """Stop the server `start` started (the model file stays, for the next start). A pid
    that is no longer that server (its command line, port and start time) is left alone."""
    try:
        server = service.stop(home)
    except service.LocalModelError as error:
        _say(str(error))
        raise typer.Exit(EXIT_FAILED) from None
    _say(f"stopped pid {server.pid}" if server else "no local model server was running")


@local_model.command("status")
def status(home: HomeOption = DEFAULT_HOME) -> None:
    """Print the settings of the running server; exit 1 when none runs."""
    server = service.running(home)
    if server is None:
        _say("not running (`faithscreen local-model start` starts it)")
        raise typer.Exit(EXIT_FAILED)
    _print_environment(server)
