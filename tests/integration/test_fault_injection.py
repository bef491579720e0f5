"""Fault injection: every provider fault mode of issue 32 (and the older ones), against each
role in turn while the other answers FAITHFUL cleanly, through the real pipeline (the
embedded worker, the real LLM client over loopback to the scripted provider, SQLite and
PostgreSQL). No pair may pass, and none may be lost: every call the provider saw is stored
as a review, and every screening ends in an outcome the policy reached (not `job_failed`).

One batch holds every case, so one app screens them all at once, not one app per case; the
providers that hang or trickle run apart, with short timeouts for their role only. A
control pair answered FAITHFUL by both roles must pass in every batch, or the test could
not fail. A provider asking to wait for days: test_fault_injection_retry_after.py.
"""

from __future__ import annotations

import asyncio
import functools
import json
import time
import zlib
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import httpx2
import pytest

from app.settings import ProviderSettings, Settings
from tests.support.batches import get_json, post_batch, results
from tests.support.in_process_api import JUDGE_MODEL, TRANSLATOR_MODEL, Api, StartApi
from tests.support.scripted_openai import (
    ABSENT,
    Absent,
    BigReply,
    Hang,
    HttpError,
    RawBody,
    RecordedRequest,
    Reply,
    Reset,
    ScriptedOpenAI,
    Step,
    Trickle,
    contract_reply,
)

ROLES = ("translator", "judge")
MODEL_OF = {"translator": TRANSLATOR_MODEL, "judge": JUDGE_MODEL}
FAITHFUL = {
    "translator": contract_reply("FAITHFUL"),
    "judge": contract_reply("FAITHFUL", back_translation=None),
}
MISMATCH = {
    "translator": contract_reply("MISMATCH", issues="the bound is dropped"),
    "judge": contract_reply("MISMATCH", back_translation=None, issues="the bound is dropped"),
}
# The read timeout and connect timeout of a role whose provider hangs or trickles (its
# calls all do; the other role keeps the generous timeouts of tests/support/in_process_api.py).
SHORT_TIMEOUTS = {"timeout_seconds": 2.0, "connect_timeout_seconds": 1.0}
# Four times the reply cap (the issue's probe sent 50 MB, which passed), and most of it.
OVER_CAP_BYTES = 4 * ProviderSettings().max_response_bytes
UNDER_CAP_BYTES = ProviderSettings().max_response_bytes * 7 // 8
# What one GET /v1/screenings/{id} may weigh, however large the replies were (the probe's
# 50 MB reply made it 100 MB), and the longest line of /metrics (a model name is a label).
MAX_SCREENING_BYTES = 256 << 10
MAX_METRICS_LINE = 1024
# Each fault answers every call of its role for its pair: however often the pipeline asks
# again, it meets the same fault, never the default FAITHFUL reply.
REPEATS = 8
USAGE_KEYS = ("prompt_tokens", "completion_tokens", "total_tokens")


def _raw_completion(choices: str, *, model: str = "fault-model") -> RawBody:
    return RawBody(
        f'{{"id": "chatcmpl-fault", "object": "chat.completion", "model": {json.dumps(model)},'
        f' "choices": {choices}, "usage": {{"prompt_tokens": 9, "completion_tokens": 9}}}}'
    )


def _choices(content: str, finish: str = '"finish_reason": "stop"') -> str:
    message = f'{{"role": "assistant", "content": {content}}}'
    return f'[{{"index": 0, "message": {message}, {finish}}}]'


def duplicate_choices(role: str) -> RawBody:
    """Two `choices` keys: the first MISMATCH, the last (what json.loads keeps) FAITHFUL."""
    first = _choices(json.dumps(MISMATCH[role]))
    last = _choices(json.dumps(FAITHFUL[role]))
    return _raw_completion(f'{first}, "choices": {last}')


def duplicate_content(role: str) -> RawBody:
    both = f'{json.dumps(MISMATCH[role])}, "content": {json.dumps(FAITHFUL[role])}'
    return _raw_completion(_choices(both))


