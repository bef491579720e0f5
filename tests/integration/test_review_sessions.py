"""Signing in to /review starts a server-side session: the cookie holds a random token (never
the key, nothing derived from it), the row only the token's hash; signing out deletes the
row, so a copied cookie is void; a revoked key's session stops at once; the CSRF seed is
replaced at sign-in; Secure cookies and HSTS on https (or Secure always, if configured)."""

from __future__ import annotations

import hashlib
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta

import httpx2
import pytest
from sqlalchemy import func, select, update

from app.clock import utcnow
from app.models import WebSession
from app.repositories import api_keys
from app.settings import Settings
from app.web.session import CSRF_COOKIE, RAW_KEY_COOKIE, SESSION_COOKIE
from tests.support.in_process_api import Api, StartApi
from tests.support.review_queue import make_key, revoke

TOKEN = re.compile(r'name="csrf_token" value="([0-9a-f]{64})"')
SIGN_IN_FORM = 'name="key"'
HSTS = "strict-transport-security"


@pytest.fixture
def auth_settings(unconfigured_settings: Settings) -> Settings:
    return unconfigured_settings.model_copy(update={"auth": "on"})


@pytest.fixture
async def web(start_api: StartApi, auth_settings: Settings) -> AsyncIterator[Api]:
    async with start_api(auth_settings, with_worker=False) as api:
        yield api


@asynccontextmanager
async def browser(api: Api, base_url: str = "http://test") -> AsyncIterator[httpx2.AsyncClient]:
    """A client of its own, keeping its own cookies, as a browser would."""
    transport = httpx2.ASGITransport(app=api.app)
    async with httpx2.AsyncClient(transport=transport, base_url=base_url) as client:
        yield client


def csrf_of(page: httpx2.Response) -> str:
    found = TOKEN.search(page.text)
    assert found, page.text
    return found.group(1)


def set_cookie(response: httpx2.Response, name: str) -> str | None:
    """The one Set-Cookie header for `name` in this response, None if there is none."""
    headers = [h for h in response.headers.get_list("set-cookie") if h.startswith(f"{name}=")]
    assert len(headers) <= 1, headers
    return headers[0] if headers else None


def value_of(header: str | None) -> str:
    assert header is not None
    return header.split(";", 1)[0].split("=", 1)[1].strip('"')


def attributes(header: str | None) -> set[str]:
    assert header is not None
    return {part.strip().lower() for part in header.split(";")[1:]}


async def sign_in(client: httpx2.AsyncClient, key: str) -> httpx2.Response:
    form = await client.get("/review/sign-in")
    body = {"key": key, "csrf_token": csrf_of(form), "next": "/review"}
    response = await client.post("/review/sign-in", data=body)
    assert response.status_code == 303, response.text
    return response


async def session_rows(api: Api) -> list[WebSession]:
    async with api.runtime.sessions() as session:
        return list((await session.execute(select(WebSession))).scalars())


async def get_with_cookie(api: Api, token: str, path: str = "/review") -> httpx2.Response:
    """GET from another browser holding a copy of a session cookie (or any value)."""
    async with browser(api) as client:
        client.cookies.set(SESSION_COOKIE, token, path="/review")
        return await client.get(path)


# ---- What the cookie and the row hold -----------------------------------------------------


async def test_the_cookie_holds_a_random_token_and_the_row_only_its_hash(web: Api) -> None:
    key = await make_key(web, "reviewer", "alice")
    async with browser(web) as first, browser(web) as second:
        tokens = [
            value_of(set_cookie(await sign_in(c, key), SESSION_COOKIE)) for c in (first, second)
        ]
        assert (await first.get("/review")).status_code == 200
    # Not the key, nothing of it, and not a function of it: one key, two unrelated tokens.
    assert tokens[0] != tokens[1]
    for token in tokens:
        assert key not in token and key[3:13] not in token
        assert token not in (hashlib.sha256(key.encode()).hexdigest(), key[::-1])
    rows = await session_rows(web)
    assert sorted(row.token_hash for row in rows) == sorted(
        hashlib.sha256(token.encode()).hexdigest() for token in tokens
    )
    stored = " ".join(
        str(getattr(row, c.key)) for row in rows for c in WebSession.__table__.columns
    )
    assert key not in stored and not any(token in stored for token in tokens)
    assert hashlib.sha256(key.encode()).hexdigest() not in stored  # nor the key's own hash


