"""FAITHSCREEN_LOG_FORMAT=json: one JSON object per line, with the ids given as `extra`."""

from __future__ import annotations

import io
import json
import logging
import sys
from collections.abc import Iterator
from datetime import datetime, timedelta

import pytest

from app.observability.logging import JsonFormatter, configure_logging


@pytest.fixture
def restored_root() -> Iterator[logging.Logger]:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield root
    root.handlers[:] = handlers
    root.setLevel(level)


def _record(message: str, *args: object, **extra: object) -> logging.LogRecord:
    logger = logging.getLogger("app.worker.runner")
    return logger.makeRecord(
        logger.name, logging.WARNING, __file__, 1, message, args, None, extra=extra
    )


def test_a_record_with_extra_fields_is_one_json_object_on_one_line() -> None:
    record = _record("screening %s\nfailed", "s-1", screening_id="s-1", job_id=7, batch_id="b")
    line = JsonFormatter().format(record)
    assert "\n" not in line
    entry = json.loads(line)
    assert set(entry) == {
        "time",
        "level",
        "logger",
        "message",
        "screening_id",
        "job_id",
        "batch_id",
    }
    assert entry["message"] == "screening s-1\nfailed"
    assert (entry["level"], entry["logger"]) == ("WARNING", "app.worker.runner")
    assert (entry["screening_id"], entry["job_id"], entry["batch_id"]) == ("s-1", 7, "b")


def test_the_time_is_iso_8601_in_utc() -> None:
    entry = json.loads(JsonFormatter().format(_record("hello")))
    assert datetime.fromisoformat(entry["time"]).utcoffset() == timedelta(0)


def test_a_traceback_is_kept_inside_the_object() -> None:
    try:
        raise ValueError("boom")
    except ValueError:
        logger = logging.getLogger("x")
        record = logger.makeRecord("x", logging.ERROR, __file__, 1, "failed", (), sys.exc_info())
    entry = json.loads(JsonFormatter().format(record))
    assert "ValueError: boom" in entry["exception"]


def test_configure_logging_json_writes_json_lines_through_the_root_logger(
    restored_root: logging.Logger, monkeypatch: pytest.MonkeyPatch
) -> None:
    stream = io.StringIO()
    monkeypatch.setattr("sys.stderr", stream)
    configure_logging(json=True)
    logging.getLogger("app.test").info("first", extra={"screening_id": "abc"})
    logging.getLogger("app.test").info("second")
    lines = stream.getvalue().splitlines()
    assert [json.loads(line)["message"] for line in lines] == ["first", "second"]
    assert json.loads(lines[0])["screening_id"] == "abc"
    assert len(restored_root.handlers) == 1


def test_configure_logging_text_is_not_json(
    restored_root: logging.Logger, monkeypatch: pytest.MonkeyPatch
) -> None:
    stream = io.StringIO()
    monkeypatch.setattr("sys.stderr", stream)
    configure_logging(json=False)
    logging.getLogger("app.test").info("plain")
    assert stream.getvalue().rstrip().endswith("INFO app.test plain")
