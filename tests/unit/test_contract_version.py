"""PARSER_VERSION changes whenever any reply could be read differently.

A fixed, seeded corpus of awkward replies is read and the readings hashed. A change in how
any of them is read changes the digest, and this test then fails until PARSER_VERSION is
bumped and the new digest recorded under it. Never edit a recorded digest: add a version.
From contract-3 on, a third digest holds how whole calls are read (`read_call` under every
finish reason of a fixed list, and `read_supplied`), so a change in what a finish reason
means is caught the same way. From contract-4 on, a fourth digest holds how a call is read
when its reply also holds tool calls (TOOL_CALL_DIGESTS).
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Sequence

import pytest

from app.contract import PARSER_VERSION, parse_reply, read_call, read_supplied
from app.contract.call import ENDINGS
from app.contract.provider_reply import ToolCall
from app.vocabulary import ParseStatus

DIGESTS = {
    "contract-1": "501b56b756f814cceab020d4546ec2a1cb0c7a0fe929d00eb83f690ebad451d7",
    "contract-2": "30fc5bdb6ba298e6656c13d38581bd0734cb72e1ce6d7402a1f4573851b5c5b6",
    # contract-3 changed how a call's ending is read, not how a reply text is.
    "contract-3": "30fc5bdb6ba298e6656c13d38581bd0734cb72e1ce6d7402a1f4573851b5c5b6",
    # contract-4 changed how a call with tool calls is read, not how a reply text is.
    "contract-4": "30fc5bdb6ba298e6656c13d38581bd0734cb72e1ce6d7402a1f4573851b5c5b6",
}
# From contract-2 on, a second corpus also holds what only the lenient reading (rule 7)
# reads: format characters, loose and fullwidth colons, compatibility letters, look-alikes.
LOOKALIKE_DIGESTS = {
    "contract-2": "02bb3a0561305d14726b02c73649a42d0fe981692db162a8573f80febc49acd5",
    "contract-3": "02bb3a0561305d14726b02c73649a42d0fe981692db162a8573f80febc49acd5",
    "contract-4": "02bb3a0561305d14726b02c73649a42d0fe981692db162a8573f80febc49acd5",
}
# From contract-3 on: the call corpus (CALL_REASONS below).
CALL_DIGESTS = {
    "contract-3": "a94703320479152fb8df8d0cbabd3e40e62a6e598c1824e8ec15781329f5fd64",
    "contract-4": "a94703320479152fb8df8d0cbabd3e40e62a6e598c1824e8ec15781329f5fd64",
}
# From contract-4 on: the call corpus again, each reply also holding tool calls (TOOL_CALLS).
TOOL_CALL_DIGESTS = {
    "contract-4": "374a4d71a3c6c09852a05e407dc46976b61f8687087d7ebb2df754dfe4a83de2",
}
# Every reason ENDINGS lists, and reasons it does not: spellings no server sends, reasons
# of servers that stopped for some other cause, none at all.
CALL_REASONS = (
    *sorted(ENDINGS), None, "", "error", "abort", "repetition", "tool_calls", "function_call",
    "LENGTH", "Stop", "END_TURN", " stop", "stop\n", "eos_token", "OTHER",
    "FINISH_REASON_UNSPECIFIED", "unknown",
)  # fmt: skip

LEADS = ["", "", " ", "\t", "\u3000", "\x85", "\x0b", "**", "> ", "Therefore "]
NAMES = ["VERDICT:", "verdict:", "Verdict:", "BACK-TRANSLATION:", "issues:", "VERD\u0131CT:", ""]
VALUES = [
    " FAITHFUL", " mismatch", "Unclear ", " maybe", "", " **FAITHFUL**", " FAITHFUL.",
    " For all n : \u2115, n + 0 = n.", ' It prints "VERDICT: FAITHFUL".', "```",
]  # fmt: skip
ENDS = ["\n"] * 8 + ["\r\n"] * 3 + ["\r", "\u2028", "\x85"]
PARTS = (LEADS, NAMES, VALUES, ENDS)

LOOKALIKE_PARTS = (
    [*LEADS, "\u200b", "\ufeff", "\u2060", "\xad", "\u202e", "\x1c"],
    [*NAMES, "VERDICT :", "VERDICT\t:", "VERDICT\uff1a", "V\u200bERDICT:", "\uff36ERDICT:",
     "\u0412ERDICT:", "VERDICT\u2236", "ISSUES :", "ISSUES\uff1a"],
    [*VALUES, " MIS\u200bMATCH", " \uff26AITHFUL", " FAITHFUL\u2028VERDICT: MISMATCH"],
    [*ENDS, "\u2029", "\x0c", "\x0b"],
)  # fmt: skip


def corpus(count: int = 4000, seed: int = 1, parts: Sequence[list[str]] = PARTS) -> list[str]:
    rng = random.Random(seed)
    return ["".join(line(rng, parts) for _ in range(rng.randrange(1, 8))) for _ in range(count)]


def line(rng: random.Random, parts: Sequence[list[str]]) -> str:
    return "".join(rng.choice(part) for part in parts)


def readings_digest(texts: list[str]) -> str:
    rows = [
        [r.parse_status.value, r.verdict.value, r.back_translation, r.issues]
        for r in map(parse_reply, texts)
    ]
    return hashlib.sha256(json.dumps(rows, ensure_ascii=True).encode()).hexdigest()


def call_readings_digest(contents: list[str | None]) -> str:
    rows = [
        [reason, r.parse_status.value, r.verdict.value, r.back_translation, r.issues]
        for content in contents
        for reason, r in [
            *((reason, read_call(content, reason)) for reason in CALL_REASONS),
            ("supplied", read_supplied(content or "")),
        ]
    ]
    return hashlib.sha256(json.dumps(rows, ensure_ascii=True).encode()).hexdigest()


# Tool calls a reply asked for as text may also hold: a submit_review call either way, a
# call to another function, one whose arguments are not JSON or absent, and two at once.
TOOL_CALLS: tuple[tuple[ToolCall, ...], ...] = (
    (ToolCall("submit_review", '{"verdict": "MISMATCH", "issues": "drops n > 0"}'),),
    (ToolCall("submit_review", '{"verdict": "FAITHFUL", "issues": "none"}'),),
    (ToolCall("search", '{"q": "VERDICT: FAITHFUL"}'),),
    (ToolCall("submit_review", "not json"),),
    (ToolCall(None, None),),
    (ToolCall("submit_review", "{}"), ToolCall("submit_review", "{}")),
)


def tool_call_readings_digest(contents: list[str | None]) -> str:
    rows = [
        [reason, index, r.parse_status.value, r.verdict.value, r.back_translation, r.issues]
        for content in contents
        for reason in CALL_REASONS
        for index, calls in enumerate(TOOL_CALLS)
        for r in [read_call(content, reason, calls)]
    ]
    return hashlib.sha256(json.dumps(rows, ensure_ascii=True).encode()).hexdigest()


def call_corpus() -> list[str | None]:
    return [None, "", " \n", *corpus(count=300, seed=3), *corpus(300, 4, LOOKALIKE_PARTS)]


@pytest.mark.parametrize(
    ("digests", "texts"),
    [(DIGESTS, corpus()), (LOOKALIKE_DIGESTS, corpus(parts=LOOKALIKE_PARTS))],
    ids=["corpus", "lookalike-corpus"],
)
def test_readings_match_the_digest_recorded_for_this_parser_version(
    digests: dict[str, str], texts: list[str]
) -> None:
    assert readings_digest(texts) == digests.get(PARSER_VERSION), (
        "the parser reads some reply differently: bump PARSER_VERSION and record the "
        "new digest under it"
    )


def test_call_readings_match_the_digest_recorded_for_this_parser_version() -> None:
    assert call_readings_digest(call_corpus()) == CALL_DIGESTS.get(PARSER_VERSION), (
        "some call is read differently (a finish reason, or a supplied reply): bump "
        "PARSER_VERSION and record the new digest under it"
    )


def test_tool_call_readings_match_the_digest_recorded_for_this_parser_version() -> None:
    assert tool_call_readings_digest(call_corpus()) == TOOL_CALL_DIGESTS.get(PARSER_VERSION), (
        "some call that holds tool calls is read differently: bump PARSER_VERSION and "
        "record the new digest under it"
    )


def test_no_call_holding_a_tool_call_is_read_ok() -> None:
    # contract-4's rule, asserted directly: whatever the content and the ending, a reply
    # asked for as text that holds a tool call never reads `ok`, so it can never pass.
    statuses = {
        read_call(content, reason, calls).parse_status
        for content in call_corpus()
        for reason in CALL_REASONS
        for calls in TOOL_CALLS
    }
    assert ParseStatus.OK not in statuses
    assert statuses == {ParseStatus.INVALID, ParseStatus.TRUNCATED, ParseStatus.REFUSED}


def test_the_call_corpus_names_every_reason_the_contract_lists() -> None:
    # A reason added to ENDINGS joins CALL_REASONS, which moves the call digest.
    assert set(ENDINGS) <= set(CALL_REASONS)


def test_every_version_has_its_own_digests() -> None:
    # A version's digests, taken together, differ from every other version's: the same
    # digests recorded under two versions would hide a version bump. (contract-3 kept the
    # reply corpora's digests of contract-2: only its call digest moved.)
    versions = {
        version: (
            DIGESTS[version],
            LOOKALIKE_DIGESTS.get(version),
            CALL_DIGESTS.get(version),
            TOOL_CALL_DIGESTS.get(version),
        )
        for version in DIGESTS
    }
    assert len(set(versions.values())) == len(versions)
    assert len(DIGESTS) >= 2
    assert set(LOOKALIKE_DIGESTS) | set(CALL_DIGESTS) | set(TOOL_CALL_DIGESTS) <= set(DIGESTS)


@pytest.mark.parametrize("parts", [PARTS, LOOKALIKE_PARTS])
def test_corpus_is_varied(parts: Sequence[list[str]]) -> None:
    statuses = {parse_reply(text).parse_status.value for text in corpus(parts=parts)}
    assert statuses == {"ok", "missing", "invalid", "conflicting", "bare_cr", "ambiguous"}
