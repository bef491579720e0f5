"""Replicas starting together on PostgreSQL migrate once; the others wait, then find head."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from app.db.migrate import check_at_head

pytestmark = pytest.mark.postgres

FAITHSCREEN = str(Path(sys.executable).parent / "faithscreen")


def test_concurrent_upgrades_of_an_empty_database_all_succeed(new_postgres_database: str) -> None:
    # Separate processes, as replicas are: Alembic's context is process-global.
    command = [FAITHSCREEN, "db", "upgrade", "--database-url", new_postgres_database]
    runs = [subprocess.Popen(command, stderr=subprocess.PIPE, text=True) for _ in range(4)]
    errors = [run.communicate(timeout=120)[1] for run in runs]
    assert [run.returncode for run in runs] == [0] * 4, errors
    assert check_at_head(new_postgres_database)
