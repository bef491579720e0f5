"""Values at the edges of their type are 422s naming the parameter, never a 5xx or
a broken stream, on both databases: times at the ends of the calendar with offsets, in
`since`/`until` and in listing cursors; integers past what the id columns hold; U+0000 in
text filters (PostgreSQL refuses it in text)."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from tests.integration.test_api_errors import rejected
from tests.support.in_process_api import Api, assert_error_shape

# Both exist in their own zone, and neither in UTC: year 0 and year 10000.
EDGE_TIMES = ["0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00"]
PAST_64_BITS, PAST_32_BITS = 2**63, 2**31


def cursor(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def named(error: dict[str, Any]) -> set[str]:
    return {detail["field"] for detail in error.get("details", [])}


async def get_rejected(api: Api, path: str, params: dict[str, Any]) -> dict[str, Any]:
    response = await api.client.get(path, params=params)
    assert response.status_code == 422, response.text
    return assert_error_shape(response.json())


@pytest.mark.parametrize("moment", EDGE_TIMES)
@pytest.mark.parametrize("name", ["since", "until"])
async def test_report_times_past_the_calendar_in_utc_are_422(
    idle_api: Api, name: str, moment: str
) -> None:
    error = await get_rejected(idle_api, "/v1/reports/summary", {name: moment})
    assert error["code"] == "validation_error" and named(error) == {name}


@pytest.mark.parametrize("moment", EDGE_TIMES)
async def test_a_rescore_since_past_the_calendar_in_utc_is_422(idle_api: Api, moment: str) -> None:
    error = await rejected(idle_api, 422, url="/v1/rescore", json={"since": moment})
    assert named(error) == {"since"}


@pytest.mark.parametrize("moment", ["2026-01-01", "2026-01-01T00:00:00", "2026-01-01T05:00+05:00"])
async def test_a_time_without_an_offset_is_read_as_utc(idle_api: Api, moment: str) -> None:
    response = await idle_api.client.get("/v1/reports/summary", params={"since": moment})
    assert response.status_code == 200, response.text


CURSORS = [
    *(("/v1/screenings", f"{moment}|some-id") for moment in EDGE_TIMES),
    *(("/v1/batches", f"{moment}|some-id") for moment in EDGE_TIMES),
    *(("/v1/queue", f"{moment}|1") for moment in EDGE_TIMES),
    ("/v1/batches", "2026-01-01T00:00:00+00:00|a\x00b"),
    ("/v1/screenings", "2026-01-01T00:00:00+00:00|a\x00b"),
    ("/v1/queue", f"2026-01-01T00:00:00+00:00|{PAST_64_BITS}"),
    ("/v1/queue", f"2026-01-01T00:00:00+00:00|{PAST_32_BITS}"),
    ("/v1/queue", "2026-01-01T00:00:00+00:00|" + "9" * 40),
]


@pytest.mark.parametrize(("path", "decoded"), CURSORS)
async def test_a_cursor_no_listing_made_is_422(idle_api: Api, path: str, decoded: str) -> None:
    error = await get_rejected(idle_api, path, {"cursor": cursor(decoded)})
    assert error == {"code": "invalid_cursor", "message": "cursor: not a cursor from this listing"}


@pytest.mark.parametrize("moment", EDGE_TIMES)
async def test_the_review_page_refuses_such_a_cursor_as_a_page(idle_api: Api, moment: str) -> None:
    response = await idle_api.client.get("/review", params={"cursor": cursor(f"{moment}|1")})
    assert response.status_code == 422
    assert response.headers["content-type"].startswith("text/html")
    assert "cursor" in response.text


@pytest.mark.parametrize("after", [PAST_64_BITS, PAST_32_BITS, 10**40])
async def test_an_export_after_past_the_id_column_is_422(idle_api: Api, after: int) -> None:
    error = await get_rejected(idle_api, "/v1/decisions/export", {"after": after})
    assert named(error) == {"after"}


async def test_an_export_after_the_largest_id_is_an_empty_stream(idle_api: Api) -> None:
    response = await idle_api.client.get("/v1/decisions/export", params={"after": 2**31 - 1})
    assert (response.status_code, response.text) == (200, "")


TEXT_FILTERS = [
    ("/v1/reports/summary", "model"),
    ("/v1/reports/summary", "prompt_version"),
    ("/v1/reports/summary", "batch_id"),
    ("/v1/screenings", "external_id"),
    ("/v1/queue", "reason"),
    ("/v1/queue", "batch_id"),
]


@pytest.mark.parametrize(("path", "name"), TEXT_FILTERS)
async def test_a_nul_in_a_text_filter_is_422(idle_api: Api, path: str, name: str) -> None:
    error = await get_rejected(idle_api, path, {name: "a\x00b"})
    assert named(error) == {name} and "U+0000" in error["message"]


async def test_a_nul_in_a_rescore_batch_id_is_422(idle_api: Api) -> None:
    error = await rejected(idle_api, 422, url="/v1/rescore", json={"batch_id": "a\x00b"})
    assert named(error) == {"batch_id"}
