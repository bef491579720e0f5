"""Log lines never show URL credentials: the start-up lines that name the database and the
providers mask them where they are written, and the root handler masks whatever any
logger writes (a driver's error, a traceback, uvicorn's access lines), text or JSON; an
error about a malformed database URL does not quote it."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator

import pytest
from pydantic import SecretStr

from app.db.engine import create_engine
from app.observability.logging import configure_logging
from app.runtime import Runtime
from app.settings import ProviderSettings, Settings

DATABASE_URL = "postgresql://app:pg-secret@db.internal:5432/fs?sslpassword=ssl-secret"
PROVIDER_URL = "https://gw.example/v1?api-key=gw-secret"
SECRETS = ("pg-secret", "ssl-secret", "gw-secret")


@pytest.fixture
def restored_root() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)


async def test_the_start_up_lines_name_the_database_and_providers_masked(
    caplog: pytest.LogCaptureFixture,
) -> None:
    translator = ProviderSettings(
        base_url=PROVIDER_URL, model="gpt-x", api_key=SecretStr("sk-not-logged-either")
    )
    settings = Settings(database_url=DATABASE_URL, translator=translator, auth="off")
    with caplog.at_level(logging.INFO, logger="faithscreen.runtime"):
        runtime = Runtime.create(settings, with_worker=False)
    await runtime.stop()
    for secret in (*SECRETS, "sk-not-logged-either"):
        assert secret not in caplog.text
    messages = [record.getMessage() for record in caplog.records]
    assert "database: postgresql://app:***@db.internal:5432/fs?sslpassword=***" in messages
    assert "translator: model gpt-x at https://gw.example/v1?api-key=***" in messages


@pytest.mark.parametrize("json_lines", [False, True])
@pytest.mark.usefixtures("restored_root")
def test_any_logger_s_line_and_traceback_is_masked(
    monkeypatch: pytest.MonkeyPatch, json_lines: bool
) -> None:
    stream = io.StringIO()
    monkeypatch.setattr("sys.stderr", stream)  # where configure_logging's handler writes
    configure_logging(json=json_lines)
    logging.getLogger("sqlalchemy.pool").warning("cannot connect to %s", DATABASE_URL)
    try:
        raise ConnectionError(f"no answer from {PROVIDER_URL}")
    except ConnectionError:
        logging.getLogger("app.worker").exception("a call failed", extra={"url": DATABASE_URL})
    access = '127.0.0.1:5000 - "GET /review?token=tok-secret HTTP/1.1" 200'
    logging.getLogger("uvicorn.access").info(access)
    output = stream.getvalue()
    for secret in (*SECRETS, "tok-secret"):
        assert secret not in output
    assert "postgresql://app:***@db.internal:5432/fs?sslpassword=***" in output
    assert "GET /review?token=*** HTTP/1.1" in output
    if json_lines:
        entries = [json.loads(line) for line in output.splitlines()]
        assert "https://gw.example/v1?api-key=***" in entries[1]["exception"]
        assert entries[1]["url"] == "postgresql://app:***@db.internal:5432/fs?sslpassword=***"


def test_a_malformed_database_url_is_refused_without_echoing_it() -> None:
    # No "://": nothing marks where its password is, so the message leaves the value out.
    with pytest.raises(ValueError, match="not a database URL") as refused:
        create_engine("postgresql:/app:pg-secret@db/fs")
    assert "pg-secret" not in str(refused.value)
