"""The in-process API the integration tests drive (the fixtures that start it are in
tests/integration/conftest.py), the scripted provider's models, and the error shape."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any

import httpx2
from fastapi import FastAPI
from pydantic import SecretStr
from sqlalchemy import func, select

from app.models import Job, PairRow, Review, Screening
from app.runtime import Runtime
from app.settings import ProviderSettings, Settings

TRANSLATOR_MODEL = "translator-model"
JUDGE_MODEL = "judge-model"
TRANSLATOR_KEY = "sk-test-translator-secret"
STORED_TABLES = {"screenings": Screening, "pairs": PairRow, "jobs": Job, "reviews": Review}


@dataclass
class Api:
    app: FastAPI
    client: httpx2.AsyncClient
    runtime: Runtime

    @property
    def settings(self) -> Settings:
        return self.runtime.settings

    async def row_counts(self) -> dict[str, int]:
        """Rows in every table a screening writes to, read with a plain SELECT count."""
        async with self.runtime.sessions() as session:
            return {
                name: (await session.execute(select(func.count()).select_from(model))).scalar_one()
                for name, model in STORED_TABLES.items()
            }


StartApi = Callable[..., AbstractAsyncContextManager[Api]]


def provider(base_url: str, model: str, api_key: str | None = None) -> ProviderSettings:
    """A role pointed at the scripted server. Generous timeouts: the scripted server
    answers at once, and a short timeout would cut off an answer on a loaded machine."""
    return ProviderSettings(
        base_url=base_url,
        model=model,
        api_key=SecretStr(api_key) if api_key else None,
        max_tokens=512,
        timeout_seconds=30,
        connect_timeout_seconds=10,
    )


def assert_error_shape(body: Any) -> dict[str, Any]:
    """Every error body is {"error": {"code": str, "message": str, ...}}; returns the inner."""
    assert isinstance(body, dict) and set(body) == {"error"}, body
    error = body["error"]
    assert isinstance(error, dict), body
    assert isinstance(error.get("code"), str) and error["code"], body
    assert isinstance(error.get("message"), str) and error["message"], body
    return error
