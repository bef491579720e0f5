"""Log lines as text (the default) or one JSON object per line (FAITHSCREEN_LOG_FORMAT=json).

A JSON line holds time (ISO 8601, UTC), level, logger and message, any `extra` given to
the call (screening_id, batch_id, job_id, ...), and the traceback when there is one.

Either way every line is written with the credentials of any URL in it masked (a database
URL's password, `?api-key=...`), whoever logged it: a driver's error message or a
traceback is not ours to word.
"""

from __future__ import annotations

import json as json_module
import logging
from datetime import UTC, datetime
from typing import Any

from faithscreen_client.credentials import mask_credentials_in_text

TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s %(message)s"
# Every attribute a LogRecord has of its own; anything else came in through `extra`.
_RECORD_ATTRIBUTES = frozenset(vars(logging.makeLogRecord({}))) | {"message", "asctime"}


class TextFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        return mask_credentials_in_text(super().format(record))


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(),
            "level": record.levelname,
            "logger": record.name,
            "message": mask_credentials_in_text(record.getMessage()),
        }
        entry.update(_extra_fields(record))
        if record.exc_info:
            entry["exception"] = mask_credentials_in_text(self.formatException(record.exc_info))
        # default=str: an extra value JSON cannot hold (a UUID, a path) is logged as text.
        return json_module.dumps(entry, default=str, ensure_ascii=False)


def _extra_fields(record: logging.LogRecord) -> dict[str, Any]:
    return {
        key: mask_credentials_in_text(value) if isinstance(value, str) else value
        for key, value in vars(record).items()
        if key not in _RECORD_ATTRIBUTES and not key.startswith("_")
    }


def configure_logging(json: bool, *, level: int = logging.INFO) -> None:
    """Install one stream handler on the root logger, replacing any there (as basicConfig
    with force=True), JSON-formatted when `json`."""
    handler = logging.StreamHandler()
    handler.setFormatter(JsonFormatter() if json else TextFormatter(TEXT_FORMAT))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
        old.close()
    root.addHandler(handler)
    root.setLevel(level)
