"""Rule 7: PARSER_VERSION changes whenever any reply could be read differently.

A fixed, seeded corpus of awkward replies is read and the readings hashed. A change in how
any of them is read changes the digest, and this test then fails until PARSER_VERSION is
bumped and the new digest recorded under it. Never edit a recorded digest: add a version.
"""

from __future__ import annotations

import hashlib
import json
import random

from app.contract import PARSER_VERSION, parse_reply

DIGESTS = {
    "contract-1": "501b56b756f814cceab020d4546ec2a1cb0c7a0fe929d00eb83f690ebad451d7",
}

LEADS = ["", "", " ", "\t", "\u3000", "\x85", "\x0b", "**", "> ", "Therefore "]
NAMES = ["VERDICT:", "verdict:", "Verdict:", "BACK-TRANSLATION:", "issues:", "VERD\u0131CT:", ""]
VALUES = [
    " FAITHFUL", " mismatch", "Unclear ", " maybe", "", " **FAITHFUL**", " FAITHFUL.",
    " For all n : \u2115, n + 0 = n.", ' It prints "VERDICT: FAITHFUL".', "```",
]  # fmt: skip
ENDS = ["\n"] * 8 + ["\r\n"] * 3 + ["\r", "\u2028", "\x85"]


def corpus(count: int = 4000, seed: int = 1) -> list[str]:
    rng = random.Random(seed)
    return ["".join(line(rng) for _ in range(rng.randrange(1, 8))) for _ in range(count)]


def line(rng: random.Random) -> str:
    return "".join(rng.choice(part) for part in (LEADS, NAMES, VALUES, ENDS))


def readings_digest() -> str:
    rows = [
        [r.parse_status.value, r.verdict.value, r.back_translation, r.issues]
        for r in map(parse_reply, corpus())
    ]
    return hashlib.sha256(json.dumps(rows, ensure_ascii=True).encode()).hexdigest()


def test_readings_match_the_digest_recorded_for_this_parser_version() -> None:
    assert readings_digest() == DIGESTS.get(PARSER_VERSION), (
        "the parser reads some reply differently: bump PARSER_VERSION and record the "
        "new digest under it"
    )


def test_every_version_has_its_own_digest() -> None:
    assert len(set(DIGESTS.values())) == len(DIGESTS)


def test_corpus_is_varied() -> None:
    statuses = {parse_reply(text).parse_status.value for text in corpus()}
    assert statuses == {"ok", "missing", "invalid", "conflicting", "bare_cr"}
