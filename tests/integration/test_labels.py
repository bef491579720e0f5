"""Labelled screenings in-process, on SQLite and PostgreSQL: `label` and `tags` accepted on
a single submission and on every batch item (JSON and JSONL) and shown by GET; every
malformed label or tag a 422 naming the field (and the item) with nothing stored; the
label reaching no provider (byte-identical requests), no evidence check and no policy;
and reviewers never shown it (queue API, /review pages, the OpenAPI document)."""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.batches import (
    NDJSON,
    error_of,
    get_json,
    jsonl,
    post_batch,
    queued_item,
    results,
    row_counts,
)
from tests.support.in_process_api import JUDGE_MODEL, TRANSLATOR_MODEL, Api
from tests.support.review_queue import pair, queue_items
from tests.support.scripted_openai import Reply, ScriptedOpenAI, contract_reply

# Every character the tag alphabet allows, and the limits at their edges.
ALPHABET_TAG = "AZaz09_.:/-"
LONGEST_TAG = "t" * 64
# A tag no page or body could show unless the tags themselves were shown.
SECRET_TAG = "source:only-in-the-tags-7f3a"
MOST_TAGS = [SECRET_TAG, ALPHABET_TAG, LONGEST_TAG] + [f"slice/{n}" for n in range(13)]


def labelled(n: int, label: str | None, tags: list[str]) -> dict[str, Any]:
    return queued_item(n) | ({"label": label} if label else {}) | {"tags": tags}


async def submit(api: Api, body: dict[str, Any]) -> str:
    response = await api.client.post("/v1/screenings", json=body)
    assert response.status_code == 202, response.text
    screening_id: str = response.json()["id"]
    return screening_id


# --- Accepted, stored, shown ---------------------------------------------------------------


async def test_a_label_and_tags_are_stored_and_shown_by_get_and_the_listing(
    idle_api: Api,
) -> None:
    assert len(MOST_TAGS) == 16  # the most a request may carry
    sent = {
        await submit(idle_api, labelled(0, "mismatch", MOST_TAGS)): ("mismatch", MOST_TAGS),
        await submit(idle_api, labelled(1, "faithful", ["split/dev"])): ("faithful", ["split/dev"]),
        await submit(idle_api, queued_item(2)): (None, []),
    }
    for screening_id, expected in sent.items():
        body = await get_json(idle_api, f"/v1/screenings/{screening_id}")
        assert (body["label"], body["tags"]) == expected
    listing = await get_json(idle_api, "/v1/screenings")
    assert {item["id"]: (item["label"], item["tags"]) for item in listing["items"]} == sent


@pytest.mark.parametrize("body_kind", ["json", "ndjson"])
async def test_every_batch_item_keeps_its_own_label_and_tags(idle_api: Api, body_kind: str) -> None:
    items = [
        labelled(0, "faithful", ["source:minif2f", "split/test"]),
        queued_item(1),
        labelled(2, "mismatch", MOST_TAGS),
        labelled(3, None, ["v2.1"]),
    ]
    if body_kind == "json":
        batch = await post_batch(idle_api, items)
    else:
        response = await idle_api.client.post("/v1/batches", content=jsonl(items), headers=NDJSON)
        assert response.status_code == 202, response.text
        batch = response.json()
    lines = await results(idle_api, batch["id"])
    shown = [await get_json(idle_api, f"/v1/screenings/{line['id']}") for line in lines]
    assert [(s["external_id"], s["label"], s["tags"]) for s in shown] == [
        ("item-0", "faithful", ["source:minif2f", "split/test"]),
        ("item-1", None, []),
        ("item-2", "mismatch", MOST_TAGS),
        ("item-3", None, ["v2.1"]),
    ]


# --- Refused by name, nothing stored -------------------------------------------------------

# (what is wrong, the request fields, the field the 422 must name)
BAD_FIELDS: list[tuple[str, dict[str, Any], str]] = [
    ("unknown-label", {"label": "unclear"}, "label"),
    ("label-case", {"label": "Mismatch"}, "label"),
    ("empty-label", {"label": ""}, "label"),
    ("label-not-a-string", {"label": True}, "label"),
    ("17-tags", {"tags": [f"t{n}" for n in range(17)]}, "tags"),
    ("empty-tag", {"tags": ["a", "b", "c", ""]}, "tags.3"),
    ("65-char-tag", {"tags": ["ok", "t" * 65]}, "tags.1"),
    ("space-in-tag", {"tags": ["has space"]}, "tags.0"),
    ("hash-in-tag", {"tags": ["ok", "a#b"]}, "tags.1"),
    ("non-ascii-letter", {"tags": ["naïve"]}, "tags.0"),
    ("trailing-newline", {"tags": ["line\n"]}, "tags.0"),
    ("non-string-tag", {"tags": ["ok", 7]}, "tags.1"),
    ("tags-a-string", {"tags": "source:minif2f"}, "tags"),
    ("tags-an-object", {"tags": {"source": "minif2f"}}, "tags"),
    ("tags-null", {"tags": None}, "tags"),
]


