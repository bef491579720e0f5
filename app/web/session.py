"""The review pages' cookies and their CSRF protection.

Two cookies, both HttpOnly, SameSite=Strict, path /review, Secure over https:

- the key cookie holds the API key the reviewer pasted (checked again on every request,
  so a revoked key stops working at once);
- the CSRF cookie holds a random seed, set on the first page a browser is shown.

A form carries `csrf_token` = HMAC-SHA256(seed, key or ""). Forging it takes both cookies,
which another site can neither read nor (SameSite=Strict) make the browser send. No server
secret is needed, so every replica, and a restarted one, accepts the forms the others
rendered. A signed-in token also names its key: signing in as someone else invalidates
the forms shown before.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from urllib.parse import parse_qs

from starlette.requests import Request
from starlette.responses import Response

from app.errors import AppError

KEY_COOKIE = "faithscreen_review_key"
CSRF_COOKIE = "faithscreen_review_csrf"
COOKIE_PATH = "/review"
CSRF_FIELD = "csrf_token"
# Forms carry a key, a note and a few words: anything far larger is not from our pages.
MAX_FORM_BYTES = 256 * 1024
_SEED_BYTES = 32


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
    """What one request's cookies say: the pasted key (if any) and the CSRF seed."""

    key: str | None
    seed: str
    # True when the seed was made for this request and must be sent back as a cookie.
    new_seed: bool

    @property
    def csrf_token(self) -> str:
        message = (self.key or "").encode("utf-8")
        return hmac.new(self.seed.encode("ascii"), message, hashlib.sha256).hexdigest()

    def accepts(self, token: str) -> bool:
        # A seed made for this very request never signed a form: nothing can match it.
        return not self.new_seed and hmac.compare_digest(self.csrf_token, token)


def read_session(request: Request) -> BrowserSession:
    seed = request.cookies.get(CSRF_COOKIE, "")
    if not _well_formed_seed(seed):
        return BrowserSession(request.cookies.get(KEY_COOKIE), secrets.token_hex(_SEED_BYTES), True)
    return BrowserSession(request.cookies.get(KEY_COOKIE), seed, False)


def _well_formed_seed(seed: str) -> bool:
    return len(seed) == 2 * _SEED_BYTES and all(c in "0123456789abcdef" for c in seed)


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


def _cookie(response: Response, request: Request, name: str, value: str) -> None:
    response.set_cookie(
        name,
        value,
        path=COOKIE_PATH,
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
    )


def keep_seed(response: Response, request: Request, session: BrowserSession) -> None:
    if session.new_seed:
        _cookie(response, request, CSRF_COOKIE, session.seed)


def keep_key(response: Response, request: Request, key: str) -> None:
    _cookie(response, request, KEY_COOKIE, key)


def forget_key(response: Response, request: Request) -> None:
    response.delete_cookie(
        KEY_COOKIE,
        path=COOKIE_PATH,
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
    )
