"""The admin pages under /review: the batches (batch_pages.py) and the API keys
(key_pages.py). Installed after the review pages, whose error pages and form handling
they use."""

from __future__ import annotations

from fastapi import FastAPI

from app.web import batch_pages, key_pages


def install_admin_pages(app: FastAPI) -> None:
    app.include_router(batch_pages.router)
    app.include_router(key_pages.router)
