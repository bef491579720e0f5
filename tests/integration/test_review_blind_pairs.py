"""A blind item withholds its pair, not only its screenings: a key that may both submit and
review, refused a blind audit's screening, submits the identical informal, formal and
header again and must not read the new screening's outcome either -- by GET, listing,
batch results or counts -- until the item is resolved (issue 32, item 8). The audit is
sampled under one setting and the pair resubmitted under another (audit rate 0), so the
new screening joins no item: only its pair ties it to the blind one."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest

from app.models.api_key import AccessRole
from app.settings import Settings
from tests.integration.test_review_blind import FLAGGED, SENTINELS, leaks
from tests.integration.test_review_sessions import browser, sign_in
from tests.support.in_process_api import Api, StartApi
from tests.support.review_queue import bearer, error_code, make_key, pair

N = 1


@dataclass
class Keys:
    admin: str
    alice: str  # a reviewer: she may submit too
    bot: str  # a submitter: its pipeline reads every outcome


@dataclass
class Resubmitted:
    api: Api
    keys: Keys
    audited: str  # the screening whose audit item is blind
    again: str  # the same pair, submitted by alice, joined to no item
    item_id: int

    async def get(self, key: str, path: str, **params: Any) -> Any:
        return await self.api.client.get(path, params=params, headers=bearer(key))

    async def post(self, key: str, path: str, body: Any = None) -> Any:
        return await self.api.client.post(path, json=body, headers=bearer(key))


def flagged_pair(**extra: Any) -> dict[str, Any]:
    return pair(N, "passed", **extra) | {"replies": FLAGGED}


@pytest.fixture
async def resubmitted(
    start_api: StartApi, unconfigured_settings: Settings
) -> AsyncIterator[Resubmitted]:
    sampled = unconfigured_settings.model_copy(update={"auth": "on", "audit_rate": 1.0})
    async with start_api(sampled, with_worker=False) as api:
        keys = Keys(
            admin=await make_key(api, AccessRole.ADMIN, "admin"),
            alice=await make_key(api, AccessRole.REVIEWER, "alice"),
            bot=await make_key(api, AccessRole.SUBMITTER, "bot"),
        )
        posted = await api.client.post(
            "/v1/screenings", json=flagged_pair(), headers=bearer(keys.bot)
        )
        assert posted.status_code == 202, posted.text
        audited = posted.json()["id"]
    unsampled = sampled.model_copy(update={"audit_rate": 0.0})
    async with start_api(unsampled, with_worker=False) as api:
        again = await api.client.post(
            "/v1/screenings", json=flagged_pair(external_id="mine"), headers=bearer(keys.alice)
        )
        assert again.status_code == 202, again.text
        assert set(again.json()) == {"id", "status"}  # the reply to a submission tells nothing
        listed = await api.client.get("/v1/queue", headers=bearer(keys.admin))
        [item] = listed.json()["items"]
        assert item["screening_ids"] == [audited]  # the new screening joined no item
        yield Resubmitted(api, keys, audited, again.json()["id"], item["id"])


async def test_a_resubmitted_blind_pair_is_withheld_from_the_reviewer(
    resubmitted: Resubmitted,
) -> None:
    r, alice = resubmitted, resubmitted.keys.alice
    for screening_id in (r.audited, r.again):
        refused = await r.get(alice, f"/v1/screenings/{screening_id}")
        assert error_code(refused, 403) == "blind_item" and leaks(refused.json()) == []
    page = (await r.get(alice, "/v1/screenings")).json()["items"]
    assert {s["id"] for s in page if s["blind"]} == {r.audited, r.again} and leaks(page) == []
    assert (await r.get(alice, "/v1/screenings", outcome="flagged")).json()["items"] == []
    summary = (await r.get(alice, "/v1/reports/summary")).json()
    assert summary["outcomes"]["flagged"] == 0 and "translator_mismatch" not in summary["reasons"]


async def test_a_resubmitted_blind_pair_in_a_batch_is_withheld_too(
    resubmitted: Resubmitted,
) -> None:
    r, alice = resubmitted, resubmitted.keys.alice
    other = pair(N + 1, "passed") | {"replies": FLAGGED}  # another pair: shown whole
    posted = await r.post(alice, "/v1/batches", {"items": [flagged_pair(), other]})
    assert posted.status_code == 202, posted.text
    batch = f"/v1/batches/{posted.json()['id']}"
    results = await r.get(alice, f"{batch}/results")
    assert results.status_code == 200, results.text
    lines = [json.loads(line) for line in results.text.splitlines()]
    assert [line["blind"] for line in lines] == [True, False]
    assert leaks(lines[0]) == [] and lines[1]["outcome"] == "flagged"
    progress = (await r.get(alice, batch)).json()
    assert (progress["blind"], progress["outcomes"]["flagged"]) == (1, 1)
    calibration = await r.get(alice, f"{batch}/calibration")
    assert error_code(calibration, 403) == "blind_item"


async def test_submitters_and_admins_read_it_and_so_does_everyone_once_resolved(
    resubmitted: Resubmitted,
) -> None:
    r, keys = resubmitted, resubmitted.keys
    for key in (keys.bot, keys.admin):
        whole = await r.get(key, f"/v1/screenings/{r.again}")
        assert whole.status_code == 200 and whole.json()["outcome"] == "flagged"
    path = f"/v1/queue/{r.item_id}"
    assert (await r.post(keys.alice, f"{path}/claim")).status_code == 200
    decided = await r.post(keys.alice, f"{path}/decision", {"decision": "faithful"})
    assert decided.status_code == 201, decided.text
    shown = await r.get(keys.alice, f"/v1/screenings/{r.again}")
    assert shown.status_code == 200 and shown.json()["outcome"] == "flagged"
    assert any(s in json.dumps(shown.json()) for s in SENTINELS)


async def test_an_older_resolved_item_of_the_pair_is_blind_while_the_new_one_is(
    start_api: StartApi, unconfigured_settings: Settings
) -> None:
    """The pair was decided once (needs_review, never blind under `audit`) and is audited
    now: the old item's outcome, reviews and export lines would tell what the new one hides."""
    settings = unconfigured_settings.model_copy(update={"auth": "on", "audit_rate": 1.0})
    async with start_api(settings, with_worker=False) as api:
        admin = await make_key(api, AccessRole.ADMIN, "admin")
        alice = await make_key(api, AccessRole.REVIEWER, "alice")

        async def call(method: str, path: str, body: Any = None, **params: Any) -> Any:
            return await api.client.request(
                method, path, json=body, params=params, headers=bearer(alice)
            )

        unread = pair(N + 2, "needs_review")
        assert (await call("POST", "/v1/screenings", unread)).status_code == 202
        [old] = (await call("GET", "/v1/queue")).json()["items"]
        assert (await call("POST", f"/v1/queue/{old['id']}/claim")).status_code == 200
        decided = await call("POST", f"/v1/queue/{old['id']}/decision", {"decision": "faithful"})
        assert decided.status_code == 201, decided.text
        assert len((await call("GET", "/v1/decisions/export")).text.splitlines()) == 1
        audited = unread | {"replies": FLAGGED}
        assert (await call("POST", "/v1/screenings", audited)).status_code == 202

        seen = (await call("GET", f"/v1/queue/{old['id']}")).json()
        assert (seen["status"], seen["blind"]) == ("resolved", True) and leaks(seen) == []
        assert "translator_missing" not in json.dumps(seen)
        listed = (await call("GET", "/v1/queue")).json()["items"]
        assert [i["blind"] for i in listed] == [True, True] and leaks(listed) == []
        found = await call("GET", "/v1/queue", reason="translator_missing")
        assert found.json()["items"] == []
        assert (await call("GET", "/v1/decisions/export")).text == ""
        whole = await api.client.get(f"/v1/queue/{old['id']}", headers=bearer(admin))
        assert whole.json()["reasons"] == ["translator_missing"]
        # The review page shows what the API shows.
        async with browser(api) as page:
            await sign_in(page, alice)
            shown = await page.get(f"/review/items/{old['id']}")
            assert shown.status_code == 200 and 'id="blind-notice"' in shown.text
            assert "translator_missing" not in shown.text
            listed_page = await page.get("/review", params={"reason": "translator_missing"})
            assert f'id="row-{old["id"]}"' not in listed_page.text


