"""PARSER_VERSION changes whenever any reply could be read differently.

A fixed, seeded corpus of awkward replies is read and the readings hashed. A change in how
any of them is read changes the digest, and this test then fails until PARSER_VERSION is
bumped and the new digest recorded under it. Never edit a recorded digest: add a version.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Sequence

import pytest

from app.contract import PARSER_VERSION, parse_reply

DIGESTS = {
    "contract-1": "501b56b756f814cceab020d4546ec2a1cb0c7a0fe929d00eb83f690ebad451d7",
    "contract-2": "30fc5bdb6ba298e6656c13d38581bd0734cb72e1ce6d7402a1f4573851b5c5b6",
}
# From contract-2 on, a second corpus also holds what only the lenient reading (rule 7)
# reads: format characters, loose and fullwidth colons, compatibility letters, look-alikes.
LOOKALIKE_DIGESTS = {
    "contract-2": "02bb3a0561305d14726b02c73649a42d0fe981692db162a8573f80febc49acd5",
}

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


def test_every_version_has_its_own_digest() -> None:
    # Within a corpus and across both: a digest recorded twice would hide a version bump.
    recorded = [*DIGESTS.values(), *LOOKALIKE_DIGESTS.values()]
    assert len(set(recorded)) == len(recorded)
    assert len(DIGESTS) >= 2 and set(LOOKALIKE_DIGESTS) <= set(DIGESTS)


@pytest.mark.parametrize("parts", [PARTS, LOOKALIKE_PARTS])
def test_corpus_is_varied(parts: Sequence[list[str]]) -> None:
    statuses = {parse_reply(text).parse_status.value for text in corpus(parts=parts)}
    assert statuses == {"ok", "missing", "invalid", "conflicting", "bare_cr", "ambiguous"}
