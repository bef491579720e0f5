"""Which database a URL names, as a person checks it: a SQLite file by its absolute path
(`sqlite:///faithscreen.db` is relative to the directory a command runs in, so two
directories mean two databases), any other URL with its password masked."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import make_url
from sqlalchemy.exc import ArgumentError

from faithscreen_client.credentials import mask_url_credentials

IN_MEMORY = ("", ":memory:")


def database_location(url: str) -> str:
    """`/abs/dir/faithscreen.db` for a SQLite file URL, else the URL masked."""
    try:
        parsed = make_url(url)
    except (ArgumentError, ValueError):
        return mask_url_credentials(url)
    if parsed.get_backend_name() != "sqlite" or (parsed.database or "") in IN_MEMORY:
        return mask_url_credentials(url)
    return str(Path(parsed.database or "").resolve())
