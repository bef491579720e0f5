"""Where a failed call went, as its review's error names it: never the base URL's
credentials (user info, query)."""

from __future__ import annotations

from app.pipeline.screening import endpoint_of


def test_endpoint_of_drops_user_info_and_query() -> None:
    assert endpoint_of("https://user:sk-secret@api.example.com:8443/v1?key=sk-x#f") == (
        "https://api.example.com:8443/v1"
    )
    assert endpoint_of("http://[::1]:8080/v1") == "http://[::1]:8080/v1"
    assert endpoint_of("http://host:port/v1") == "http://host/v1"
