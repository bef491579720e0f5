"""The OpenAPI document tells the truth: schemathesis, run against a real `faithscreen
serve` with an admin key, finds no undocumented status, no schema violation, no 5xx.

Bounded for CI: a fixed seed, at most MAX_EXAMPLES examples an operation and MAX_SECONDS
of testing, on PostgreSQL (the in-process API fuzzing runs on both kinds). The run's own
report is the failure message.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.serve_process import StartServe

pytestmark = pytest.mark.one_database("postgres")

FIRST_KEY = re.compile(r"^FIRST ADMIN KEY: (fs_\S+)$", re.MULTILINE)
SCHEMATHESIS = str(Path(sys.executable).parent / "schemathesis")
ROOT = Path(__file__).resolve().parents[2]
MAX_EXAMPLES = 15
MAX_SECONDS = 30
# Per request: generous (schemathesis's own default is 10 s), so a loaded machine's slow
# answer is not reported as a network error. MAX_SECONDS is a budget, never a failure.
REQUEST_TIMEOUT = 60
SEED = 20261202
CHECKS = ",".join(
    [
        "not_a_server_error",
        "status_code_conformance",
        "content_type_conformance",
        "response_schema_conformance",
        "response_headers_conformance",
        "unsupported_method",
        "ignored_auth",
    ]
)
# Revoking keys would revoke the run's own key (the document lists its name), and every
# later request would be a 401: the revocation has tests of its own (test_auth_*.py).
EXCLUDED = ["DELETE /v1/keys/{name}"]


def test_schemathesis_finds_the_document_true(start_serve: StartServe, tmp_path: Path) -> None:
    server = start_serve({"FAITHSCREEN_AUTH": "on"})
    keys = FIRST_KEY.findall(server.log.read_text())
    assert len(keys) == 1, server.log.read_text()
    command = [
        SCHEMATHESIS,
        "run",
        f"{server.base_url}/openapi.json",
        "--header",
        f"Authorization: Bearer {keys[0]}",
        "--checks",
        CHECKS,
        "--max-examples",
        str(MAX_EXAMPLES),
        "--max-time",
        str(MAX_SECONDS),
        "--request-timeout",
        str(REQUEST_TIMEOUT),
        "--seed",
        str(SEED),
        "--generation-database",
        "none",
        "--workers",
        "1",
        "--no-color",
        *(part for name in EXCLUDED for part in ("--exclude-name", name)),
    ]
    env = os.environ | {
        "SCHEMATHESIS_HOOKS": "tests.e2e.schemathesis_hooks",
        "PYTHONPATH": str(ROOT),
    }
    done = subprocess.run(
        command, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=MAX_SECONDS * 10
    )
    report = done.stdout[-20000:] + done.stderr[-5000:]
    assert done.returncode == 0, report
    assert "No issues found" in report or " passed" in report, report
    assert "Traceback" not in server.log.read_text(), server.log.read_text()[-5000:]
