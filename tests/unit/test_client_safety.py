"""faithscreen_client on answers and URLs it must not trust: a results line cut by a
character other than b"\\n", a line or a body that is not what the API writes (always a
FaithScreenError, the one exception it documents), and an API key that would cross the
network in clear text."""

from __future__ import annotations

import json
import warnings

import httpx2
import pytest

from faithscreen_client import (
    AsyncClient,
    Backoff,
    Client,
    FaithScreenError,
    InsecureHttpWarning,
)
from faithscreen_client.loopback import host_of_header, is_loopback_host, is_loopback_origin

FAST = Backoff(retries=0)
# Every character Python's str.splitlines (and so httpx2's iter_lines) ends a line at,
# besides b"\n": JSON may hold the last four unescaped in a string.
BREAKS = "\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
ODD_ID = "a\u2028b\u2029c\x85d"


def result(index: int, external_id: str) -> dict[str, object]:
    return {
        "index": index,
        "id": f"s{index}",
        "external_id": external_id,
        "status": "done",
        "outcome": "passed",
        "reasons": [],
    }


def serving(body: bytes, chunk: int = 3) -> Client:
    """A client whose server streams `body` (in small chunks, so lines span them)."""

    def handle(_: httpx2.Request) -> httpx2.Response:
        pieces = [body[i : i + chunk] for i in range(0, len(body), chunk)]
        return httpx2.Response(200, content=iter(pieces))

    return Client("http://fs.test", "fs_key", backoff=FAST, transport=httpx2.MockTransport(handle))


def raw_line(value: dict[str, object]) -> bytes:
    # As a server that escapes nothing it need not writes it (an older FaithScreen did).
    return json.dumps(value, ensure_ascii=False).encode() + b"\n"


# --- results lines -------------------------------------------------------------------------


def test_a_results_line_is_cut_only_at_newline() -> None:
    body = raw_line(result(0, ODD_ID)) + raw_line(result(1, f"x{BREAKS[3:]}y"))
    with serving(body) as client:
        got = [(r.index, r.external_id) for r in client.batch_results("b")]
        assert got == [(0, ODD_ID), (1, f"x{BREAKS[3:]}y")]
        assert len(list(client.batch_result_lines("b"))) == 2


async def test_the_async_client_cuts_results_lines_only_at_newline() -> None:
    body = raw_line(result(0, ODD_ID)) + b"\n" + raw_line(result(1, "z"))[:-1]  # no last \n

    def handle(_: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, content=body)

    transport = httpx2.MockTransport(handle)
    async with AsyncClient("http://fs.test", "k", backoff=FAST, transport=transport) as client:
        got = [(r.index, r.external_id) async for r in client.batch_results("b")]
    assert got == [(0, ODD_ID), (1, "z")]


@pytest.mark.parametrize(
    "line",
    [b"not json", b'{"index": 0}', b"[1, 2]", b'{"index": "\xff"}', b'{"index": 0, "id": '],
)
def test_an_unreadable_results_line_is_a_faithscreen_error(line: bytes) -> None:
    with serving(raw_line(result(0, "ok")) + line + b"\n") as client:
        results = client.batch_results("b")
        assert next(results).external_id == "ok"
        with pytest.raises(FaithScreenError) as raised:
            next(results)
    assert raised.value.code == "unreadable_answer" and raised.value.status is None
    assert "results line" in raised.value.message


def test_a_success_body_that_is_not_the_model_is_a_faithscreen_error() -> None:
    with (
        serving(b'{"id": "b", "total": "many"}') as client,
        pytest.raises(FaithScreenError) as raised,
    ):
        client.get_batch("b")
    assert raised.value.code == "unreadable_answer"
    assert "Batch" in raised.value.message


# --- a key over plain http ------------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "http://faithscreen.example.com:8000",
        "http://192.168.1.5:8000",
        "HTTP://10.0.0.1",
        "http://[2001:db8::1]:8000",
        "http://localhost.example.com",
        "http://127.0.0.1.example.com",
        "http://user:pw@faithscreen.example.com",
    ],
)
def test_a_key_over_plain_http_to_another_host_is_refused(url: str) -> None:
    for make in (Client, AsyncClient):
        with pytest.raises(FaithScreenError) as raised:
            make(url, api_key="fs_secret")
        assert raised.value.code == "insecure_http"
        assert "https://" in raised.value.message and "allow_insecure_http" in raised.value.message
        assert "pw" not in raised.value.message and "fs_secret" not in raised.value.message


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8000",
        "http://127.8.9.10",
        "http://localhost:8000",
        "http://[::1]:8000",
        "https://faithscreen.example.com",
    ],
)
def test_loopback_and_https_take_a_key_without_a_word(url: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Client(url, api_key="fs_secret").close()


def test_plain_http_without_a_key_or_inside_the_process_is_allowed() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Client("http://faithscreen.example.com").close()
        mock = httpx2.MockTransport(lambda _: httpx2.Response(200))
        Client("http://faithscreen.example.com", api_key="k", transport=mock).close()


def test_the_opt_in_takes_the_key_with_a_loud_warning() -> None:
    with pytest.warns(InsecureHttpWarning, match="clear text") as caught:
        Client("http://fs.example.com", "fs_k", allow_insecure_http=True).close()
    assert "fs_k" not in str(caught[0].message)
    with pytest.warns(InsecureHttpWarning, match="http://fs.example.com"):
        AsyncClient("http://fs.example.com", "fs_k", allow_insecure_http=True)


# --- what is loopback ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("header", "host"),
    [
        ("localhost", "localhost"),
        ("localhost:8000", "localhost"),
        ("127.0.0.1:80", "127.0.0.1"),
        ("[::1]", "::1"),
        ("[::1]:8000", "::1"),
        ("::1", ""),
        ("[::1]x", ""),
        ("localhost:http", ""),
        ("attacker.example:8000", "attacker.example"),
    ],
)
def test_the_host_of_a_host_header(header: str, host: str) -> None:
    assert host_of_header(header) == host


def test_loopback_names_addresses_and_origins() -> None:
    assert all(map(is_loopback_host, ["localhost", "LOCALHOST", "127.0.0.1", "::1", "[::1]"]))
    assert not any(
        map(is_loopback_host, ["", "0.0.0.0", "a.localhost", "localhost.example", "10.0.0.1"])
    )
    assert is_loopback_origin("http://127.0.0.1:8000")
    assert is_loopback_origin("https://localhost")
    assert is_loopback_origin("http://[::1]:8000")
    for origin in ("null", "http://attacker.example", "file://", "ftp://127.0.0.1", "http://x:y"):
        assert not is_loopback_origin(origin), origin


def test_a_results_line_nested_too_deeply_is_a_faithscreen_error() -> None:
    with serving(raw_line(result(0, "ok")) + b"[" * 200_000 + b"\n") as client:
        results = client.batch_results("b")
        assert next(results).external_id == "ok"
        with pytest.raises(FaithScreenError) as raised:
            next(results)
    assert raised.value.code == "unreadable_answer" and "nested too deeply" in raised.value.message
