"""The admin pages (/review/keys, /review/batches) through the ASGI app, signed in as a
browser is: the roles of /v1/keys (admins only; a reviewer gets the pages' 403, no sign-in
the sign-in page), the key service's rules and records (a new key shown once, only its
hash stored, a taken name refused, a revoked key refused at once, its sessions ended), the
forms' CSRF token, and each batch's progress, outcomes and results (the API's own lines)
paged by the keyset cursor."""

from __future__ import annotations

import hashlib
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx2
import pytest

from app.repositories import api_keys
from app.settings import Settings
from app.web import batch_pages
from tests.integration.test_review_sessions import browser, csrf_of, sign_in
from tests.support.batches import TRANSLATOR_MISMATCH, supplied_item
from tests.support.in_process_api import Api, StartApi
from tests.support.review_queue import bearer, make_key

KEY = re.compile(r'id="new-key" type="text" readonly value="(fs_[A-Za-z0-9_-]{43})"')


@pytest.fixture
async def web(start_api: StartApi, unconfigured_settings: Settings) -> AsyncIterator[Api]:
    settings = unconfigured_settings.model_copy(update={"auth": "on"})
    async with start_api(settings, with_worker=False) as api:
        yield api


@asynccontextmanager
async def signed_in(
    api: Api, role: str, name: str
) -> AsyncIterator[tuple[httpx2.AsyncClient, str]]:
    """A browser signed in with a new key of `role`, and the key."""
    key = await make_key(api, role, name)
    async with browser(api) as client:
        await sign_in(client, key)
        yield client, key


async def stored_key(api: Api, name: str) -> tuple[str, str | None] | None:
    async with api.runtime.sessions() as session:
        record = await api_keys.get_by_name(session, name)
        if record is None:
            return None
        return record.key_hash, None if record.revoked_at is None else "revoked"


async def create(client: httpx2.AsyncClient, name: str, role: str) -> httpx2.Response:
    token = csrf_of(await client.get("/review/keys"))
    return await client.post("/review/keys", data={"name": name, "role": role, "csrf_token": token})


async def test_the_admin_pages_answer_admins_refuse_reviewers_and_ask_others_to_sign_in(
    web: Api,
) -> None:
    async with (
        signed_in(web, "admin", "root") as (root, _),
        signed_in(web, "reviewer", "alice") as (alice, _),
        browser(web) as nobody,
    ):
        for path in ("/review/keys", "/review/batches"):
            assert (await root.get(path)).status_code == 200
            refused = await alice.get(path)
            assert refused.status_code == 403, refused.text
            assert "Not allowed" in refused.text and "needs an admin key" in refused.text
            asked = await nobody.get(path)
            assert asked.status_code == 401 and 'name="key"' in asked.text
        # A reviewer's post is refused too, and creates nothing.
        token = csrf_of(await alice.get("/review"))
        post = await alice.post(
            "/review/keys", data={"name": "x", "role": "admin", "csrf_token": token}
        )
        assert post.status_code == 403 and await stored_key(web, "x") is None
        # Only admins see the links to these pages.
        assert 'href="/review/keys"' in (await root.get("/review")).text
        assert 'href="/review/keys"' not in (await alice.get("/review")).text


async def test_a_key_made_on_the_page_is_shown_once_stored_as_its_hash_and_works(
    web: Api,
) -> None:
    async with signed_in(web, "admin", "root") as (root, _):
        made = await create(root, "pipeline-1", "submitter")
        assert made.status_code == 201, made.text
        found = KEY.search(made.text)
        assert found and "shown this once" in made.text
        key = found.group(1)
        assert await stored_key(web, "pipeline-1") == (
            hashlib.sha256(key.encode()).hexdigest(),
            None,
        )
        # The key works on the API, with its role: a submitter lists no keys.
        assert (await web.client.get("/v1/batches", headers=bearer(key))).status_code == 200
        assert (await web.client.get("/v1/keys", headers=bearer(key))).status_code == 403
        # Shown once: the list names the key and its prefix, never the key.
        listed = (await root.get("/review/keys")).text
        assert "pipeline-1" in listed and key[:10] in listed and key not in listed
        # The service's rules: a taken name (even after revoking) and a bad name are refused,
        # on the keys page again, with what was typed; nothing more is stored.
        again = await create(root, "pipeline-1", "admin")
        assert again.status_code == 409 and "names are never reused" in again.text
        assert 'value="pipeline-1"' in again.text and not KEY.search(again.text)
        bad = await create(root, "two words", "reviewer")
        assert bad.status_code == 422 and await stored_key(web, "two words") is None
        role = await create(root, "pipeline-2", "owner")
        assert role.status_code == 422 and await stored_key(web, "pipeline-2") is None
        # A form without this browser's CSRF token is refused before anything is read.
        forged = await root.post("/review/keys", data={"name": "forged", "role": "admin"})
        assert forged.status_code == 403 and "csrf_rejected" in forged.text
        assert await stored_key(web, "forged") is None


