"""/review: the reviewer web page (server-rendered, no build step, nothing from elsewhere).

Every rule is the queue service's (app/review_queue/service.py), the one the API uses;
these handlers read forms, call it, and render. Posts follow post/redirect/get, so a
reload never posts twice.

Deciding an open item (or one awaiting a double review's second decision) claims it and
decides in one post: pressing `f`, `m` or `u` on an item nobody holds is what a reviewer
means. A decision form carries its defects as one checkbox each (`defect:NAME`); Undo and
an admin's adjudication post to their own addresses, as over the API. The service still
checks the claimant: the claim is taken first in the same transaction, so an item another
reviewer holds (409) or one already resolved (409) is refused, and nothing of the post is
kept.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Annotated, TypeVar

from fastapi import APIRouter, Depends, FastAPI
from pydantic import BaseModel, ValidationError
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from app.api.body_cap import BodyCap, cap_body
from app.api.deps import RuntimeDep, SessionDep
from app.api.queue_schemas import (
    AdjudicationRequest,
    DecisionRequest,
    QueueItemOut,
    QueuePageOut,
    ReopenRequest,
    Viewer,
)
from app.auth.principal import Principal
from app.clock import utcnow
from app.errors import AppError, NotFound
from app.intake.requests import plain_message
from app.models.api_key import AccessRole
from app.reports.review_stats import person_stats
from app.repositories import review_measures
from app.review_queue import service
from app.review_queue.service import QueueFilters, ReviewRules
from app.vocabulary import QueueStatus
from app.web.access import (
    NOT_A_KEY,
    BrowserDep,
    PageReviewerDep,
    end_session,
    start_session,
)
from app.web.item_view import item_context, tool_calls_shown
from app.web.pages import (
    PageProblem,
    context_for,
    install_page_handlers,
    render,
    safe_next,
    sign_in_page,
)
from app.web.queue_filters import filters_from, page_links
from app.web.queue_view import queue_rows, reason_choices, totals
from app.web.session import (
    MAX_FORM_BYTES,
    SIGN_IN_FORM_BYTES,
    BrowserSession,
    checked_form,
    forget_session,
    keep_signed_in,
)
from app.web.stats_view import days_from, person_row
from app.web.thread_view import DONE_MESSAGES as THREAD_DONE_MESSAGES
from app.web.thread_view import thread_context
from app.web.transport_security import StrictTransportSecurity

router = APIRouter(prefix="/review", include_in_schema=False)
Body = TypeVar("Body", bound=BaseModel)
PAGE_SIZE = 50
# Fixed wording for `?done=`: a query parameter never puts its own text on the page.
DONE_MESSAGES = {
    "claimed": "You hold this item now.",
    "released": "Released: the item is open again.",
    "decided": "Decision recorded: the item is resolved.",
    "final": "Decision recorded: the item is resolved. You decided it blind, or second on a "
    "double review, so it is final: no undo (an admin can reopen it).",
    "first": "Decision recorded. This is a double review: a second person decides it next.",
    "disputed": "Decision recorded. It differs from the first one: the item is disputed until "
    "an admin adjudicates it. A second decision is final: no undo.",
    "unsure": "Unsure recorded: the item is back in the queue for someone else.",
    "withdrawn": "Withdrawn: your decision is taken back and the item is yours again.",
    "adjudicated": "Adjudicated: the item is resolved.",
    "reopened": "Reopened: the item is open again.",
    **THREAD_DONE_MESSAGES,
}
# What a decision led to, as `?done=`.
DECIDED_AS = {
    QueueStatus.RESOLVED: "decided",
    QueueStatus.AWAITING_SECOND: "first",
    QueueStatus.DISPUTED: "disputed",
    QueueStatus.OPEN: "unsure",
}
# One checkbox a defect (a form carries one value per field): `defect:wrong_type=on`.
DEFECT_FIELD = "defect:"
SUBMITTER_REFUSED = (
    "Only a reviewer or admin key can use the review pages (this one is a submitter's or a "
    "metrics scraper's): sign in with a reviewer or admin key."
)


def install_review_pages(app: FastAPI) -> None:
    """The one call create_app makes: the routes, their HTML error pages, and HSTS on
    https responses (a browser, which is what heeds it, comes for these pages)."""
    from app.web import thread_pages  # its posts use this module's form handling

    install_page_handlers(app)
    app.include_router(router)
    app.include_router(thread_pages.router)
    app.add_middleware(StrictTransportSecurity)


@contextmanager
def shown_as_page(item_id: int | None = None) -> Iterator[None]:
    """A service refusal becomes a readable page, with a link back to the item."""
    try:
        yield
    except AppError as error:
        back = f"/review/items/{item_id}" if item_id is not None else None
        raise PageProblem(error, back_url=back, back_label=f"Back to item #{item_id}") from error


FORM_CAP = BodyCap(MAX_FORM_BYTES, "This form is larger than any page sends.")
SIGN_IN_CAP = BodyCap(SIGN_IN_FORM_BYTES, "This sign-in form is larger than the page sends.")


async def guarded_form(
    request: Request, browser: BrowserSession, cap: BodyCap = FORM_CAP
) -> dict[str, str]:
    """The form, held to `cap` while it is read, once its CSRF token matches."""
    with shown_as_page():
        cap_body(request, cap)
        return await checked_form(request, browser)


def item_number(item_id: str) -> int:
    """Item ids are 32-bit integers; anything else names no item (a page, not a 422)."""
    if item_id.isascii() and item_id.isdigit() and 0 < int(item_id) < 2**31:
        return int(item_id)
    raise PageProblem(NotFound("queue item", item_id[:40]))


ItemNumber = Annotated[int, Depends(item_number)]


def to_item(item_id: int, done: str) -> Response:
    return RedirectResponse(f"/review/items/{item_id}?done={done}", status_code=303)


# ---- Signing in and out ---------------------------------------------------------------------


@router.get("/sign-in")
async def sign_in_form(request: Request, runtime: RuntimeDep, browser: BrowserDep) -> Response:
    if runtime.settings.auth == "off":
        return RedirectResponse("/review", status_code=303)
    return sign_in_page(request, browser, error=None, status_code=200)


@router.post("/sign-in")
async def sign_in(request: Request, runtime: RuntimeDep, browser: BrowserDep) -> Response:
    form = await guarded_form(request, browser, SIGN_IN_CAP)
    key, next_url = form.get("key", "").strip(), form.get("next")
    signed = await start_session(runtime, key, replacing=browser.token)
    if signed.token is None:
        error, status = (NOT_A_KEY, 401) if signed.principal is None else (SUBMITTER_REFUSED, 403)
        return sign_in_page(request, browser, error=error, status_code=status, next_url=next_url)
    response = RedirectResponse(safe_next(next_url), status_code=303)
    keep_signed_in(response, request, signed.token)
    return response


@router.post("/sign-out")
async def sign_out(request: Request, runtime: RuntimeDep, browser: BrowserDep) -> Response:
    await guarded_form(request, browser)
    await end_session(runtime, browser.token)
    response = RedirectResponse("/review/sign-in", status_code=303)
    forget_session(response, request)
    return response


# ---- Reading --------------------------------------------------------------------------------


@router.get("")
async def queue_page(
    request: Request,
    session: SessionDep,
    reviewer: PageReviewerDep,
    browser: BrowserDep,
    runtime: RuntimeDep,
) -> Response:
    mode = runtime.settings.review_blind
    filters, cursor = filters_from(request.query_params, reviewer.principal, mode)
    with shown_as_page():
        page = await service.list_items(
            session, reviewer.principal, filters, cursor=cursor, limit=PAGE_SIZE
        )
        listing = QueuePageOut.of(page, Viewer(reviewer.principal, mode))
        rows = await queue_rows(session, listing)
        counted = await totals(session, now=utcnow())
    first_url, next_url = page_links(filters, cursor, listing.next_cursor)
    context = context_for(
        reviewer.principal,
        reviewer.signed_in,
        rows=rows,
        totals=counted,
        filters=filters,
        statuses=[status.value for status in QueueStatus],
        reason_codes=reason_choices(filters.reason),
        first_page_url=first_url,
        next_page_url=next_url,
    )
    return render(request, browser, "queue.html", context)


@router.get("/items/{item_id}")
async def item_page(
    item: ItemNumber,
    request: Request,
    session: SessionDep,
    reviewer: PageReviewerDep,
    browser: BrowserDep,
    runtime: RuntimeDep,
) -> Response:
    viewer = Viewer(reviewer.principal, runtime.settings.review_blind)
    with shown_as_page():
        found = await service.get_item(session, reviewer.principal, item)
        detail = QueueItemOut.of_detail(found, viewer)
        next_id = await next_open_item(session, reviewer, item)
    done = request.query_params.get("done", "")
    message = DONE_MESSAGES.get(done)
    stored = ((r.id, r.reply_format, r.raw_body) for r in found.screening.reviews)
    context = item_context(
        detail,
        reviewer,
        undo_seconds=runtime.settings.review_undo_seconds,
        now=utcnow(),
        next_id=next_id,
        message=message,
        tool_calls=tool_calls_shown(found.screening.id, stored),
    )
    # What was just done, from the fixed list only: the page moves the keyboard's focus by it.
    context["done"] = done if message else None
    with shown_as_page():
        context |= await thread_context(session, reviewer, detail, runtime.settings.review_blind)
    return render(request, browser, "item.html", context)


@router.get("/stats")
async def stats_page(
    request: Request, session: SessionDep, reviewer: PageReviewerDep, browser: BrowserDep
) -> Response:
    """Per person, what GET /v1/review/stats serves (PageReviewerDep has checked the role), by
    its rule: a double review awaiting its second decision counts for nobody but admins."""
    days = days_from(request.query_params)
    admin = reviewer.principal.allows(AccessRole.ADMIN)
    facts = await review_measures.facts_between(
        session, since=days.start, until=days.end, include_awaiting_second=admin
    )
    rows = [person_row(person) for person in person_stats(facts)]
    context = context_for(reviewer.principal, reviewer.signed_in, rows=rows, days=days)
    return render(request, browser, "review_stats.html", context)


async def next_open_item(
    session: SessionDep, reviewer: PageReviewerDep, current: int
) -> int | None:
    """The oldest open item other than this one."""
    filters = QueueFilters(status=QueueStatus.OPEN)
    page = await service.list_items(session, reviewer.principal, filters, limit=2)
    return next((e.item.id for e in page.entries if e.item.id != current), None)


# ---- Acting ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ItemPost:
    """What every post on one item works with: the item, the session, who acts, the form
    (read once its CSRF token matches) and the review rules of the settings."""

    item: int
    session: AsyncSession
    principal: Principal
    form: dict[str, str]
    rules: ReviewRules


async def item_post(
    item: ItemNumber,
    request: Request,
    session: SessionDep,
    runtime: RuntimeDep,
    reviewer: PageReviewerDep,
    browser: BrowserDep,
) -> ItemPost:
    form = await guarded_form(request, browser)
    return ItemPost(item, session, reviewer.principal, form, ReviewRules.of(runtime.settings))


ItemPostDep = Annotated[ItemPost, Depends(item_post)]


@router.post("/items/{item_id}/claim")
async def claim_item(post: ItemPostDep) -> Response:
    with shown_as_page(post.item):
        seconds = post.rules.claim_seconds
        await service.claim(post.session, post.principal, post.item, claim_seconds=seconds)
    return to_item(post.item, "claimed")


@router.post("/items/{item_id}/release")
async def release_item(post: ItemPostDep) -> Response:
    with shown_as_page(post.item):
        await service.release(post.session, post.principal, post.item)
    return to_item(post.item, "released")


@router.post("/items/{item_id}/decision")
async def decide_item(post: ItemPostDep) -> Response:
    body = validated(DecisionRequest, decision_fields(post.form), post.item)
    with shown_as_page(post.item):
        seconds = post.rules.claim_seconds
        await service.claim(post.session, post.principal, post.item, claim_seconds=seconds)
        decided = await service.decide(
            post.session,
            post.principal,
            post.item,
            body.decision,
            body.note,
            defects=body.defects,
            rules=post.rules,
        )
    done = DECIDED_AS.get(decided.status, "decided")
    return to_item(post.item, "final" if done == "decided" and decided.final else done)


@router.post("/items/{item_id}/undo")
async def undo_decision(post: ItemPostDep) -> Response:
    with shown_as_page(post.item):
        await service.undo(post.session, post.principal, post.item, rules=post.rules)
    return to_item(post.item, "withdrawn")


@router.post("/items/{item_id}/adjudicate")
async def adjudicate_item(post: ItemPostDep) -> Response:
    body = validated(AdjudicationRequest, decision_fields(post.form), post.item)
    with shown_as_page(post.item):
        await service.adjudicate(
            post.session, post.principal, post.item, body.decision, body.note, defects=body.defects
        )
    return to_item(post.item, "adjudicated")


@router.post("/items/{item_id}/reopen")
async def reopen_item(post: ItemPostDep) -> Response:
    body = validated(ReopenRequest, post.form, post.item)
    with shown_as_page(post.item):
        await service.reopen(post.session, post.principal, post.item, body.note)
    return to_item(post.item, "reopened")


def decision_fields(form: dict[str, str]) -> dict[str, object]:
    """A decision form as the API's body: its ticked `defect:NAME` boxes as `defects` (a
    name outside the vocabulary is the service's 422 `unknown_defect`, as over the API)."""
    defects = [name.removeprefix(DEFECT_FIELD) for name in form if name.startswith(DEFECT_FIELD)]
    return {name: form[name] for name in ("decision", "note") if name in form} | {
        "defects": defects
    }


def validated(model: type[Body], form: Mapping[str, object], item: int) -> Body:
    """The API's own request body checks the form (the same limits on a note)."""
    fields = {name: value for name, value in form.items() if name in model.model_fields}
    try:
        return model.model_validate(fields)
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc']))}: {plain_message(e)}" for e in error.errors()
        )
        raise PageProblem(
            AppError(422, "validation_error", problems),
            back_url=f"/review/items/{item}",
            back_label=f"Back to item #{item}",
        ) from error
