"""The review pages' cookies and their CSRF protection.

Two cookies, both HttpOnly, SameSite=Strict, path /review, and Secure on a request that
came over https (or on every one, FAITHSCREEN_COOKIE_SECURE=always):

- the session cookie holds a random token naming a server-side session (web_sessions
  stores its hash and the key it stands for; access.py checks that key on every request,
  so a revoked key stops working at once). Never the key: a copied cookie is worth one
  session, which signing out, expiry or revoking the key ends;
- the CSRF cookie holds a random seed, set on the first page a browser is shown and
  replaced at every sign-in.

A form carries `csrf_token` = HMAC-SHA256(seed, session token or ""). Forging it takes both
cookies, which another site can neither read nor (SameSite=Strict) make the browser send.
No server secret is needed, so every replica, and a restarted one, accepts the forms the
others rendered. A signed-in token also names its session: signing in again, as anyone,
invalidates the forms shown before.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass
from urllib.parse import parse_qs

from starlette.requests import Request
from starlette.responses import Response

from app.api.deps import get_runtime
from app.auth.keys import hash_key
from app.errors import AppError

SESSION_COOKIE = "faithscreen_review_session"
CSRF_COOKIE = "faithscreen_review_csrf"
# Where earlier versions kept the pasted key itself: deleted wherever it is still sent.
RAW_KEY_COOKIE = "faithscreen_review_key"
COOKIE_PATH = "/review"
CSRF_FIELD = "csrf_token"
# Forms carry a key, a note and a few words: anything far larger is not from our pages.
MAX_FORM_BYTES = 256 * 1024
# The sign-in form carries a key and a page to return to; it is read before anyone is
# known, so it is held to far less.
SIGN_IN_FORM_BYTES = 16 * 1024
_SEED_BYTES = 32
_TOKEN_BYTES = 32
_TOKEN_SHAPE = re.compile(r"[A-Za-z0-9_-]{43}")  # token_urlsafe(32)


class CsrfRejected(AppError):
    def __init__(self) -> None:
        super().__init__(
            403,
            "csrf_rejected",
            "This form is out of date or did not come from these pages. "
            "Reload the page and try again.",
        )


@dataclass(frozen=True, slots=True)
class BrowserSession:
    """What one request's cookies say: the session token (if any) and the CSRF seed."""

    token: str | None
    seed: str
    # True when the seed was made for this request and must be sent back as a cookie.
    new_seed: bool

    @property
    def csrf_token(self) -> str:
        message = (self.token or "").encode("utf-8")
        return hmac.new(self.seed.encode("ascii"), message, hashlib.sha256).hexdigest()

    def accepts(self, token: str) -> bool:
        # A seed made for this very request never signed a form: nothing can match it.
        return not self.new_seed and hmac.compare_digest(self.csrf_token, token)


def read_session(request: Request) -> BrowserSession:
    token = request.cookies.get(SESSION_COOKIE)
    seed = request.cookies.get(CSRF_COOKIE, "")
    if not _well_formed_seed(seed):
        return BrowserSession(token, _new_seed(), True)
    return BrowserSession(token, seed, False)


def _new_seed() -> str:
    return secrets.token_hex(_SEED_BYTES)


def _well_formed_seed(seed: str) -> bool:
    return len(seed) == 2 * _SEED_BYTES and all(c in "0123456789abcdef" for c in seed)


def new_session_token() -> tuple[str, str]:
    """A token for the cookie and its hash for web_sessions. 256 random bits, unrelated to
    the key: nothing about the key can be learned from it, nor the token from the row."""
    token = secrets.token_urlsafe(_TOKEN_BYTES)
    return token, hash_key(token)


def session_token_hash(token: str) -> str | None:
    """What web_sessions stores for a token (the hash API keys are stored by, for the same
    reason: 256 random bits need no slow hash); None for a cookie we never issued."""
    return hash_key(token) if _TOKEN_SHAPE.fullmatch(token) else None


async def read_form(request: Request) -> dict[str, str]:
    """An urlencoded form body, one value per field (the first), refusing oversized ones."""
    body = await request.body()
    if len(body) > MAX_FORM_BYTES:
        raise AppError(413, "payload_too_large", "This form is larger than any page sends.")
    try:
        fields = parse_qs(body.decode("utf-8"), keep_blank_values=True, strict_parsing=False)
    except UnicodeDecodeError as error:
        raise AppError(400, "bad_request", "The form is not valid UTF-8.") from error
    return {name: values[0] for name, values in fields.items()}


async def checked_form(request: Request, session: BrowserSession) -> dict[str, str]:
    """The posted form, once its CSRF token matches this browser's cookies."""
    form = await read_form(request)
    if not session.accepts(form.get(CSRF_FIELD, "")):
        raise CsrfRejected()
    return form


def secure_cookies(request: Request) -> bool:
    """`request.url.scheme` is https only when the client's connection was, or a proxy in
    FAITHSCREEN_FORWARDED_ALLOW_IPS said so (uvicorn reads X-Forwarded-Proto)."""
    always = get_runtime(request).settings.cookie_secure == "always"
    return always or request.url.scheme == "https"


def _cookie(response: Response, request: Request, name: str, value: str) -> None:
    response.set_cookie(
        name,
        value,
        path=COOKIE_PATH,
        httponly=True,
        samesite="strict",
        secure=secure_cookies(request),
    )


def _forget(response: Response, request: Request, name: str) -> None:
    response.delete_cookie(
        name, path=COOKIE_PATH, httponly=True, samesite="strict", secure=secure_cookies(request)
    )


def keep_seed(response: Response, request: Request, session: BrowserSession) -> None:
    if session.new_seed:
        _cookie(response, request, CSRF_COOKIE, session.seed)


def keep_signed_in(response: Response, request: Request, token: str) -> None:
    """The new session's cookie, and a new CSRF seed: no form (or seed) from before the
    sign-in is accepted after it."""
    _cookie(response, request, SESSION_COOKIE, token)
    _cookie(response, request, CSRF_COOKIE, _new_seed())
    if RAW_KEY_COOKIE in request.cookies:
        _forget(response, request, RAW_KEY_COOKIE)


def forget_session(response: Response, request: Request) -> None:
    """Delete the session cookie, and a raw-key cookie, wherever the browser sent one."""
    for name in (SESSION_COOKIE, RAW_KEY_COOKIE):
        if name in request.cookies:
            _forget(response, request, name)
