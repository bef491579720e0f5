"""The review pages' CSRF token: bound to this browser's seed cookie and to its session."""

from __future__ import annotations

from starlette.requests import Request

from app.web.session import CSRF_COOKIE, SESSION_COOKIE, BrowserSession, read_session

SEED = "ab" * 32


def request_with(cookies: dict[str, str]) -> Request:
    header = "; ".join(f"{name}={value}" for name, value in cookies.items())
    scope = {"type": "http", "method": "GET", "path": "/review", "headers": []}
    if header:
        scope["headers"] = [(b"cookie", header.encode())]
    return Request(scope)


def test_a_token_is_accepted_by_the_browser_it_was_made_for() -> None:
    session = read_session(request_with({CSRF_COOKIE: SEED, SESSION_COOKIE: "tok"}))
    assert not session.new_seed and session.token == "tok"
    assert session.accepts(session.csrf_token)


def test_a_token_is_refused_with_another_seed_another_session_or_none() -> None:
    token = BrowserSession("tok", SEED, False).csrf_token
    assert not BrowserSession("tok", "cd" * 32, False).accepts(token)
    assert not BrowserSession("other", SEED, False).accepts(token)
    assert not BrowserSession(None, SEED, False).accepts(token)
    assert not BrowserSession("tok", SEED, False).accepts("")


def test_a_browser_without_a_seed_gets_a_fresh_one_that_signed_no_form() -> None:
    session = read_session(request_with({}))
    assert session.new_seed and len(session.seed) == 64
    # Even its own token: the seed was never sent to the browser, so no form carries it.
    assert not session.accepts(session.csrf_token)


def test_a_malformed_seed_cookie_is_replaced() -> None:
    session = read_session(request_with({CSRF_COOKIE: "short"}))
    assert session.new_seed and session.seed != "short"