async def test_a_pasted_key_in_the_session_cookie_signs_nobody_in(web: Api) -> None:
    key = await make_key(web, "admin", "root")
    page = await get_with_cookie(web, key)
    assert page.status_code == 401 and SIGN_IN_FORM in page.text


async def test_an_old_raw_key_cookie_is_deleted_and_signs_nobody_in(web: Api) -> None:
    key = await make_key(web, "reviewer", "alice")
    async with browser(web) as client:
        client.cookies.set(RAW_KEY_COOKIE, key, path="/review")
        page = await client.get("/review")
    assert page.status_code == 401 and SIGN_IN_FORM in page.text
    assert re.search(r"max-age=0", set_cookie(page, RAW_KEY_COOKIE) or "", re.IGNORECASE)


# ---- Ending a session ---------------------------------------------------------------------


async def test_sign_out_deletes_the_row_and_the_old_cookie_gets_the_sign_in_page(
    web: Api,
) -> None:
    key = await make_key(web, "reviewer", "alice")
    async with browser(web) as client:
        token = value_of(set_cookie(await sign_in(client, key), SESSION_COOKIE))
        queue = await client.get("/review")
        assert queue.status_code == 200
        assert (await get_with_cookie(web, token)).status_code == 200
        out = await client.post("/review/sign-out", data={"csrf_token": csrf_of(queue)})
        assert out.status_code == 303 and out.headers["location"] == "/review/sign-in"
    assert await session_rows(web) == []
    replayed = await get_with_cookie(web, token)
    assert replayed.status_code == 401 and SIGN_IN_FORM in replayed.text
    assert "no longer valid" in replayed.text


async def test_revoking_the_key_ends_its_sessions(web: Api) -> None:
    key = await make_key(web, "reviewer", "alice")
    async with browser(web) as client:
        await sign_in(client, key)
        assert (await client.get("/review")).status_code == 200
        await revoke(web, "alice")
        refused = await client.get("/review")
    assert refused.status_code == 401 and "no longer valid" in refused.text
    assert await session_rows(web) == []


async def test_a_revoked_key_is_checked_on_every_request_even_with_its_row_left(
    web: Api,
) -> None:
    key = await make_key(web, "reviewer", "alice")
    async with browser(web) as client:
        await sign_in(client, key)
        async with web.runtime.sessions() as session:
            assert await api_keys.revoke(session, "alice")  # the key only, not its sessions
            await session.commit()
        assert len(await session_rows(web)) == 1
        refused = await client.get("/review")
    assert refused.status_code == 401 and "no longer valid" in refused.text


async def test_an_expired_session_is_refused(web: Api) -> None:
    key = await make_key(web, "reviewer", "alice")
    async with browser(web) as client:
        await sign_in(client, key)
        (row,) = await session_rows(web)
        assert row.expires_at - row.created_at == timedelta(seconds=12 * 3600)
        async with web.runtime.sessions() as session:
            past = utcnow() - timedelta(seconds=1)
            await session.execute(update(WebSession).values(expires_at=past))
            await session.commit()
        refused = await client.get("/review")
    assert refused.status_code == 401 and "no longer valid" in refused.text


async def test_signing_in_again_replaces_the_browsers_session(web: Api) -> None:
    alice = await make_key(web, "reviewer", "alice")
    root = await make_key(web, "admin", "root")
    async with browser(web) as client:
        first = value_of(set_cookie(await sign_in(client, alice), SESSION_COOKIE))
        await sign_in(client, root)
        assert "root" in (await client.get("/review")).text
    assert len(await session_rows(web)) == 1
    assert (await get_with_cookie(web, first)).status_code == 401


