"""The review pages over plain HTTP against a real `faithscreen serve`: CSRF on every form
post, the cookies' attributes (Secure and HSTS behind a trusted proxy only), signing out,
revoked keys, auth off, readable error pages, filters and paging. No browser needed."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx2
import pytest

from app.web.session import CSRF_COOKIE, SESSION_COOKIE
from tests.support.review_site import ReviewSite, pair_body, run_cli
from tests.support.serve_process import ServeProcess

pytestmark = [pytest.mark.e2e, pytest.mark.one_database("sqlite")]

TOKEN = re.compile(r'name="csrf_token" value="([0-9a-f]{64})"')


def token_on(page: httpx2.Response) -> str:
    found = TOKEN.search(page.text)
    assert found, page.text
    return found.group(1)


@contextmanager
def browser(site: ReviewSite) -> Iterator[httpx2.Client]:
    """An HTTP client that keeps cookies, as a browser would."""
    with httpx2.Client(base_url=site.base_url, timeout=30) as client:
        yield client


def signed_in(client: httpx2.Client, key: str) -> httpx2.Response:
    form = client.get("/review/sign-in")
    body = {"key": key, "csrf_token": token_on(form), "next": "/review"}
    return client.post("/review/sign-in", data=body)


def cookie_header(response: httpx2.Response, name: str) -> str:
    headers = [h for h in response.headers.get_list("set-cookie") if h.startswith(f"{name}=")]
    assert len(headers) == 1, response.headers
    return headers[0]


# ---- CSRF -----------------------------------------------------------------------------------


def test_a_post_without_a_valid_csrf_token_is_refused_with_a_readable_403(
    site: ReviewSite,
) -> None:
    item_id = site.seed("csrf")
    with browser(site) as client:
        assert signed_in(client, site.alice).status_code == 303
        page = client.get(f"/review/items/{item_id}")
        good = token_on(page)
        claim = f"/review/items/{item_id}/claim"
        for data in ({}, {"csrf_token": ""}, {"csrf_token": "0" * 64}):
            refused = client.post(claim, data=data)
            assert refused.status_code == 403, refused.text
            assert refused.headers["content-type"].startswith("text/html")
            assert "Reload the page and try again" in refused.text
        assert site.item(item_id)["status"] == "open"  # nothing was done
        assert client.post(claim, data={"csrf_token": good}).status_code == 303
    assert site.item(item_id)["claimed_by"] == "alice"


def test_a_token_from_another_browser_is_refused(site: ReviewSite) -> None:
    item_id = site.seed("csrf_other")
    with browser(site) as mallory, browser(site) as alice:
        signed_in(mallory, site.make_key("reviewer", "mallory"))
        foreign = token_on(mallory.get(f"/review/items/{item_id}"))
        signed_in(alice, site.alice)
        refused = alice.post(f"/review/items/{item_id}/claim", data={"csrf_token": foreign})
        assert refused.status_code == 403
    assert site.item(item_id)["status"] == "open"


def test_sign_in_itself_needs_the_token(site: ReviewSite) -> None:
    with browser(site) as client:
        client.get("/review/sign-in")
        refused = client.post("/review/sign-in", data={"key": site.alice, "next": "/review"})
        assert refused.status_code == 403
        assert SESSION_COOKIE not in refused.headers.get("set-cookie", "")


def test_signing_in_as_someone_else_voids_the_forms_shown_before(site: ReviewSite) -> None:
    item_id = site.seed("csrf_rebind")
    with browser(site) as client:
        signed_in(client, site.alice)
        before = token_on(client.get(f"/review/items/{item_id}"))
        signed_in(client, site.admin)
        refused = client.post(f"/review/items/{item_id}/claim", data={"csrf_token": before})
        assert refused.status_code == 403


# ---- Cookies, signing out, revoked keys ---------------------------------------------------


def test_the_cookies_are_httponly_samesite_strict_and_scoped_to_the_pages(
    site: ReviewSite,
) -> None:
    with browser(site) as client:
        form = client.get("/review/sign-in")
        body = {"key": site.alice, "csrf_token": token_on(form), "next": "/review"}
        signed = client.post("/review/sign-in", data=body)
        for response, name in ((form, CSRF_COOKIE), (signed, SESSION_COOKIE)):
            header = cookie_header(response, name)
            attributes = {part.strip().lower() for part in header.split(";")[1:]}
            assert {"httponly", "path=/review", "samesite=strict"} <= attributes
            assert "secure" not in attributes  # plain http on loopback
            assert "strict-transport-security" not in response.headers


def sign_in_via_proxy(base_url: str, key: str) -> httpx2.Response:
    """A sign-in whose requests say they came over https, from 127.0.0.1."""
    https = {"X-Forwarded-Proto": "https"}
    with httpx2.Client(base_url=base_url, timeout=30, headers=https) as client:
        form = client.get("/review/sign-in")
        body = {"key": key, "csrf_token": token_on(form), "next": "/review"}
        # The seed cookie is Secure now: an http client would not send it back by itself.
        seed = {"Cookie": f"{CSRF_COOKIE}={form.cookies[CSRF_COOKIE]}"}
        response = client.post("/review/sign-in", data=body, headers=seed)
        assert response.status_code == 303, response.text
        return response


def test_over_https_from_a_trusted_proxy_cookies_are_secure_with_hsts(site: ReviewSite) -> None:
    # FAITHSCREEN_FORWARDED_ALLOW_IPS defaults to 127.0.0.1,::1, as uvicorn's does.
    response = sign_in_via_proxy(site.base_url, site.alice)
    assert "secure" in cookie_header(response, SESSION_COOKIE).lower().split("; ")
    assert response.headers["strict-transport-security"] == "max-age=31536000"


def test_x_forwarded_proto_from_an_untrusted_address_is_ignored(
    site: ReviewSite, tmp_path: Path
) -> None:
    env = {"FAITHSCREEN_AUTH": "on", "FAITHSCREEN_FORWARDED_ALLOW_IPS": "192.0.2.1"}
    server = ServeProcess(site.database_url, env, tmp_path / "untrusted.log")
    try:
        response = sign_in_via_proxy(server.base_url, site.alice)
    finally:
        server.kill()
    assert "secure" not in cookie_header(response, SESSION_COOKIE).lower().split("; ")
    assert "strict-transport-security" not in response.headers


def test_sign_out_ends_the_session(site: ReviewSite) -> None:
    with browser(site) as client:
        signed_in(client, site.alice)
        queue = client.get("/review")
        assert queue.status_code == 200
        out = client.post("/review/sign-out", data={"csrf_token": token_on(queue)})
        assert out.status_code == 303 and out.headers["location"] == "/review/sign-in"
        assert re.search(r"max-age=0", cookie_header(out, SESSION_COOKIE), re.IGNORECASE)
        after = client.get("/review")
        assert after.status_code == 401 and 'name="key"' in after.text


def test_a_revoked_key_is_refused_on_the_next_page(site: ReviewSite) -> None:
    with browser(site) as client:
        signed_in(client, site.alice)
        assert client.get("/review").status_code == 200
        run_cli(site.database_url, "keys", "revoke", "alice")
        refused = client.get("/review")
        assert refused.status_code == 401
        assert "no longer valid" in refused.text


def test_a_submitter_key_gets_a_readable_403_and_no_session(site: ReviewSite) -> None:
    submitter = site.make_key("submitter", "sub")
    with browser(site) as client:
        form = client.get("/review/sign-in")
        body = {"key": submitter, "csrf_token": token_on(form), "next": "/review"}
        page = client.post("/review/sign-in", data=body)
        assert page.status_code == 403
        assert page.headers["content-type"].startswith("text/html")
        assert "Only a reviewer or admin key can use the review pages" in page.text
        assert SESSION_COOKIE not in page.headers.get("set-cookie", "")
        # Nor does the key itself in the cookie sign anyone in: the cookie names a session.
        client.cookies.set(SESSION_COOKIE, site.alice, path="/review")
        assert client.get("/review").status_code == 401


# ---- Pages ----------------------------------------------------------------------------------


def test_no_sign_in_asks_for_one_and_returns_to_the_page_asked_for(site: ReviewSite) -> None:
    item_id = site.seed("return_to")
    for wanted, landing in [
        (f"/review/items/{item_id}", f"/review/items/{item_id}"),
        ("https://evil.test/", "/review"),
        ("//evil.test/review", "/review"),
    ]:
        with browser(site) as client:
            page = client.get(f"/review/items/{item_id}")
            assert page.status_code == 401
            assert f'name="next" value="/review/items/{item_id}"' in page.text
            body = {"key": site.alice, "csrf_token": token_on(page), "next": wanted}
            assert client.post("/review/sign-in", data=body).headers["location"] == landing


def test_statements_are_escaped_never_run(site: ReviewSite) -> None:
    informal = "<script>alert('x')</script> & n < m"
    item_id = site.seed("escaped", informal=informal)
    with browser(site) as client:
        signed_in(client, site.alice)
        page = client.get(f"/review/items/{item_id}").text
        assert "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; n &lt; m" in page
        assert "<script>alert" not in page


def test_unknown_items_and_bad_filters_are_readable_pages(site: ReviewSite) -> None:
    with browser(site) as client:
        signed_in(client, site.alice)
        for path, status in [
            ("/review/items/999999", 404),
            ("/review/items/abc", 404),
            ("/review?status=sideways", 422),
            ("/review?audit=maybe", 422),
            ("/review?reason=a%00b", 422),
            ("/review?cursor=not-a-cursor", 422),
        ]:
            page = client.get(path)
            assert page.status_code == status, (path, page.text)
            assert page.headers["content-type"].startswith("text/html"), path
            assert 'role="alert"' in page.text, path


def test_the_queue_filters_and_pages_oldest_first(site: ReviewSite) -> None:
    items = [pair_body(f"paged_{i:02}") for i in range(51)]
    with site.api(site.admin) as api:
        accepted = api.post("/v1/batches", json={"items": items, "name": "paging"})
        assert accepted.status_code == 202, accepted.text
        batch_id = accepted.json()["id"]
    resolved = site.seed("resolved_one")
    with site.api(site.alice) as api:
        api.post(f"/v1/queue/{resolved}/claim")
        api.post(f"/v1/queue/{resolved}/decision", json={"decision": "faithful"})
    with browser(site) as client:
        signed_in(client, site.alice)
        first = client.get("/review", params={"batch_id": batch_id, "status": "open"})
        ids = [int(i) for i in re.findall(r'href="/review/items/(\d+)"', first.text)]
        assert len(ids) == 50 and ids == sorted(ids)
        next_url = re.search(r'href="(/review\?[^"]*cursor=[^"]*)"', first.text)
        assert next_url, first.text
        second = client.get(next_url.group(1).replace("&amp;", "&"))
        rest = [int(i) for i in re.findall(r'href="/review/items/(\d+)"', second.text)]
        assert len(rest) == 1 and rest[0] > ids[-1]
        only_resolved = client.get("/review", params={"status": "resolved"})
        listed = re.findall(r'href="/review/items/(\d+)"', only_resolved.text)
        assert listed == [str(resolved)]


def test_with_auth_off_no_sign_in_is_needed_and_anonymous_decides(
    database_url: str, tmp_path: Path
) -> None:
    server = ServeProcess(database_url, {"FAITHSCREEN_AUTH": "off"}, tmp_path / "off.log")
    try:
        with httpx2.Client(base_url=server.base_url, timeout=30) as client:
            accepted = client.post("/v1/screenings", json=pair_body("auth_off"))
            assert accepted.status_code == 202, accepted.text
            item_id = client.get("/v1/queue").json()["items"][0]["id"]
            page = client.get(f"/review/items/{item_id}")
            assert page.status_code == 200 and "anonymous" in page.text
            assert "Sign out" not in page.text
            decided = client.post(
                f"/review/items/{item_id}/decision",
                data={"csrf_token": token_on(page), "decision": "mismatch", "note": "off"},
            )
            assert decided.status_code == 303, decided.text
            trail = client.get(f"/v1/queue/{item_id}").json()["trail"]
            assert [(d["decision"], d["actor"]) for d in trail] == [("mismatch", "anonymous")]
            assert client.get("/review/sign-in").headers["location"] == "/review"
    finally:
        server.kill()


def test_an_admin_reopens_a_resolved_item_and_a_reviewer_cannot(site: ReviewSite) -> None:
    item_id = site.seed("reopened")
    with browser(site) as alice:
        signed_in(alice, site.alice)
        page = alice.get(f"/review/items/{item_id}")
        data = {"csrf_token": token_on(page), "decision": "faithful", "note": ""}
        assert alice.post(f"/review/items/{item_id}/decision", data=data).status_code == 303
        resolved = alice.get(f"/review/items/{item_id}")
        assert 'id="reopen"' not in resolved.text  # not offered to a reviewer...
        data = {"csrf_token": token_on(resolved), "note": "try"}
        refused = alice.post(f"/review/items/{item_id}/reopen", data=data)
        assert refused.status_code == 403 and "admin" in refused.text  # ...nor allowed
    with browser(site) as root:
        signed_in(root, site.admin)
        page = root.get(f"/review/items/{item_id}")
        assert 'id="reopen"' in page.text
        data = {"csrf_token": token_on(page), "note": "label looks wrong"}
        assert root.post(f"/review/items/{item_id}/reopen", data=data).status_code == 303
    item = site.item(item_id)
    assert (item["status"], item["final_decision"]) == ("open", None)
    assert [(d["kind"], d["actor"], d["note"]) for d in item["trail"]] == [
        ("decision", "alice", ""),
        ("reopen", "root", "label looks wrong"),
    ]


def test_an_oversized_note_is_refused_by_the_apis_own_limit(site: ReviewSite) -> None:
    item_id = site.seed("long_note")
    with browser(site) as client:
        signed_in(client, site.alice)
        page = client.get(f"/review/items/{item_id}")
        data = {"csrf_token": token_on(page), "decision": "mismatch", "note": "x" * 10_001}
        refused = client.post(f"/review/items/{item_id}/decision", data=data)
        assert refused.status_code == 422
        assert "note: must be at most 10000 characters, not 10001" in refused.text
    assert site.item(item_id)["status"] == "open"
