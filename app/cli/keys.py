"""`faithscreen keys ...` (create, list, revoke API keys) and the auth rules `serve` applies
at start: FAITHSCREEN_AUTH=off only on a loopback address, and a first admin key printed
once when no key exists."""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import Annotated

import typer

from app.auth import service
from app.auth.service import CreatedKey
from app.cli.db import DatabaseUrlOption, in_session, run_in_session
from app.cli.root import cli
from app.cli.terminal import echo
from app.errors import AppError
from app.models.api_key import AccessRole, ApiKey
from app.settings import Settings
from faithscreen_client.loopback import is_loopback_host as is_loopback

keys = typer.Typer(help="API keys: create, list, revoke.", no_args_is_help=True)
cli.add_typer(keys, name="keys")

EXIT_REFUSED = 1
EXIT_UNSAFE = 2


def _refused(error: AppError) -> typer.Exit:
    echo(f"faithscreen keys: {error.message}", err=True)
    return typer.Exit(EXIT_REFUSED)


@keys.command("create")
def create(
    role: Annotated[AccessRole, typer.Option("--role", help="What the key may do.")],
    name: Annotated[str, typer.Option("--name", help="Who holds it (never reused).")],
    database_url: DatabaseUrlOption = None,
) -> None:
    """Create a key and print it, as the last line: it is shown this once."""
    try:
        created = run_in_session(database_url, lambda s: service.create_key(s, name, role))
    except AppError as error:
        raise _refused(error) from None
    record = created.record
    echo(f"Created key '{record.name}' with role {record.role} (prefix {record.key_prefix}).")
    echo("It is shown this once and stored only as a hash. Send it as")
    echo("'Authorization: Bearer <key>'. The key:")
    echo(created.key)


@keys.command("list")
def list_keys(database_url: DatabaseUrlOption = None) -> None:
    """List every key (revoked ones too): name, role, prefix, times. Never the keys."""
    records = run_in_session(database_url, service.list_keys)
    if not records:
        echo("no keys (`faithscreen keys create --role admin --name NAME` makes one)")
        return
    rows = [("NAME", "ROLE", "PREFIX", "CREATED", "REVOKED", "LAST USED")]
    rows += [_row(record) for record in records]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        echo("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)))


def _row(record: ApiKey) -> tuple[str, str, str, str, str, str]:
    return (
        record.name,
        record.role,
        record.key_prefix,
        _when(record.created_at),
        _when(record.revoked_at),
        _when(record.last_used_at),
    )


def _when(moment: datetime | None) -> str:
    return moment.strftime("%Y-%m-%d %H:%M:%SZ") if moment is not None else "-"


@keys.command("revoke")
def revoke(
    name: Annotated[str, typer.Argument(help="The key's name.")],
    database_url: DatabaseUrlOption = None,
) -> None:
    """Revoke a key: every request with it is refused from now on."""
    try:
        record = run_in_session(database_url, lambda s: service.revoke_key(s, name))
    except AppError as error:
        raise _refused(error) from None
    echo(f"Key '{record.name}' is revoked (since {_when(record.revoked_at)}).")


# ---- What `serve` checks at start ------------------------------------------------------------


def refuse_auth_off_beyond_loopback(settings: Settings, host: str) -> None:
    """FAITHSCREEN_AUTH=off makes every caller an admin: only this machine may call then."""
    if settings.auth == "off" and not is_loopback(host):
        echo(
            f"faithscreen serve: refusing to start: FAITHSCREEN_AUTH=off with --host {host}. "
            "Without keys every caller is an admin, so auth may be off only on a loopback "
            "address (127.0.0.1, ::1, localhost). Bind to one, or turn auth on and use keys.",
            err=True,
        )
        raise typer.Exit(EXIT_UNSAFE)


def announce_first_admin_key(settings: Settings) -> None:
    """With auth on and no key at all (a fresh database), create an admin key and print it
    this once, so the operator can create the other keys."""
    if settings.auth == "off":
        return
    created = asyncio.run(in_session(settings.database_url, service.create_first_admin_key))
    if created is not None:
        _print_first_key(created)


def _print_first_key(created: CreatedKey) -> None:
    rule = "=" * 72
    echo(rule)
    echo("FaithScreen: no API key existed, so an admin key was created.")
    echo(f"Name: {created.record.name}   role: admin   prefix: {created.record.key_prefix}")
    echo("It is shown this once and stored only as a hash: keep it now.")
    echo("Create the other keys with it (POST /v1/keys) or `faithscreen keys create`.")
    echo(f"FIRST ADMIN KEY: {created.key}")
    echo(rule)