async def test_a_bad_label_or_tag_is_a_422_naming_the_field_and_nothing_is_stored(
    idle_api: Api,
) -> None:
    await submit(idle_api, queued_item(99))  # something stored before: counts are not zeros
    before = await row_counts(idle_api)
    for case, extra, field in BAD_FIELDS:
        response = await idle_api.client.post("/v1/screenings", json=queued_item(0) | extra)
        error = error_of(response, 422)
        assert error["code"] == "validation_error", case
        assert [d["field"] for d in error["details"]] == [field], case
        assert field in error["message"], case
    assert await row_counts(idle_api) == before


@pytest.mark.parametrize("body_kind", ["json", "ndjson"])
async def test_a_bad_batch_item_is_named_by_index_and_field_and_nothing_is_stored(
    idle_api: Api, body_kind: str
) -> None:
    await post_batch(idle_api, [queued_item(99)])
    before = await row_counts(idle_api)
    for case, extra, field in BAD_FIELDS:
        items = [labelled(0, "faithful", ["ok"]), queued_item(1), queued_item(2) | extra]
        if body_kind == "json":
            response = await idle_api.client.post("/v1/batches", json={"items": items})
        else:
            body = jsonl(items[:1]) + b"\n" + jsonl(items[1:])  # index 2 is line 4
            response = await idle_api.client.post("/v1/batches", content=body, headers=NDJSON)
        error = error_of(response, 422)
        assert error["code"] == "invalid_items", case
        found = [(d["index"], d["field"], d.get("line")) for d in error["details"]]
        assert found == [(2, field, None if body_kind == "json" else 4)], case
    assert await row_counts(idle_api) == before


# --- Never seen by a provider, the evidence checks or the policy ---------------------------

TRANSLATOR_STEPS = [
    Reply("no verdict in this reply"),  # a format retry follows
    Reply(contract_reply("MISMATCH", issues="the bound is wrong")),
    Reply(contract_reply("FAITHFUL")),  # the confirmation
]
JUDGE_STEPS = [
    Reply(contract_reply("MISMATCH", back_translation=None, issues="n may be 0")),
    Reply(contract_reply("MISMATCH", back_translation=None, issues="n may be 0")),
]
# Truncating ℕ division in an exponent: the evidence checks find it.
NTH_ROOT = "theorem algebra_ineq_nto1onlt2m1on\n  (n : ℕ) :\n  n^(1 / n) < 2 - 1 / n := by sorry"
SCREENED_PAIR = {
    "informal": "Show that n^(1/n) <= 2 - 1/n for every positive natural number n.",
    "formal": NTH_ROOT,
    "header": "import Mathlib",
    "options": {"confirmations": 1},
}


async def screened(
    api: Api, server: ScriptedOpenAI, extra: dict[str, Any]
) -> tuple[dict[str, list[bytes]], dict[str, Any]]:
    """Each model's request bodies, in order, and what was decided, for one screening of
    SCREENED_PAIR run by the worker on freshly scripted replies."""
    rules = [
        server.script(model=TRANSLATOR_MODEL, steps=TRANSLATOR_STEPS),
        server.script(model=JUDGE_MODEL, steps=JUDGE_STEPS),
    ]
    before = len(server.requests)
    body = await wait_done(api, await submit(api, SCREENED_PAIR | extra))
    assert [rule.remaining for rule in rules] == [0, 0]  # every scripted step was asked for
    bodies: dict[str, list[bytes]] = {}
    for request in server.requests[before:]:
        bodies.setdefault(str(request.model), []).append(request.body)
    reviews = [(r["role"], r["attempt"], r["purpose"], r["raw_response"]) for r in body["reviews"]]
    keep = ("outcome", "reasons", "evidence", "policy_version", "evidence_version")
    return bodies, {k: body[k] for k in keep} | {"reviews": sorted(reviews)}


async def wait_done(api: Api, screening_id: str, within: float = 120.0) -> dict[str, Any]:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        body = await get_json(api, f"/v1/screenings/{screening_id}")
        if body["status"] == "done":
            return body
        await asyncio.sleep(0.05)  # a poll interval, not a wait for the work
    raise AssertionError(f"screening {screening_id} not done in {within} s: {body}")


async def test_every_provider_receives_byte_identical_requests_with_and_without_a_label(
    api: Api, scripted_openai: ScriptedOpenAI
) -> None:
    plain_bodies, plain_decided = await screened(api, scripted_openai, {})
    assert {model: len(sent) for model, sent in plain_bodies.items()} == {
        TRANSLATOR_MODEL: 3,  # review, format retry, confirmation
        JUDGE_MODEL: 2,  # review, confirmation
    }
    assert plain_decided["evidence"] and plain_decided["reasons"]  # there is something to move
    for label in ("mismatch", "faithful"):
        bodies, decided = await screened(
            api, scripted_openai, {"label": label, "tags": [SECRET_TAG, "split/dev"]}
        )
        assert bodies == plain_bodies, label  # per role, byte for byte
        assert decided == plain_decided, label


