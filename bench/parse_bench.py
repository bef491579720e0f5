"""Parser benchmark: the contract parser against a naive regex, in the same run.

    python bench/parse_bench.py [--n N] [--seed S] [--data DIR]

Builds N realistic replies (default 100,000) from a seeded random generator: clean
three-field replies, verdicts quoted inside back-translations, code blocks repeating a
field, CRLF, markdown, reasoning preambles, lowercase fields, missing / invalid /
conflicting / bare-CR replies, each 200 bytes to 20 KB, filled with informal and formal
statements from the shared pairs data. It then times `parse_reply` and the naive reading
`re.search(r"VERDICT:\\s*(\\w+)", text)` over the same replies and prints replies/s for
both, their ratio, and how many replies the naive reading gets wrong (its verdict differs
from the contract's). Replies are built and timed in chunks to bound memory.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import re
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from app.contract import parse_reply

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "pairs"
CHUNK = 10_000
MIN_BYTES, MAX_BYTES = 200, 20_000
VERDICTS = ["FAITHFUL", "MISMATCH", "UNCLEAR"]
NAIVE = re.compile(r"VERDICT:\s*(\w+)")
NAIVE_VALUES = {"faithful", "mismatch", "unclear"}
ISSUES = ["none", "None.", "- The informal statement asks for n > 0; the formal one allows 0."]

Shape = Callable[[random.Random, str, str], str]


def load_texts(data: Path) -> list[str]:
    """Informal and formal statements from every pairs file, in a fixed order."""
    texts: list[str] = []
    for path in sorted(data.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            texts.extend(row[key] for key in ("informal", "formal") if row.get(key))
    if not texts:
        raise SystemExit(f"no pairs found under {data}")
    return texts


def filler(rng: random.Random, texts: list[str], size: int) -> str:
    parts: list[str] = []
    total = 0
    while total < size:
        parts.append(rng.choice(texts))
        total += len(parts[-1]) + 1
    return " ".join(parts)[:size].strip()


def fields(body: str, verdict: str, issues: str = "none", end: str = "\n") -> str:
    lines = [f"BACK-TRANSLATION: {body}", f"ISSUES: {issues}", f"VERDICT: {verdict}", ""]
    return end.join(lines)


def clean(rng: random.Random, body: str, verdict: str) -> str:
    return fields(body, verdict, rng.choice(ISSUES))


def crlf(rng: random.Random, body: str, verdict: str) -> str:
    return fields(body.replace("\n", "\r\n"), verdict, rng.choice(ISSUES), end="\r\n")


def quoted(rng: random.Random, body: str, verdict: str) -> str:
    # A back-translation quoting a verdict string, before the real field.
    other = rng.choice([v for v in VERDICTS if v != verdict])
    return fields(f'The code prints "VERDICT: {other}". {body}', verdict)


def code_block(rng: random.Random, body: str, verdict: str) -> str:
    repeated = verdict if rng.random() < 0.7 else rng.choice(VERDICTS)
    fence = f"```\nBACK-TRANSLATION: {body}\nVERDICT: {repeated}\n```\n"
    return fence + fields(body, verdict)


def preamble(rng: random.Random, body: str, verdict: str) -> str:
    thought = f"Let me check whether VERDICT: {rng.choice(VERDICTS)} is right. {body[:400]}\n"
    return thought + fields(body, verdict)


def lowercase(rng: random.Random, body: str, verdict: str) -> str:
    return f"back-translation: {body}\nissues: none\nVerdict: {verdict.lower()}\n"


def markdown(rng: random.Random, body: str, verdict: str) -> str:
    ending = rng.choice(
        [f"**VERDICT:** {verdict}", f"VERDICT: **{verdict}**", f"### Verdict\n{verdict}"]
    )
    return f"**BACK-TRANSLATION:** {body}\n\n**ISSUES:** none\n\n{ending}\n"


def missing(rng: random.Random, body: str, verdict: str) -> str:
    return f"{body}\n\nOverall the formal statement looks {verdict.lower()} to me.\n"


def invalid(rng: random.Random, body: str, verdict: str) -> str:
    value = rng.choice([f"{verdict}.", f"MOSTLY {verdict}", "FAITHFUL | MISMATCH | UNCLEAR"])
    return fields(body, value)


def conflicting(rng: random.Random, body: str, verdict: str) -> str:
    other = rng.choice([v for v in VERDICTS if v != verdict])
    return fields(body, other) + f"Wait, I misread the hypothesis.\nVERDICT: {verdict}\n"


def bare_cr(rng: random.Random, body: str, verdict: str) -> str:
    return fields(body, verdict, end="\r")


SHAPES: dict[Shape, int] = {
    clean: 38,
    crlf: 8,
    quoted: 10,
    code_block: 8,
    preamble: 8,
    lowercase: 5,
    markdown: 7,
    missing: 4,
    invalid: 5,
    conflicting: 4,
    bare_cr: 3,
}


def build_reply(rng: random.Random, texts: list[str]) -> str:
    size = round(math.exp(rng.uniform(math.log(MIN_BYTES), math.log(MAX_BYTES))))
    shape = rng.choices(list(SHAPES), weights=list(SHAPES.values()))[0]
    verdict = rng.choices(VERDICTS, weights=[5, 4, 1])[0]
    # Field names and values take about 60 characters; the body fills the rest.
    return shape(rng, filler(rng, texts, max(size - 60, 20)), verdict)


def naive_verdict(text: str) -> str:
    match = NAIVE.search(text)
    word = match.group(1).lower() if match else ""
    return word if word in NAIVE_VALUES else "unclear"


@dataclass
class Tally:
    replies: int = 0
    utf8_bytes: int = 0
    contract_seconds: float = 0.0
    naive_seconds: float = 0.0
    differ: int = 0
    naive_false_faithful: int = 0
    statuses: Counter[str] = field(default_factory=Counter)


def measure_chunk(replies: list[str], tally: Tally) -> None:
    start = time.perf_counter()
    readings = [parse_reply(text) for text in replies]
    middle = time.perf_counter()
    naive = [naive_verdict(text) for text in replies]
    tally.contract_seconds += middle - start
    tally.naive_seconds += time.perf_counter() - middle
    tally.replies += len(replies)
    tally.utf8_bytes += sum(len(text.encode("utf-8", "surrogatepass")) for text in replies)
    for reading, guess in zip(readings, naive, strict=True):
        tally.statuses[reading.parse_status.value] += 1
        tally.differ += guess != reading.verdict.value
        tally.naive_false_faithful += guess == "faithful" and not reading.is_faithful


def run(count: int, seed: int, data: Path) -> Tally:
    texts = load_texts(data)
    rng = random.Random(seed)
    tally = Tally()
    while tally.replies < count:
        chunk = [build_reply(rng, texts) for _ in range(min(CHUNK, count - tally.replies))]
        measure_chunk(chunk, tally)
    return tally


def report(tally: Tally, seed: int) -> None:
    n, mb = tally.replies, tally.utf8_bytes / 1e6
    contract_rate, naive_rate = n / tally.contract_seconds, n / tally.naive_seconds
    print(f"replies: {n:,} (seed {seed}), {mb:.1f} MB UTF-8, {MIN_BYTES}-{MAX_BYTES} bytes each")
    for name, rate, seconds in [
        ("contract parse_reply", contract_rate, tally.contract_seconds),
        ("naive re.search     ", naive_rate, tally.naive_seconds),
    ]:
        print(f"{name}: {rate:>10,.0f} replies/s {mb / seconds:8.1f} MB/s")
    print(f"speed ratio contract/naive: {contract_rate / naive_rate:.3f}")
    print(f"naive verdict differs from the contract: {tally.differ:,} ({tally.differ / n:.1%})")
    print(f"  naive says faithful, the contract does not: {tally.naive_false_faithful:,}")
    print("contract statuses: " + ", ".join(f"{k} {v:,}" for k, v in tally.statuses.most_common()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--n", type=int, default=100_000, help="number of replies")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the pairs/ folder")
    args = parser.parse_args()
    report(run(args.n, args.seed, args.data), args.seed)


if __name__ == "__main__":
    main()