async def test_a_blind_item_lists_only_its_own_screening_to_a_blind_reviewer(
    start_api: StartApi, unconfigured_settings: Settings
) -> None:
    """A needs_review screening of the pair always joins its open item, a passed or flagged
    one only when sampled: the item's growing list of screenings would hint at the outcome
    of alice's own resubmission, so while she is blind she sees the item's own only."""
    settings = unconfigured_settings.model_copy(update={"auth": "on", "audit_rate": 1.0})
    async with start_api(settings, with_worker=False) as api:
        admin = await make_key(api, AccessRole.ADMIN, "admin")
        alice = await make_key(api, AccessRole.REVIEWER, "alice")
        posted = await api.client.post("/v1/screenings", json=flagged_pair(), headers=bearer(admin))
        audited = posted.json()["id"]
        again = pair(N, "needs_review", external_id="mine")
        joined = await api.client.post("/v1/screenings", json=again, headers=bearer(alice))
        assert joined.status_code == 202, joined.text
        [whole] = (await api.client.get("/v1/queue", headers=bearer(admin))).json()["items"]
        assert whole["screening_ids"] == [audited, joined.json()["id"]]  # it did join
        [shown] = (await api.client.get("/v1/queue", headers=bearer(alice))).json()["items"]
        assert shown["blind"] and shown["screening_ids"] == [audited]
        item = await api.client.get(f"/v1/queue/{shown['id']}", headers=bearer(alice))
        assert joined.json()["id"] not in item.text
