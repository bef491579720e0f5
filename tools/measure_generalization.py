"""Leave-one-source-out measure of the evidence checks on mined statement fixes.

Rows: the fixes written by `tools/mine_fix_history.py` (each fix's statement before it is
a mismatch, after it faithful) and the labelled dev set (`mismatch` / `faithful`), grouped
by source (minif2f, combibench, proofnet, putnambench). A formal text that is both the
after of one fix and the before of another counts as a mismatch only.

For each held-out source, a check takes part ("kept") only if its rule was not written
reading that source and, on the *other* sources pooled, it fires on at least one mismatch
and on at most 1% of the faithful rows; the held-out
source's figures are then the rows any taking-part check fires on. "today" is the
evidence-4 checks as they are (no selection); "held out" is every check but those whose
rule was written reading that source's fix rows (`READ_ON`). All leave out the checks about
binder defaults and `dist` (`binder_default`, `function_space_distance`), which the bar
excludes.
Usage:

    python tools/measure_generalization.py [--fixes PATH] [--list CODE]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.evidence import (
    CHECKS,
    CONTRADICTORY_HYPOTHESES,
    IMPLICATION_IN_IFF,
    NARROWER_NUMBER_TYPE,
    NAT_ZERO_DENOMINATOR,
    RANGE_OFFSET,
    UNUSED_VARIABLE,
    Check,
)
from app.vocabulary import Pair

DATA = Path("/work/shared/data")
FIXES = Path("/work/wt/evidence-data/fixes.jsonl")
SOURCES = ("minif2f", "combibench", "proofnet", "putnambench")
EXCLUDED = frozenset(["binder_default", "function_space_distance"])
# The reference for "today", the evidence-4 checks: app.evidence's CHECKS (the one list
# of checks) but for those evidence-5 and evidence-6 added.
EVIDENCE_5_ADDED = (NARROWER_NUMBER_TYPE, RANGE_OFFSET, CONTRADICTORY_HYPOTHESES)
EVIDENCE_6_ADDED = (UNUSED_VARIABLE, IMPLICATION_IN_IFF, NAT_ZERO_DENOMINATOR)
EVIDENCE_4 = frozenset(
    check.code for check in CHECKS if check not in EVIDENCE_5_ADDED + EVIDENCE_6_ADDED
)
EVIDENCE_5 = EVIDENCE_4 | {check.code for check in EVIDENCE_5_ADDED}
# The sources whose mined fix rows were read while each rule was written (docs/evidence.md,
# "Fix histories, held out"): a check is held out only on the others. The evidence-4 checks
# were written on the labelled dev set before any fix history was mined.
READ_ON: dict[str, frozenset[str]] = {
    **dict.fromkeys(
        (check.code for check in EVIDENCE_5_ADDED),
        frozenset(["minif2f", "combibench", "proofnet"]),
    ),
    **dict.fromkeys((check.code for check in EVIDENCE_6_ADDED), frozenset(["putnambench"])),
}
MAX_FALSE_ALARMS = 0.01


@dataclass
class Row:
    id: str
    source: str
    mismatch: bool
    pair: Pair
    fired: set[str] = field(default_factory=set)


def dev_source(row: dict[str, str]) -> str:
    text = f"{row.get('source', '')} {row.get('repo', '')}".lower()
    for source, word in (("combibench", "combibench"), ("proofnet", "proofnet")):
        if word in text:
            return source
    return "putnambench" if "putnam" in text else "minif2f"


def load_rows(fixes: Path, dev: Path) -> list[Row]:
    by_text: dict[tuple[str, str], Row] = {}
    for line in dev.open(encoding="utf-8"):
        raw = json.loads(line)
        pair = Pair(raw.get("informal") or "", raw["formal"], raw.get("header") or "")
        _add(by_text, Row(raw["id"], dev_source(raw), raw["label"] == "mismatch", pair))
    for line in fixes.open(encoding="utf-8") if fixes.exists() else []:
        raw = json.loads(line)
        for side, mismatch in (("before", True), ("after", False)):
            pair = Pair(raw["informal"], raw[side], raw[f"header_{side}"])
            _add(by_text, Row(f"{raw['id']}:{side}", raw["source"], mismatch, pair))
    return list(by_text.values())


def _add(by_text: dict[tuple[str, str], Row], row: Row) -> None:
    key = (row.source, " ".join(row.pair.formal.split()))
    known = by_text.get(key)
    if known is None or (row.mismatch and not known.mismatch):
        by_text[key] = row


def fire(rows: list[Row], checks: tuple[Check, ...]) -> None:
    for row in rows:
        row.fired = {check.code for check in checks if check(row.pair)}


def counts(rows: list[Row], code: str) -> tuple[int, int, int, int]:
    """(mismatches fired, mismatches, faithful fired, faithful)."""
    bad = [row for row in rows if row.mismatch]
    good = [row for row in rows if not row.mismatch]
    return (
        sum(code in row.fired for row in bad),
        len(bad),
        sum(code in row.fired for row in good),
        len(good),
    )


def kept(rows: list[Row], codes: list[str]) -> list[str]:
    """The checks that, on `rows`, fire on a mismatch and on at most 1% of faithful rows."""
    chosen = []
    for code in codes:
        hit, _, alarms, good = counts(rows, code)
        if hit and alarms <= MAX_FALSE_ALARMS * good:
            chosen.append(code)
    return chosen


def caught(rows: list[Row], codes: list[str]) -> tuple[int, int, int, int]:
    chosen = set(codes)
    bad = [row for row in rows if row.mismatch]
    good = [row for row in rows if not row.mismatch]
    return (
        sum(bool(row.fired & chosen) for row in bad),
        len(bad),
        sum(bool(row.fired & chosen) for row in good),
        len(good),
    )


def unlabelled_firings(checks: tuple[Check, ...]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = defaultdict(list)
    for path in sorted((DATA / "pairs").glob("*.jsonl")):
        for line in path.open(encoding="utf-8"):
            raw = json.loads(line)
            pair = Pair(raw.get("informal") or "", raw["formal"], raw.get("header") or "")
            for check in checks:
                if check(pair):
                    found[check.code].append(raw["id"])
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fixes", type=Path, default=FIXES)
    parser.add_argument("--dev", type=Path, default=DATA / "labelled" / "dev.jsonl")
    parser.add_argument("--list", metavar="CODE", help="print the rows CODE fires on")
    args = parser.parse_args(argv)
    rows = load_rows(args.fixes, args.dev)
    checks = tuple(check for check in CHECKS if check.code not in EXCLUDED)
    fire(rows, checks)
    by_source = {source: [row for row in rows if row.source == source] for source in SOURCES}
    unlabelled = unlabelled_firings(checks)
    print_per_check(checks, by_source, unlabelled)
    print_held_out(checks, rows, by_source)
    print_removed(args.fixes, checks, rows)
    if args.list:
        for row in rows:
            if args.list in row.fired:
                print(("mismatch " if row.mismatch else "FAITHFUL ") + row.id)
        print("unlabelled:", " ".join(unlabelled.get(args.list, [])))
    return 0


def print_per_check(
    checks: tuple[Check, ...], by_source: dict[str, list[Row]], unlabelled: dict[str, list[str]]
) -> None:
    print("Per check: mismatches fired / all · faithful fired / all, per source\n")
    print("| check | " + " | ".join(SOURCES) + " | unlabelled (2,059) |")
    print("|---|" + "---:|" * (len(SOURCES) + 1))
    for check in checks:
        cells = []
        for source in SOURCES:
            hit, bad, alarms, good = counts(by_source[source], check.code)
            cells.append(f"{hit}/{bad} · {alarms}/{good}")
        print(f"| `{check.code}` | " + " | ".join(cells) + f" | {len(unlabelled[check.code])} |")


def removed_by_fix(fixes: Path, source: str, checks: tuple[Check, ...]) -> tuple[int, int]:
    """(mined fixes of `source` where a check fires before the fix and not after it, all
    mined fixes of `source`): the findings the fix itself took away."""
    removed = total = 0
    for line in fixes.open(encoding="utf-8") if fixes.exists() else []:
        raw = json.loads(line)
        if raw["source"] != source:
            continue
        total += 1
        before = Pair(raw["informal"], raw["before"], raw["header_before"])
        after = Pair(raw["informal"], raw["after"], raw["header_after"])
        removed += any(check(before) and not check(after) for check in checks)
    return removed, total


def print_removed(fixes: Path, checks: tuple[Check, ...], rows: list[Row]) -> None:
    print("\nFixes that took a finding away: mined fixes where a check fires before, not after\n")
    print(
        "| source | today (evidence-4, all) | evidence-5, all | evidence-6, all "
        "| evidence-6, held out | evidence-6, kept |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    today = tuple(check for check in checks if check.code in EVIDENCE_4)
    five = tuple(check for check in checks if check.code in EVIDENCE_5)
    for source in SOURCES:
        others = [row for row in rows if row.source != source]
        unread = held_out(source, [check.code for check in checks])
        chosen = set(kept(others, unread))
        cells = [
            removed_by_fix(fixes, source, subset)
            for subset in (
                today,
                five,
                checks,
                tuple(c for c in checks if c.code in unread),
                tuple(c for c in checks if c.code in chosen),
            )
        ]
        print(f"| {source} | " + " | ".join(f"{hit}/{total}" for hit, total in cells) + " |")


def print_held_out(
    checks: tuple[Check, ...], rows: list[Row], by_source: dict[str, list[Row]]
) -> None:
    print("\nLeave one source out: held-out mismatches caught / all · faithful fired / all\n")
    print(
        "| held out | today (evidence-4, all) | evidence-5, all | evidence-6, all "
        "| evidence-6, held out | evidence-6, kept | kept checks |"
    )
    print("|---|---:|---:|---:|---:|---:|---|")
    codes = [check.code for check in checks]
    today = [code for code in codes if code in EVIDENCE_4]
    five = [code for code in codes if code in EVIDENCE_5]
    for source in SOURCES:
        others = [row for row in rows if row.source != source]
        chosen = kept(others, held_out(source, codes))
        cells = [
            caught(by_source[source], subset)
            for subset in (today, five, codes, held_out(source, codes), chosen)
        ]
        print(
            f"| {source} | "
            + " | ".join(_cell(cell) for cell in cells)
            + " | "
            + ", ".join(f"`{code}`" for code in chosen)
            + " |"
        )


def held_out(source: str, codes: list[str]) -> list[str]:
    """The checks whose rule was written without reading `source`'s fix rows."""
    return [code for code in codes if source not in READ_ON.get(code, frozenset())]


def _cell(figures: tuple[int, int, int, int]) -> str:
    hit, bad, alarms, good = figures
    return f"{hit}/{bad} · {alarms}/{good}"


if __name__ == "__main__":
    raise SystemExit(main())