async def test_revoking_on_the_page_refuses_the_key_at_once_and_ends_its_sessions(
    web: Api,
) -> None:
    async with (
        signed_in(web, "admin", "root") as (root, _),
        signed_in(web, "reviewer", "bob") as (bob, bob_key),
    ):
        assert (await bob.get("/review")).status_code == 200
        token = csrf_of(await root.get("/review/keys"))
        forged = await root.post("/review/keys/bob/revoke", data={})
        assert forged.status_code == 403 and await stored_key(web, "bob") is not None
        assert (await stored_key(web, "bob") or ("", ""))[1] is None
        done = await root.post("/review/keys/bob/revoke", data={"csrf_token": token})
        assert (done.status_code, done.headers["location"]) == (303, "/review/keys?done=revoked")
        assert (await stored_key(web, "bob") or ("", ""))[1] == "revoked"
        assert (await web.client.get("/v1/queue", headers=bearer(bob_key))).status_code == 401
        assert (await bob.get("/review")).status_code == 401  # its session ended with it
        page = (await root.get("/review/keys?done=revoked")).text
        assert "Revoked: every request with that key is refused" in page
        unknown = await root.post("/review/keys/nobody/revoke", data={"csrf_token": token})
        assert unknown.status_code == 404


async def submit(api: Api, admin_key: str, name: str, outcomes: list[str]) -> str:
    items = [
        supplied_item(n, **({"translator": TRANSLATOR_MISMATCH} if o == "flagged" else {}))
        for n, o in enumerate(outcomes, start=len(name) * 100)
    ]
    response = await api.client.post(
        "/v1/batches", json={"items": items}, params={"name": name}, headers=bearer(admin_key)
    )
    assert response.status_code == 202, response.text
    batch_id: str = response.json()["id"]
    return batch_id


async def test_batches_show_progress_outcomes_and_the_apis_results_page_by_page(
    web: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(batch_pages, "PAGE_SIZE", 1)
    async with signed_in(web, "admin", "root") as (root, root_key):
        first = await submit(web, root_key, "first", ["passed", "passed", "flagged"])
        second = await submit(web, root_key, "second-batch", ["flagged"])
        newest = await root.get("/review/batches")
        assert newest.status_code == 200
        assert "second-batch" in newest.text and f"/review/batches/{first}" not in newest.text
        assert "1 of 1 done" in newest.text and "« First page" not in newest.text
        following = re.search(r'href="(/review/batches\?cursor=[^"]+)">Next page', newest.text)
        assert following, newest.text
        older = await root.get(following.group(1).replace("&amp;", "&"))
        assert f'href="/review/batches/{first}"' in older.text and "3 of 3 done" in older.text
        assert "Next page" not in older.text and "« First page" in older.text
        assert re.search(r"passed <strong[^>]*>2</strong>", older.text)
        assert re.search(r"flagged <strong[^>]*>1</strong>", older.text)
        # A cursor not made here is refused as a page.
        bad = await root.get("/review/batches?cursor=bm90LWEtY3Vyc29y")
        assert bad.status_code == 422 and "not a cursor from this listing" in bad.text

        detail = await root.get(f"/review/batches/{first}")
        assert detail.status_code == 200 and 'id="batch-status">done<' in detail.text
        assert f"/review?batch_id={first}" in detail.text
        assert (await root.get("/review/batches/no-such-batch")).status_code == 404
        for row_format in ("jsonl", "csv"):
            page = await root.get(f"/review/batches/{first}/results", params={"format": row_format})
            api = await web.client.get(
                f"/v1/batches/{first}/results",
                params={"format": row_format},
                headers=bearer(root_key),
            )
            assert page.status_code == 200 and page.content == api.content
            assert page.headers["content-type"] == api.headers["content-type"]
            assert page.headers["content-disposition"].startswith("attachment;")
            assert page.headers["cache-control"] == "no-store"
        assert len((await root.get(f"/review/batches/{second}/results")).text.splitlines()) == 1
        assert (await root.get(f"/review/batches/{first}/results?format=xml")).status_code == 422
