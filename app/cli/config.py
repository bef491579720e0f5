"""`faithscreen config`: print the effective configuration with secrets masked."""

from __future__ import annotations

import json

from app.cli.root import cli
from app.settings import get_settings


@cli.command("config")
def show_config() -> None:
    """Print the effective configuration (from FAITHSCREEN_* variables), secrets masked."""
    print(json.dumps(get_settings().masked(), indent=2, sort_keys=True))
