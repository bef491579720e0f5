"""A Kimina body that is not UTF-8 is stored byte-identically and read `unavailable`, on
SQLite and PostgreSQL: the client keeps each byte that is not UTF-8 as a lone surrogate
(`surrogateescape`) and the column keeps lone surrogates (ProviderText(raw=True)), so the
stored body encodes back to the bytes received. Before, they were replaced by U+FFFD, and
an answer that parsed (a goal with a stray byte, say) was read `ok`."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from app.lean.body import read_body
from app.repositories import lean_checks
from app.vocabulary import LeanStatus
from tests.integration.test_lean_checks import FORMAL, HEADER, finished, lean_settings, submit
from tests.support.in_process_api import StartApi
from tests.support.scripted_kimina import Recorded, ScriptedKimina
from tests.support.scripted_openai import RawBody, RecordedRequest, ScriptedOpenAI, Step

# A Latin-1 byte in the goal, and the first byte of a UTF-8 sequence cut short.
STRAY = {"latin-1": b"x : \xe9Int", "cut sequence": b"x : Int\xe2\x8a"}


@dataclass(frozen=True)
class NotUtf8(Recorded):
    """A recorded answer that reads `ok`, with `stray` bytes put into its goal."""

    stray: bytes = b""

    def raw(self, snippet_id: str) -> bytes:
        return self.body(snippet_id).encode().replace(b"x : Int", self.stray, 1)


class Kimina(ScriptedKimina):
    def _resolve(self, step: Recorded | Step, request: RecordedRequest) -> Step:
        if isinstance(step, NotUtf8):
            return RawBody(step.raw(request.json["snippets"][0]["id"]))
        return super()._resolve(step, request)


@pytest.mark.parametrize("case", sorted(STRAY))
async def test_a_body_that_is_not_utf8_is_stored_byte_for_byte_and_needs_review(
    start_api: StartApi, database_url: str, scripted_openai: ScriptedOpenAI, case: str
) -> None:
    step = NotUtf8("sorry_goal.json", stray=STRAY[case])
    with Kimina() as kimina:
        kimina.script_code("refl_int", [step])
        settings = lean_settings(database_url, scripted_openai, kimina.base_url)
        async with start_api(settings) as api:
            screening = await finished(api, await submit(api))
            async with api.runtime.sessions() as session:
                stored = await lean_checks.for_screening(session, screening["id"])
    sent = step.raw(screening["id"])
    assert stored is not None and stored.raw_body is not None
    assert stored.raw_body.encode("utf-8", "surrogateescape") == sent
    assert (stored.status, stored.detail) == (LeanStatus.UNAVAILABLE, "the body is not UTF-8")
    assert (screening["outcome"], screening["reasons"]) == ("needs_review", ["lean_unavailable"])
    assert scripted_openai.requests == []
    # The API's JSON cannot carry a lone surrogate: it shows U+FFFD where the byte was.
    assert "\ufffd" in screening["lean_check"]["raw_body"]
    assert stored.code == f"{HEADER}\n{FORMAL}"


def test_the_reader_refuses_a_lone_surrogate_but_not_an_escaped_one() -> None:
    body = Recorded("sorry_goal.json").body("s-1")
    code = f"{HEADER}\n{FORMAL}"
    assert read_body(body.replace("x : Int", "x : \udce9Int"), "s-1", code).status is (
        LeanStatus.UNAVAILABLE
    )
    # JSON's own escape of a surrogate is ASCII text, and valid JSON: read as before.
    assert read_body(body.replace("x : Int", "x : \\udce9Int"), "s-1", code).status is (
        LeanStatus.OK
    )
