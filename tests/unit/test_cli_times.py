"""`--since` / `--until` of `report` and `rescore` are read as the API reads them: a time
past the calendar once in UTC is a bad parameter (exit 2), not a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

import app.cli.report  # registers the commands on `cli`
import app.cli.rescore  # noqa: F401
from app.cli.root import cli

EDGES = ["0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00"]


@pytest.mark.parametrize("moment", EDGES)
@pytest.mark.parametrize(
    "command", [["report", "--since"], ["report", "--until"], ["rescore", "--since"]]
)
def test_a_time_past_the_calendar_in_utc_is_a_bad_parameter(
    tmp_path: Path, command: list[str], moment: str
) -> None:
    url = f"sqlite:///{tmp_path / 'faithscreen.db'}"
    result = CliRunner().invoke(cli, [*command, moment, "--database-url", url])
    assert result.exit_code == 2, result.output
    assert command[1] in result.output and "UTC" in result.output
