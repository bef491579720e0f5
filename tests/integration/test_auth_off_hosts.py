"""FAITHSCREEN_AUTH=off answers only requests addressed to this machine (DNS rebinding):
the app as `faithscreen serve` puts it on a socket, in process, on SQLite and PostgreSQL.

A page of attacker.example that re-points its name at 127.0.0.1 has the browser send
`Host: attacker.example` (and its own Origin): refused on /v1, /mcp and /review before
anything is stored. Loopback names and addresses, with or without a port, pass; with auth
on, the Host is the keys' business and nothing changes."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Literal

import httpx2
import pytest
from fastapi import FastAPI

from app.api.loopback_only import LoopbackOnly
from app.application import create_served_app
from app.settings import Settings
from tests.support.in_process_api import Api, assert_error_shape
from tests.support.review_queue import bearer, make_key

FOREIGN_HOSTS = [
    "attacker.example",
    "attacker.example:8000",
    "127.0.0.1.attacker.example",
    "localhost.attacker.example:8000",
    "a.localhost",
    "192.168.1.5:8000",
    "0.0.0.0:8000",
    "[::ffff:7f00:1]:8000",
    "[::1",
    "localhost:http",
    "",
]
LOOPBACK_HOSTS = ["127.0.0.1:8000", "127.0.0.1", "localhost:8000", "LocalHost", "[::1]:8000"]
LOOPBACK_HOSTS += ["127.9.8.7:80", "[::1]"]


def served_settings(database_url: str, auth: Literal["on", "off"]) -> Settings:
    return Settings(database_url=database_url, auth=auth)


@asynccontextmanager
async def serving(settings: Settings) -> AsyncIterator[Api]:
    """The served app; `Api.app` is the FastAPI app inside, `Api.client` reaches it through
    whatever create_served_app put around it."""
    served = create_served_app(settings, with_worker=False)
    inner = served.app if isinstance(served, LoopbackOnly) else served
    assert isinstance(inner, FastAPI)
    async with inner.router.lifespan_context(inner):
        transport = httpx2.ASGITransport(app=served)
        async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            yield Api(inner, client, inner.state.runtime)


@pytest.fixture
async def auth_off(clean_env: None, database_url: str) -> AsyncIterator[httpx2.AsyncClient]:
    async with serving(served_settings(database_url, "off")) as api:
        yield api.client


def refused(response: httpx2.Response, code: str) -> str:
    assert response.status_code == 403, response.text
    error = assert_error_shape(response.json())
    assert error["code"] == code
    assert "FAITHSCREEN_AUTH=off" in error["message"] and "127.0.0.1" in error["message"]
    return str(error["message"])


async def test_a_foreign_host_cannot_create_a_key(auth_off: httpx2.AsyncClient) -> None:
    for host in FOREIGN_HOSTS:
        answer = await auth_off.post(
            "/v1/keys", json={"name": "rebound", "role": "admin"}, headers={"Host": host}
        )
        message = refused(answer, "host_not_loopback")
        assert "Host" in message
    listed = await auth_off.get("/v1/keys")
    assert listed.status_code == 200 and listed.json() == []  # nothing was created


async def test_a_foreign_host_reaches_neither_mcp_nor_review(auth_off: httpx2.AsyncClient) -> None:
    foreign = {"Host": "attacker.example"}
    # Not GET /mcp: past the check, that is an event stream that stays open.
    for path in ("/review", "/review/sign-in", "/v1/screenings", "/metrics", "/nope"):
        refused(await auth_off.get(path, headers=foreign), "host_not_loopback")
    mcp = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    refused(await auth_off.post("/mcp", json=mcp, headers=foreign), "host_not_loopback")


async def test_loopback_hosts_are_answered(auth_off: httpx2.AsyncClient) -> None:
    for host in LOOPBACK_HOSTS:
        answer = await auth_off.get("/v1/keys", headers={"Host": host})
        assert answer.status_code == 200, (host, answer.text)
    created = await auth_off.post("/v1/keys", json={"name": "mine", "role": "submitter"})
    assert created.status_code == 201, created.text


async def test_a_foreign_origin_is_refused_and_a_loopback_one_is_not(
    auth_off: httpx2.AsyncClient,
) -> None:
    body = {"name": "from-a-page", "role": "admin"}
    for origin in ("http://attacker.example", "null", "http://127.0.0.1.attacker.example"):
        answer = await auth_off.post("/v1/keys", json=body, headers={"Origin": origin})
        refused(answer, "origin_not_loopback")
    for origin in ("http://127.0.0.1:8000", "http://localhost:8000", "http://[::1]:8000"):
        answer = await auth_off.get("/v1/keys", headers={"Origin": origin})
        assert answer.status_code == 200, (origin, answer.text)


async def test_a_request_without_a_host_header_is_refused(
    clean_env: None, database_url: str
) -> None:
    settings = served_settings(database_url, "off")
    async with serving(settings) as api:
        served = LoopbackOnly(api.app)
        sent: list[dict[str, object]] = []

        async def receive() -> dict[str, object]:
            return {"type": "http.request", "body": b"", "more_body": False}

        async def send(message: dict[str, object]) -> None:
            sent.append(message)

        scope = {"type": "http", "method": "GET", "path": "/v1/keys", "headers": []}
        await served(scope | {"query_string": b"", "http_version": "1.0"}, receive, send)  # type: ignore[arg-type]
    assert sent[0]["status"] == 403
    assert b"no Host header" in sent[1]["body"]  # type: ignore[operator]


async def test_with_auth_on_the_host_is_left_to_the_keys(
    clean_env: None, database_url: str
) -> None:
    async with serving(served_settings(database_url, "on")) as api:
        foreign = {"Host": "faithscreen.example.com", "Origin": "https://elsewhere.example"}
        assert (await api.client.get("/v1/keys", headers=foreign)).status_code == 401
        key = await make_key(api, "admin", "admin")
        listed = await api.client.get("/v1/keys", headers=foreign | bearer(key))
        assert listed.status_code == 200, listed.text
