"""`faithscreen serve` (API, with the worker in the same process unless --no-worker) and
`faithscreen worker` (a worker process alone)."""

from __future__ import annotations

import asyncio
import errno
import logging
import signal
import socket
import sys
from types import FrameType

import typer
import uvicorn
from uvicorn.config import STARTUP_FAILURE

from app.api.client_deadline import deadline_protocol
from app.cli.db import announce_database, open_database
from app.cli.keys import announce_first_admin_key, refuse_auth_off_beyond_loopback
from app.cli.root import cli
from app.cli.terminal import echo
from app.observability.logging import configure_logging
from app.observability.process_families import serve_process_metrics
from app.runtime import Runtime
from app.settings import get_settings

log = logging.getLogger("faithscreen.serve")

HostOption = typer.Option("127.0.0.1", "--host", help="Address to bind.")
PortOption = typer.Option(8000, "--port", help="Port to bind.")
NoWorkerOption = typer.Option(False, "--no-worker", help="Run the API alone, with no worker.")


@cli.command("serve")
def serve(host: str = HostOption, port: int = PortOption, no_worker: bool = NoWorkerOption) -> None:
    """Run the HTTP API (and, unless --no-worker, the screening worker) in one process."""
    settings = get_settings()
    # Without keys every caller is an admin: only this machine may call then.
    refuse_auth_off_beyond_loopback(settings, host)
    # The port first: if it is taken, nothing (migration, first key, worker) has started.
    listener = _bind_or_exit(host, port)
    configure_logging(json=settings.log_format == "json")
    open_database(settings.database_url)
    announce_first_admin_key(settings)  # a fresh database: someone must hold the first key
    # Imported here: the app (the MCP SDK above all) takes seconds to import, which every
    # other command would pay for nothing; serve pays it after binding its port.
    from app.application import create_served_app

    app = create_served_app(settings, with_worker=not no_worker)
    # uvicorn catches SIGTERM/SIGINT, shuts down gracefully, then raises the signal again
    # with our handlers back in place: these make that a clean exit instead of a death by
    # signal, so supervisors see a requested stop as a success.
    signal.signal(signal.SIGTERM, _exit_after_graceful_stop)
    signal.signal(signal.SIGINT, _exit_after_graceful_stop)
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        # SIGTERM: stop taking requests, finish open ones within this bound, then the
        # lifespan stops the worker within FAITHSCREEN_SHUTDOWN_GRACE_SECONDS.
        timeout_graceful_shutdown=max(1, int(settings.shutdown_grace_seconds)),
        # Each request's headers and body within FAITHSCREEN_CLIENT_TIMEOUT_SECONDS.
        http=deadline_protocol(settings.client_timeout_seconds),
        # X-Forwarded-Proto (https, so Secure cookies and HSTS) only from these proxies.
        forwarded_allow_ips=settings.forwarded_allow_ips,
        log_level="info",
        # uvicorn's own lines go through the root handler too: the format chosen above,
        # and URL credentials masked (its access lines show query strings).
        log_config=None,
    )
    server = uvicorn.Server(config)
    # uvicorn logs no address for a socket it is handed.
    log.info("serving http://%s:%d (Ctrl+C to stop)", host, listener.getsockname()[1])
    server.run(sockets=[listener])
    if not server.started:  # as uvicorn.run: a failed startup is not a success
        sys.exit(STARTUP_FAILURE)


def _bind_or_exit(host: str, port: int) -> socket.socket:
    """A listening socket on host:port, or one line and exit 1 (a port in use, mostly)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    # As uvicorn binds: a restart may reuse a port whose old connections linger.
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind((host, port))
    except OSError as error:
        listener.close()
        echo(f"faithscreen serve: {_bind_refusal(host, port, error)}", err=True)
        raise typer.Exit(1) from None
    listener.set_inheritable(True)
    return listener


def _bind_refusal(host: str, port: int, error: OSError) -> str:
    if error.errno == errno.EADDRINUSE:
        return (
            f"port {port} on {host} is in use (another server?): "
            "stop it or choose another with --port"
        )
    return f"cannot bind {host}:{port} ({error.strerror}): choose another --host or --port"


def _exit_after_graceful_stop(signum: int, _frame: FrameType | None) -> None:
    raise SystemExit(0 if signum == signal.SIGTERM else 128 + signum)


@cli.command("worker")
def worker() -> None:
    """Run a worker process alone (any number, against one PostgreSQL database).

    Workers do not migrate: run `faithscreen db upgrade` (or `serve`) first. A worker
    needs a provider for both roles, and refuses to start without.
    """
    missing = get_settings().missing_providers()
    if missing:
        echo(
            "faithscreen worker: no provider for every role, so no job could be screened "
            f"here: set {', '.join(missing)} (`faithscreen providers check` tries them)",
            err=True,
        )
        raise typer.Exit(2)
    configure_logging(json=get_settings().log_format == "json")
    announce_database(get_settings().database_url)
    asyncio.run(_run_worker())


async def _run_worker() -> None:
    runtime = Runtime.create(get_settings(), with_worker=True)
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, runtime.request_stop)
    runtime.start()
    settings = runtime.settings
    endpoint = None
    if settings.worker_metrics_port:  # this process's own counters (docs/operations.md)
        host, port = settings.worker_metrics_host, settings.worker_metrics_port
        endpoint = await serve_process_metrics(host, port)
    try:
        await runtime.wait()
    finally:
        if endpoint is not None:
            endpoint.close()
        await runtime.stop()
