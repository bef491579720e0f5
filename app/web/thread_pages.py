"""The item page's posts that add a comment or change the assignee (app/review_queue/
threads.py has the rules; app/web/thread_view.py what the page shows of them; the API's
endpoints are app/api/routes/queue_threads.py). Posts carry the page's CSRF
token and follow post/redirect/get, as every form of /review does (app/web/routes.py)."""

from __future__ import annotations

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import Response

from app.api.deps import SessionDep
from app.api.thread_schemas import AssignRequest, CommentRequest
from app.review_queue import threads
from app.web.access import BrowserDep, PageReviewerDep
from app.web.routes import ItemNumber, guarded_form, shown_as_page, to_item, validated

router = APIRouter(prefix="/review", include_in_schema=False)


@router.post("/items/{item_id}/comment")
async def comment_on_item(
    item: ItemNumber,
    request: Request,
    session: SessionDep,
    reviewer: PageReviewerDep,
    browser: BrowserDep,
) -> Response:
    form = await guarded_form(request, browser)
    body = validated(CommentRequest, form, item)
    with shown_as_page(item):
        await threads.comment(session, reviewer.principal, item, body.body)
    return to_item(item, "commented")


@router.post("/items/{item_id}/assign")
async def assign_item(
    item: ItemNumber,
    request: Request,
    session: SessionDep,
    reviewer: PageReviewerDep,
    browser: BrowserDep,
) -> Response:
    """`assignee` names the key (empty: nobody), as the API's body does."""
    form = await guarded_form(request, browser)
    body = validated(AssignRequest, {"assignee": form.get("assignee", "").strip() or None}, item)
    with shown_as_page(item):
        await threads.assign(session, reviewer.principal, item, body.assignee)
    return to_item(item, "assigned")