def duplicate_finish_reason(role: str) -> RawBody:
    """A cut reply whose second finish_reason says it was not."""
    finish = '"finish_reason": "length", "finish_reason": "stop"'
    return _raw_completion(_choices(json.dumps(FAITHFUL[role]), finish))


@functools.cache
def gzip_bomb() -> bytes:
    """A FAITHFUL completion that gzip shrinks to about 1/1000 of itself: 64 times the cap
    once decompressed, in some 64 KiB on the wire."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)  # wbits 31: the gzip format
    content = json.dumps(FAITHFUL["translator"])[:-1].encode()
    parts = [compressor.compress(b'{"choices": [{"message": {"content": ' + content)]
    filler = b" " * (1 << 20)
    parts += [compressor.compress(filler) for _ in range(OVER_CAP_BYTES * 16 >> 20)]
    parts.append(compressor.compress(b'"}, "finish_reason": "stop"}]}') + compressor.flush())
    return b"".join(parts)


def finishing(reason: str | Absent | None) -> Callable[[str], Step]:
    return lambda role: Reply(FAITHFUL[role], finish_reason=reason)


def reporting_model(model: str) -> Callable[[str], Step]:
    """A complete MISMATCH from a provider naming this model: it must be stored and flag."""
    return lambda role: Reply(MISMATCH[role], model=model)


# Fault modes: what the faulty role's provider answers, by role.
FAULTS: dict[str, Callable[[str], Step]] = {
    # Issue 32, item 1: a reply is complete only with a finish reason the contract lists.
    "finish_error": finishing("error"),
    "finish_model_length": finishing("model_length"),
    "finish_max_tokens": finishing("max_tokens"),
    "finish_LENGTH": finishing("LENGTH"),
    "finish_null": finishing(None),
    "finish_absent": finishing(ABSENT),
    "finish_empty": finishing(""),
    # Item 10: 204 characters (and it starts like a complete one).
    "finish_204_chars": finishing("stop" * 51),
    # Item 3: duplicate keys on the way to the content.
    "duplicate_choices": duplicate_choices,
    "duplicate_content": duplicate_content,
    "duplicate_finish_reason": duplicate_finish_reason,
    # Item 2: a reply over the cap (a FAITHFUL contract reply, padded).
    "over_cap": lambda role: BigReply(OVER_CAP_BYTES),
    "gzip_bomb": lambda role: RawBody(gzip_bomb(), headers={"content-encoding": "gzip"}),
    # Items 10, 15, 16: model names PostgreSQL, a terminal or /metrics may choke on.
    "model_nul": reporting_model("fault\x00model"),
    "model_lone_surrogate": reporting_model("fault\ud800model"),
    "model_10kb": reporting_model("m" * 10_240),
    "model_2mb": reporting_model("m" * (2 << 20)),
    # As long as a name can be within the cap: stored, shown and counted, bounded.
    "model_under_cap": reporting_model("m" * UNDER_CAP_BYTES),
    "model_terminal_escapes": reporting_model("\x1b]0;pwned\x07\x1b[2J"),
    # Item 10's other fields: the reply text itself, and token counts no column expects.
    "content_nul": lambda role: Reply(MISMATCH[role].replace("dropped", "dropped\x00")),
    "content_lone_surrogate": lambda role: Reply(MISMATCH[role].replace("dropped", "\udfff")),
    "usage_huge": lambda role: Reply(MISMATCH[role], usage=dict.fromkeys(USAGE_KEYS, 10**30)),
    # Faults that held before issue 32.
    "http_500": lambda role: HttpError(500, "scripted outage"),
    "reset": lambda role: Reset(),
    "malformed_json": lambda role: RawBody('{"choices": [{"message": {"content": "VERDICT'),
    # Deeper than Python's json recurses (RecursionError, not ValueError), within the cap.
    "deep_nesting": lambda role: RawBody('{"choices": ' + "[" * 100_000 + "]" * 100_000 + "}"),
    "empty_content": lambda role: Reply(""),
    "null_content": lambda role: Reply(None),
    "content_filter": finishing("content_filter"),
    "refusal": lambda role: Reply(FAITHFUL[role], refusal="I will not answer that."),
}
# Providers that never finish a reply: run apart, with short timeouts for that role only.
SLOW_FAULTS: dict[str, Callable[[str], Step]] = {
    "hang": lambda role: Hang(600),
    "trickle": lambda role: Trickle(interval=0.2),  # every read succeeds; the deadline ends it
}
# Complete MISMATCH replies whose only oddity is the model name: they must flag, not just
# fail to pass (a lost review would end `needs_review ["job_failed"]`). A 2 MB name makes
# the body itself too large, which may end as a provider error instead.
MUST_FLAG = {
    "content_nul",
    "content_lone_surrogate",
    "usage_huge",
    "model_nul",
    "model_lone_surrogate",
    "model_10kb",
    "model_under_cap",
    "model_terminal_escapes",
}
# Finish reasons short enough that the stored review keeps them exactly.
KEPT_FINISH = {
    "finish_error": "error",
    "finish_model_length": "model_length",
    "finish_max_tokens": "max_tokens",
    "finish_LENGTH": "LENGTH",
    "finish_null": None,
    "finish_absent": None,
    "finish_empty": "",
}


@dataclass(frozen=True)
class Case:
    name: str  # "<fault>/<role>", or "control" / "bidi_lean"
    number: int
    formal_extra: str = ""

    @property
    def marker(self) -> str:
        """In the Lean statement, so in every prompt of this pair and no other."""
        return f"fault_{self.number:03d}_x"

    def item(self) -> dict[str, Any]:
        k = self.number
        return {
            "informal": f"For every natural number n, n + {k} = {k} + n.",
            "formal": f"theorem {self.marker} (n : ℕ) : n + {k} = {k}{self.formal_extra} + n"
            " := by sorry",
            "external_id": self.name,
        }


def cases(faults: Iterable[str], roles: Iterable[str] = ROLES) -> list[Case]:
    """A control pair, then one pair per fault and role."""
    names = [f"{fault}/{role}" for fault in faults for role in roles]
    return [Case("control", 1), *(Case(name, n) for n, name in enumerate(names, start=2))]


def clean_reply(request: RecordedRequest) -> Step:
    """What a healthy provider answers: each role's FAITHFUL contract reply."""
    return Reply(FAITHFUL["judge" if request.model == JUDGE_MODEL else "translator"])