# --- Withheld from reviewers ---------------------------------------------------------------


def keys_anywhere(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            yield key
            yield from keys_anywhere(value)
    elif isinstance(node, list):
        for value in node:
            yield from keys_anywhere(value)


async def queued_for_review(
    api: Api, label: str | None, tags: list[str], ext: str, n: int = 7
) -> str:
    """A needs_review pair (pair `n`: only its number, label, tags and ids differ; one pair
    is one queue item, so items that must differ take different numbers)."""
    body = pair(n, "needs_review", external_id=ext, tags=tags)
    screening_id = await submit(api, body | ({"label": label} if label else {}))
    shown = await get_json(api, f"/v1/screenings/{screening_id}")
    assert (shown["outcome"], shown["label"], shown["tags"]) == ("needs_review", label, tags)
    return screening_id


async def test_queue_items_never_show_the_label_or_tags(idle_api: Api) -> None:
    screening_id = await queued_for_review(idle_api, "mismatch", [SECRET_TAG], "ext-a")
    [summary] = await queue_items(idle_api, None)
    assert summary["screening_id"] == screening_id
    item_path = f"/v1/queue/{summary['id']}"
    item = await idle_api.client.get(item_path)
    claim = await idle_api.client.post(f"{item_path}/claim")
    for response in (await idle_api.client.get("/v1/queue"), item, claim):
        assert response.status_code == 200, response.text
        assert not {"label", "tags"} & set(keys_anywhere(response.json())), response.text
        assert SECRET_TAG not in response.text
    assert item.json()["screening"]["id"] == screening_id  # the labelled screening itself


def word_counts(html: str) -> dict[str, int]:
    lowered = html.lower()
    return {word: lowered.count(word) for word in ("faithful", "mismatch", "label", "tag")}


async def test_the_review_pages_show_a_labelled_item_as_an_unlabelled_one(idle_api: Api) -> None:
    plain = await queued_for_review(idle_api, None, [], "ext-plain")
    says_mismatch = await queued_for_review(idle_api, "mismatch", [SECRET_TAG], "ext-m", 8)
    says_faithful = await queued_for_review(idle_api, "faithful", [SECRET_TAG], "ext-f", 9)
    item_of = {i["screening_id"]: i["id"] for i in await queue_items(idle_api, None)}
    pages = {}
    for screening_id in (plain, says_mismatch, says_faithful):
        response = await idle_api.client.get(f"/review/items/{item_of[screening_id]}")
        assert response.status_code == 200, response.text
        assert screening_id in response.text  # the page is the item's own
        pages[screening_id] = response.text
    # "faithful" and "mismatch" are on every page (buttons, badges): a label shown would add
    # to their count; the tag could only come from the tags.
    for screening_id in (says_mismatch, says_faithful):
        assert word_counts(pages[screening_id]) == word_counts(pages[plain])
        assert SECRET_TAG not in pages[screening_id]
    listing = await idle_api.client.get("/review")
    assert listing.status_code == 200, listing.text
    assert f"/review/items/{item_of[says_mismatch]}" in listing.text
    assert SECRET_TAG not in listing.text


def resolved(document: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = document["components"]["schemas"][schema["$ref"].split("/")[-1]]
    return schema


def response_schema(document: dict[str, Any], path: str) -> dict[str, Any]:
    content = document["paths"][path]["get"]["responses"]["200"]["content"]
    return resolved(document, content["application/json"]["schema"])


async def test_the_openapi_document_gives_queue_items_no_label(idle_api: Api) -> None:
    document = await get_json(idle_api, "/openapi.json")
    item = response_schema(document, "/v1/queue/{item_id}")
    # The screening of a sighted item, or of a blind one (the pair only).
    field = item["properties"]["screening"]
    shapes = [resolved(document, shape) for shape in field.get("anyOf", [field])]
    assert any({"informal", "formal", "reviews"} <= set(shape["properties"]) for shape in shapes)
    summary = resolved(document, response_schema(document, "/v1/queue")["properties"]["items"])
    for schema in (item, *shapes, resolved(document, summary["items"])):
        assert not {"label", "tags"} & set(schema["properties"]), schema
        assert "label" not in json.dumps(schema.get("required", []))
    # ...while the screening a submitter reads documents both.
    shown = response_schema(document, "/v1/screenings/{screening_id}")
    assert {"label", "tags"} <= set(shown["properties"])
    assert re.search(r"faithful.*mismatch", json.dumps(shown["properties"]["label"]))