async def test_a_submitter_key_gets_no_session(web: Api) -> None:
    key = await make_key(web, "submitter", "sub")
    async with browser(web) as client:
        form = await client.get("/review/sign-in")
        body = {"key": key, "csrf_token": csrf_of(form), "next": "/review"}
        refused = await client.post("/review/sign-in", data=body)
    assert refused.status_code == 403 and set_cookie(refused, SESSION_COOKIE) is None
    async with web.runtime.sessions() as session:
        assert (await session.execute(select(func.count(WebSession.id)))).scalar_one() == 0


# ---- CSRF seed ----------------------------------------------------------------------------


async def test_the_csrf_seed_is_replaced_at_sign_in(web: Api) -> None:
    key = await make_key(web, "reviewer", "alice")
    async with browser(web) as client:
        form = await client.get("/review/sign-in")
        before = value_of(set_cookie(form, CSRF_COOKIE))
        body = {"key": key, "csrf_token": csrf_of(form), "next": "/review"}
        signed = await client.post("/review/sign-in", data=body)
        after = value_of(set_cookie(signed, CSRF_COOKIE))
        assert re.fullmatch(r"[0-9a-f]{64}", after) and after != before
        # The sign-in form's token was made with the old seed: it signs nothing now.
        stale = await client.post("/review/sign-out", data={"csrf_token": csrf_of(form)})
        assert stale.status_code == 403
        assert (await client.get("/review")).status_code == 200  # still signed in


# ---- Secure and HSTS ----------------------------------------------------------------------


def secure_flags(responses: list[tuple[httpx2.Response, str]]) -> set[bool]:
    """Whether each (response, cookie name)'s Set-Cookie carries Secure."""
    return {"secure" in attributes(set_cookie(r, name)) for r, name in responses}


async def test_over_https_cookies_are_secure_and_responses_carry_hsts(web: Api) -> None:
    key = await make_key(web, "reviewer", "alice")
    async with browser(web, "https://review.example") as client:
        form = await client.get("/review/sign-in")
        body = {"key": key, "csrf_token": csrf_of(form), "next": "/review"}
        signed = await client.post("/review/sign-in", data=body)
        page = await client.get("/review")
        health = await client.get("/healthz")
    assert signed.status_code == 303 and page.status_code == 200
    pairs = [(form, CSRF_COOKIE), (signed, SESSION_COOKIE), (signed, CSRF_COOKIE)]
    assert secure_flags(pairs) == {True}
    for response in (form, signed, page, health):
        assert response.headers[HSTS] == "max-age=31536000"


async def test_over_http_nothing_is_secure_and_there_is_no_hsts(web: Api) -> None:
    key = await make_key(web, "reviewer", "alice")
    async with browser(web) as client:
        form = await client.get("/review/sign-in")
        signed = await sign_in(client, key)
    assert secure_flags([(form, CSRF_COOKIE), (signed, SESSION_COOKIE)]) == {False}
    assert HSTS not in form.headers and HSTS not in signed.headers


async def test_cookie_secure_always_marks_cookies_secure_over_http(
    start_api: StartApi, auth_settings: Settings
) -> None:
    # As behind a TLS proxy that is not trusted: the browser is on https, the app sees http.
    settings = auth_settings.model_copy(update={"cookie_secure": "always"})
    async with start_api(settings, with_worker=False) as api:
        key = await make_key(api, "reviewer", "alice")
        async with browser(api) as client:
            form = await client.get("/review/sign-in")
            # The browser's https page sends the Secure seed back; this http client would not.
            seed = {"Cookie": f"{CSRF_COOKIE}={value_of(set_cookie(form, CSRF_COOKIE))}"}
            body = {"key": key, "csrf_token": csrf_of(form), "next": "/review"}
            signed = await client.post("/review/sign-in", data=body, headers=seed)
    assert signed.status_code == 303, signed.text
    pairs = [(form, CSRF_COOKIE), (signed, SESSION_COOKIE), (signed, CSRF_COOKIE)]
    assert secure_flags(pairs) == {True}
    assert HSTS not in signed.headers  # the request was http: HSTS would mean nothing