def script_faults(
    server: ScriptedOpenAI, all_cases: list[Case], faults: dict[str, Callable[[str], Step]]
) -> None:
    server.default = clean_reply
    for case in all_cases:
        fault, _, role = case.name.partition("/")
        if fault in faults:
            steps = [faults[fault](role)] * REPEATS
            server.script(case.marker, model=MODEL_OF[role], steps=steps)


def fault_settings(settings: Settings, short_timeouts: Iterable[str] = ()) -> Settings:
    """One HTTP attempt a call, so each request the provider sees is one review, and one
    format re-ask, so a fault costs at most two calls; short timeouts for these roles."""
    update: dict[str, Any] = {"format_retries": 1}
    for role in ROLES:
        provider = {"max_retries": 0, **(SHORT_TIMEOUTS if role in short_timeouts else {})}
        update[role] = getattr(settings, role).model_copy(update=provider)
    return settings.model_copy(update=update)


async def settle(api: Api, batch_id: str, within: float) -> dict[str, Any]:
    """The batch's progress once it is done, or at the deadline (undone items are then
    reported by the checks, case by case, rather than as one timeout)."""
    deadline = time.monotonic() + within
    while True:
        progress = await get_json(api, f"/v1/batches/{batch_id}")
        if progress["status"] == "done" or time.monotonic() > deadline:
            return progress
        await asyncio.sleep(0.1)  # a poll interval, not a wait for the work


def requests_by_role(server: ScriptedOpenAI, case: Case) -> Counter[str]:
    roles = {model: role for role, model in MODEL_OF.items()}
    mine = [r for r in server.requests if case.marker in r.text]
    return Counter(roles.get(r.model or "", "?") for r in mine)


