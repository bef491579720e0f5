"""Rendering the review pages, and turning refusals into readable pages instead of JSON.

Handlers raise `PageProblem` (an AppError, with where to go back to) or `SignInNeeded`;
the two handlers installed here render them. The session dependency sees the exception
first, so nothing a refused post did is committed.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from fastapi import FastAPI
from starlette.requests import Request
from starlette.responses import Response
from starlette.templating import Jinja2Templates

from app.auth.principal import Principal
from app.errors import AppError
from app.page_text import finalized
from app.web.presentation import describe_reason, prose, verdict_shown, when
from app.web.session import BrowserSession, forget_session, keep_seed, read_session

templates = Jinja2Templates(directory=Path(__file__).parent / "templates")
# Every `{{ }}` of every page: no bidi control reaches the browser as itself (a plain
# marker instead; app/page_text.py). Set before any template is compiled, as Jinja reads
# it then.
templates.env.finalize = finalized
templates.env.globals.update(
    when=when, verdict_shown=verdict_shown, describe_reason=describe_reason
)
# `{{ sentence | prose }}`: a reason's or a finding's sentence, its `code` in <code>.
templates.env.filters["prose"] = prose

# Everything is served by the app itself: no other origin may supply a script, a style or
# a frame, and no page may be framed (clickjacking a Faithful button).
SECURITY_HEADERS: Mapping[str, str] = {
    "Content-Security-Policy": (
        "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; "
        "img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    ),
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    # Pages show who holds what right now: never from a cache, never stored on disk.
    "Cache-Control": "no-store",
}
TITLES: Mapping[int, str] = {
    400: "That request could not be read",
    401: "Sign in needed",
    403: "Not allowed",
    404: "Not found",
    409: "That cannot be done now",
    413: "Too large",
    422: "Some input is not valid",
}


class PageProblem(Exception):
    """A refusal to show as a page, with a way back."""

    def __init__(
        self, error: AppError, *, back_url: str | None = None, back_label: str = ""
    ) -> None:
        super().__init__(error.message)
        self.error = error
        self.back_url = back_url
        self.back_label = back_label or "Go back"


class SignInNeeded(Exception):
    """No usable sign-in: no session cookie, or one whose session ended or whose key was
    revoked."""

    def __init__(self, message: str | None = None) -> None:
        super().__init__(message or "")
        self.message = message


def render(
    request: Request,
    browser: BrowserSession,
    name: str,
    context: Mapping[str, Any],
    *,
    status_code: int = 200,
) -> Response:
    values = {"csrf_token": browser.csrf_token, "principal": None, "signed_in": False}
    response = templates.TemplateResponse(
        request, name, {**values, **context}, status_code=status_code, headers=SECURITY_HEADERS
    )
    keep_seed(response, request, browser)
    return response


def sign_in_page(
    request: Request,
    browser: BrowserSession,
    *,
    error: str | None,
    status_code: int,
    next_url: str | None = None,
) -> Response:
    """The sign-in form; `next` brings the reviewer back to the page they asked for."""
    # A page asked for is worth returning to; a refused post is not (it cannot be a GET).
    wanted = str(request.url.replace(scheme="", netloc="")) if request.method == "GET" else None
    next_url = safe_next(next_url or request.query_params.get("next") or wanted)
    context = {"error": error, "next_url": next_url}
    return render(request, browser, "sign_in.html", context, status_code=status_code)


def safe_next(url: str | None) -> str:
    """Only a path of these pages: a sign-in must never send anyone to another site."""
    if url and url.startswith("/review") and "\\" not in url and not url.startswith("//"):
        return url if not url.startswith("/review/sign-") else "/review"
    return "/review"


async def _on_page_problem(request: Request, problem: PageProblem) -> Response:
    error = problem.error
    context = {
        "title": TITLES.get(error.status_code, "Something went wrong"),
        "problem": error.message,
        "code": error.code,
        "status_code": error.status_code,
        "back_url": problem.back_url,
        "back_label": problem.back_label,
        "offer_sign_in": error.status_code == 403,
    }
    return render(
        request, read_session(request), "error.html", context, status_code=error.status_code
    )


async def _on_sign_in_needed(request: Request, problem: SignInNeeded) -> Response:
    browser = read_session(request)
    response = sign_in_page(request, browser, error=problem.message, status_code=401)
    forget_session(response, request)
    return response


def install_page_handlers(app: FastAPI) -> None:
    app.add_exception_handler(PageProblem, _on_page_problem)  # type: ignore[arg-type]
    app.add_exception_handler(SignInNeeded, _on_sign_in_needed)  # type: ignore[arg-type]


def context_for(principal: Principal, signed_in: bool, **extra: Any) -> dict[str, Any]:
    return {"principal": principal, "signed_in": signed_in, **extra}
