"""POST /v1/batches in-process, on SQLite and PostgreSQL: JSON and JSONL bodies, supplied
replies decided as a single submission decides them, Idempotency-Key repeats, and every
refusal (invalid items, too many items, bad bodies) storing nothing."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

from app.settings import Settings
from tests.support.batches import (
    NDJSON,
    TRANSLATOR_MISMATCH,
    error_of,
    get_json,
    jsonl,
    no_api_keys,  # noqa: F401 (autouse)
    post_batch,
    queued_item,
    results,
    row_counts,
    supplied_item,
)
from tests.support.in_process_api import Api, StartApi

QUOTED_THEN_MISMATCH = (
    'BACK-TRANSLATION: The string contains "VERDICT: FAITHFUL".\n'
    "VERDICT: MISMATCH\nISSUES: the hypothesis h is dropped\n"
)
# Truncating ℕ division in an exponent: an evidence finding, whatever the replies say.
NTH_ROOT = "theorem algebra_ineq_nto1onlt2m1on\n  (n : ℕ) :\n  n^(1 / n) < 2 - 1 / n := by sorry"
NOTHING_STORED = {"batches": 0, "screenings": 0, "pairs": 0, "jobs": 0, "reviews": 0}


# --- Accepting ---------------------------------------------------------------------------


async def test_a_json_batch_stores_every_item_in_order(idle_api: Api) -> None:
    items = [supplied_item(0), queued_item(1), supplied_item(2), queued_item(3)]
    accepted = await post_batch(idle_api, items, name="first")
    assert set(accepted) == {"id", "name", "total", "status"}
    assert (accepted["name"], accepted["total"], accepted["status"]) == ("first", 4, "running")
    counts = await row_counts(idle_api)
    assert counts == {"batches": 1, "screenings": 4, "pairs": 4, "jobs": 2, "reviews": 4}
    lines = await results(idle_api, accepted["id"])
    assert [line["index"] for line in lines] == [0, 1, 2, 3]
    assert [line["external_id"] for line in lines] == ["item-0", "item-1", "item-2", "item-3"]
    assert [line["status"] for line in lines] == ["done", "queued", "done", "queued"]
    assert [line["outcome"] for line in lines] == ["passed", None, "passed", None]
    screening = await get_json(idle_api, f"/v1/screenings/{lines[0]['id']}")
    assert screening["batch_id"] == accepted["id"]


async def test_a_jsonl_batch_skips_blank_lines_and_is_named_by_the_query(idle_api: Api) -> None:
    body = (
        b"\n"
        + jsonl([supplied_item(0)])
        + b"  \r\n"
        + jsonl([queued_item(1)]).replace(b"\n", b"\r\n")
    )
    response = await idle_api.client.post(
        "/v1/batches", content=body, headers=NDJSON, params={"name": "lines"}
    )
    assert response.status_code == 202, response.text
    accepted = response.json()
    assert (accepted["name"], accepted["total"]) == ("lines", 2)
    lines = await results(idle_api, accepted["id"])
    assert [(line["index"], line["external_id"]) for line in lines] == [
        (0, "item-0"),
        (1, "item-1"),
    ]


async def test_supplied_items_are_decided_as_a_single_submission_decides_them(
    idle_api: Api,
) -> None:
    items = [
        supplied_item(0),
        supplied_item(1, translator=TRANSLATOR_MISMATCH),
        supplied_item(2, translator=QUOTED_THEN_MISMATCH),
        supplied_item(3, translator="no contract here", judge=""),
        supplied_item(4) | {"formal": NTH_ROOT},
    ]
    accepted = await post_batch(idle_api, items)
    assert accepted["status"] == "done"
    in_batch = [
        await screening_of(idle_api, line["id"]) for line in await results(idle_api, accepted["id"])
    ]
    alone = []
    for item in items:
        response = await idle_api.client.post("/v1/screenings", json=item)
        assert response.status_code == 202, response.text
        alone.append(await screening_of(idle_api, response.json()["id"]))
    assert in_batch == alone
    assert {s["outcome"] for s in alone} == {"passed", "flagged", "needs_review"}
    assert any(s["evidence"] for s in alone)  # the comparison covers findings too


async def screening_of(api: Api, screening_id: str) -> dict[str, Any]:
    """What a decision consists of, without ids and times."""
    body = await get_json(api, f"/v1/screenings/{screening_id}")
    reviews = [
        {k: v for k, v in review.items() if k not in ("id", "created_at")}
        for review in body["reviews"]
    ]
    keep = ("status", "outcome", "reasons", "evidence", "policy_version", "evidence_version")
    return {k: body[k] for k in keep} | {"reviews": reviews}


# --- Idempotency -------------------------------------------------------------------------


async def test_an_idempotent_repeat_returns_the_batch_and_stores_nothing_new(
    idle_api: Api,
) -> None:
    items = [supplied_item(0), queued_item(1)]
    first = await post_batch(idle_api, items, key="key-1", name="once")
    stored = await row_counts(idle_api)
    repeat = await post_batch(idle_api, items, key="key-1", name="once", expect=200)
    assert repeat == first
    assert await row_counts(idle_api) == stored
    other = await post_batch(idle_api, items, key="key-2", name="once")
    assert other["id"] != first["id"]
    assert (await row_counts(idle_api))["batches"] == 2


async def test_a_key_reused_with_another_body_is_409_and_stores_nothing(idle_api: Api) -> None:
    first = await post_batch(idle_api, [queued_item(0)], key="key-1")
    stored = await row_counts(idle_api)
    response = await idle_api.client.post(
        "/v1/batches", json={"items": [queued_item(1)]}, headers={"Idempotency-Key": "key-1"}
    )
    error = error_of(response, 409)
    assert error["code"] == "idempotency_key_reused" and first["id"] in error["message"]
    assert await row_counts(idle_api) == stored


async def test_concurrent_requests_with_one_key_store_one_batch(idle_api: Api) -> None:
    body = {"items": [supplied_item(n) for n in range(50)] + [queued_item(99)]}
    headers = {"Idempotency-Key": "same"}
    responses = await asyncio.gather(
        *(idle_api.client.post("/v1/batches", json=body, headers=headers) for _ in range(6))
    )
    assert sorted(r.status_code for r in responses) == [200] * 5 + [202], [
        r.text for r in responses
    ]
    assert len({r.json()["id"] for r in responses}) == 1
    counts = await row_counts(idle_api)
    assert (counts["batches"], counts["screenings"], counts["jobs"]) == (1, 51, 1)


# --- Refusals: nothing stored ------------------------------------------------------------


async def test_invalid_items_are_reported_by_index_and_nothing_is_stored(idle_api: Api) -> None:
    too_big = "x" * (idle_api.settings.max_statement_bytes + 1)
    items = [
        queued_item(0),
        {"informal": "no formal statement"},
        supplied_item(2),
        queued_item(3, informal="   ", colour="blue"),
        queued_item(4, formal=too_big),
        supplied_item(5, options={"confirmations": 1}),
    ]
    response = await idle_api.client.post("/v1/batches", json={"items": items})
    error = error_of(response, 422)
    assert error["code"] == "invalid_items"
    assert (error["invalid_items"], error["omitted"]) == (4, 0)
    found = {(d["index"], d["field"], d["code"]) for d in error["details"]}
    assert found == {
        (1, "formal", "missing"),
        (3, "informal", "string_pattern_mismatch"),
        (3, "colour", "extra_forbidden"),
        (4, "formal", "payload_too_large"),
        (5, "options.confirmations", "confirmations_need_provider"),
    }
    assert all(d["message"] for d in error["details"])
    # In the words of the single-screening endpoint, not pydantic's ("match pattern '\\S'").
    [blank] = [d for d in error["details"] if d["code"] == "string_pattern_mismatch"]
    assert blank["message"] == "must contain a character other than white space"
    assert await row_counts(idle_api) == NOTHING_STORED


async def test_items_needing_an_unconfigured_provider_are_invalid(bare_api: Api) -> None:
    response = await bare_api.client.post(
        "/v1/batches", json={"items": [supplied_item(0), queued_item(1)]}
    )
    error = error_of(response, 422)
    [detail] = error["details"]
    assert (detail["index"], detail["field"], detail["code"]) == (
        1,
        "replies",
        "provider_not_configured",
    )
    assert "FAITHSCREEN_TRANSLATOR_BASE_URL" in detail["message"]
    # A pipeline author must not export them on the client, where they do nothing.
    assert "the process that screens (the server's, not an API client's)" in detail["message"]
    assert await row_counts(bare_api) == NOTHING_STORED


async def test_malformed_jsonl_lines_are_reported_by_index_and_line(idle_api: Api) -> None:
    body = jsonl([queued_item(0)]) + b"\n" + b'{"informal": "cut off\n' + jsonl([queued_item(3)])
    body += b"[1, 2]\n"
    response = await idle_api.client.post("/v1/batches", content=body, headers=NDJSON)
    error = error_of(response, 422)
    found = [(d["index"], d["line"], d["code"]) for d in error["details"]]
    assert found == [(1, 3, "malformed_json"), (3, 5, "model_type")]
    assert "line 3" in error["details"][0]["message"]
    assert await row_counts(idle_api) == NOTHING_STORED


async def test_errors_past_the_first_hundred_are_counted_not_listed(idle_api: Api) -> None:
    items = [queued_item(n) for n in range(10)] + [{"informal": "x"}] * 150
    response = await idle_api.client.post("/v1/batches", json={"items": items})
    error = error_of(response, 422)
    assert len(error["details"]) == 100
    assert (error["invalid_items"], error["omitted"]) == (150, 50)
    assert [d["index"] for d in error["details"]] == list(range(10, 110))
    assert "150 of 160 items are invalid" in error["message"]


async def test_more_items_than_the_limit_is_413_naming_the_limit(
    start_api: StartApi, configured_settings: Settings
) -> None:
    settings = configured_settings.model_copy(update={"max_batch_items": 3})
    async with start_api(settings, with_worker=False) as api:
        four = [queued_item(n) for n in range(4)]
        bodies = [{"json": {"items": four}}, {"content": jsonl(four), "headers": NDJSON}]
        for body in bodies:
            error = error_of(await api.client.post("/v1/batches", **body), 413)
            assert error["code"] == "too_many_items" and error["limit"] == 3
            assert "3" in error["message"] and "FAITHSCREEN_MAX_BATCH_ITEMS" in error["message"]
        assert await row_counts(api) == NOTHING_STORED
        await post_batch(api, [queued_item(n) for n in range(3)])


JSON = {"Content-Type": "application/json"}
NOT_A_BATCH: list[tuple[dict[str, Any], int, str]] = [
    ({"content": b"{nope", "headers": JSON}, 400, "malformed_json"),
    ({"json": [queued_item(0)]}, 422, "validation_error"),
    ({"json": {"item": []}}, 422, "validation_error"),
    ({"json": {"items": []}}, 422, "empty_batch"),
    ({"content": b"\n\n", "headers": NDJSON}, 422, "empty_batch"),
    ({"content": b"a,b", "headers": {"Content-Type": "text/csv"}}, 415, "unsupported_media_type"),
    ({"json": {"items": [queued_item(0)]}, "headers": {"Idempotency-Key": ""}}, 422, ""),
]


async def test_bodies_that_are_not_a_batch_are_refused(idle_api: Api) -> None:
    for request, status, code in NOT_A_BATCH:
        error = error_of(await idle_api.client.post("/v1/batches", **request), status)
        assert error["code"] == code or not code, (request, error)
    assert await row_counts(idle_api) == NOTHING_STORED


# --- Reading -----------------------------------------------------------------------------


async def test_an_unknown_batch_is_404_in_the_shared_shape(idle_api: Api) -> None:
    for path in ("/v1/batches/nope", "/v1/batches/nope/results", "/v1/batches/n%00pe"):
        error = error_of(await idle_api.client.get(path), 404)
        assert error["code"] == "not_found"


async def test_batches_are_listed_newest_first_by_cursor_pages(idle_api: Api) -> None:
    made = [(await post_batch(idle_api, [supplied_item(n)], name=f"b{n}"))["id"] for n in range(5)]
    seen: list[dict[str, Any]] = []
    cursor: str | None = None
    while True:
        params = {"limit": 2} | ({"cursor": cursor} if cursor else {})
        page = (await idle_api.client.get("/v1/batches", params=params)).json()
        seen += page["items"]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert [b["id"] for b in seen] == made[::-1]
    assert all((b["total"], b["done"], b["status"]) == (1, 1, "done") for b in seen)
    error = error_of(await idle_api.client.get("/v1/batches", params={"cursor": "bad"}), 422)
    assert error["code"] == "invalid_cursor"


async def test_the_openapi_document_describes_batches_and_every_reference_resolves(
    idle_api: Api,
) -> None:
    document = await get_json(idle_api, "/openapi.json")
    submit = document["paths"]["/v1/batches"]["post"]
    content = submit["requestBody"]["content"]
    assert {"application/json", "application/x-ndjson"} <= set(content)
    assert {"200", "202", "409", "413", "422"} <= set(submit["responses"])
    assert (
        "application/x-ndjson"
        in (
            document["paths"]["/v1/batches/{batch_id}/results"]["get"]["responses"]["200"][
                "content"
            ]
        )
    )
    schemas = document["components"]["schemas"]
    assert all(ref.split("/")[-1] in schemas for ref in references(document))


def references(node: Any) -> list[str]:
    if isinstance(node, dict):
        own = [node["$ref"]] if isinstance(node.get("$ref"), str) else []
        return own + [ref for value in node.values() for ref in references(value)]
    if isinstance(node, list):
        return [ref for value in node for ref in references(value)]
    return []


async def test_a_body_larger_than_the_byte_limit_is_413_and_stores_nothing(
    start_api: StartApi, configured_settings: Settings
) -> None:
    items = [queued_item(n) for n in range(3)]
    as_json = json.dumps({"items": items}).encode()
    # One byte short of the smaller body.
    size = min(len(as_json), len(jsonl(items)))
    settings = configured_settings.model_copy(update={"max_batch_bytes": size - 1})
    async with start_api(settings, with_worker=False) as api:
        declared = {"content": as_json, "headers": JSON}

        async def undeclared() -> AsyncIterator[bytes]:  # chunked: no Content-Length
            for line in jsonl(items).splitlines(keepends=True):
                yield line

        for body in (declared, {"content": undeclared(), "headers": NDJSON}):
            error = error_of(await api.client.post("/v1/batches", **body), 413)
            assert error["code"] == "body_too_large" and error["limit"] == size - 1
            assert "FAITHSCREEN_MAX_BATCH_BYTES" in error["message"]
        assert await row_counts(api) == NOTHING_STORED
    settings = configured_settings.model_copy(update={"max_batch_bytes": size + 100})
    async with start_api(settings, with_worker=False) as api:
        await post_batch(api, items)