def problems_of(case: Case, response: httpx2.Response, asked: Counter[str]) -> list[str]:
    """Everything wrong with one case's screening; [] when it held."""
    body: dict[str, Any] = response.json()
    found = [f"GET is {len(response.content)} bytes"] * (
        len(response.content) > MAX_SCREENING_BYTES
    )
    outcome, reasons = body.get("outcome"), body.get("reasons", [])
    fault, _, role = case.name.partition("/")
    if body.get("status") != "done":
        found.append(f"not done: status {body.get('status')}")
    if case.name == "control":
        if outcome != "passed":
            found.append(f"control did not pass: {outcome} {reasons}")
    elif outcome == "passed":
        found.append("PASSED")
    if "job_failed" in reasons:
        found.append(f"job failed: {body.get('error')}")
    reviews = [r for r in body.get("reviews", []) if not r.get("supplied")]
    stored = Counter(r["role"] for r in reviews)
    if stored != asked:
        found.append(f"calls made {dict(asked)}, reviews stored {dict(stored)}")
    mine = [r for r in reviews if r["role"] == role]
    if fault in MUST_FLAG and (outcome, [r["verdict"] for r in mine][-1:]) != (
        "flagged",
        ["mismatch"],
    ):
        found.append(f"a complete MISMATCH did not flag: {outcome} {reasons}")
    if fault in KEPT_FINISH and mine and mine[0]["finish_reason"] != KEPT_FINISH[fault]:
        found.append(f"finish_reason stored as {mine[0]['finish_reason']!r}")
    return found


async def report_problems(api: Api) -> dict[str, list[str]]:
    """What went wrong reading back what was stored: /metrics and the summary report must
    answer, and a provider's model name must not make a scrape line unbounded."""
    problems: dict[str, list[str]] = {}
    for path in ("/metrics", "/v1/reports/summary"):
        response = await api.client.get(path)
        if response.status_code != 200:
            problems[path] = [f"HTTP {response.status_code}: {response.text[:300]}"]
    longest = max(map(len, (await api.client.get("/metrics")).text.splitlines()))
    if longest > MAX_METRICS_LINE:
        problems["/metrics"] = [f"a line of {longest} characters"]
    return problems


async def screen_cases(
    api: Api, server: ScriptedOpenAI, all_cases: list[Case]
) -> dict[str, list[str]]:
    """Screen every case in one batch; what went wrong, by case (and by endpoint read)."""
    accepted = await post_batch(api, [case.item() for case in all_cases])
    await settle(api, accepted["id"], within=120)
    by_name = {row["external_id"]: row["id"] for row in await results(api, accepted["id"])}
    problems: dict[str, list[str]] = {}
    for case in all_cases:
        response = await api.client.get(f"/v1/screenings/{by_name[case.name]}")
        if found := problems_of(case, response, requests_by_role(server, case)):
            problems[case.name] = found
    return problems | await report_problems(api)


def report_of(problems: dict[str, list[str]], all_cases: list[Case]) -> str:
    listed = "\n".join(f"{name}: {'; '.join(found)}" for name, found in problems.items())
    return f"{len(problems)} of {len(all_cases)} cases failed:\n{listed}"


async def test_no_fault_passes_a_pair_or_loses_a_call(
    start_api: StartApi, configured_settings: Settings, scripted_openai: ScriptedOpenAI
) -> None:
    # Item 4 rides along: a right-to-left override in the Lean, both replies clean FAITHFUL.
    all_cases = [*cases(FAULTS), Case("bidi_lean", len(FAULTS) * len(ROLES) + 2, "\u202e")]
    script_faults(scripted_openai, all_cases, FAULTS)
    async with start_api(fault_settings(configured_settings)) as api:
        problems = await screen_cases(api, scripted_openai, all_cases)
    assert not problems, report_of(problems, all_cases)


@pytest.mark.parametrize("role", ROLES)
async def test_a_provider_that_never_finishes_a_reply_is_cut_off_and_stored(
    role: str, start_api: StartApi, configured_settings: Settings, scripted_openai: ScriptedOpenAI
) -> None:
    all_cases = cases(SLOW_FAULTS, [role])
    script_faults(scripted_openai, all_cases, SLOW_FAULTS)
    async with start_api(fault_settings(configured_settings, [role])) as api:
        problems = await screen_cases(api, scripted_openai, all_cases)
    assert not problems, report_of(problems, all_cases)
