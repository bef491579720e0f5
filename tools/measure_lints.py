"""Measure every evidence check on the labelled dev set and on the unlabelled pairs.

Prints a markdown table: how often each check fires, how many firings are on `mismatch`
rows (true positives against the *pair* label), precision, recall over mismatch rows,
how many firings are on rows whose `why` names the check's own defect class, and the
firing rate on all unlabelled pairs. Usage:

    python tools/measure_lints.py [DEV_JSONL] [--pairs DIR] [--list]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from app.evidence import CHECKS, EVIDENCE_VERSION, Check
from app.vocabulary import Pair

DATA = Path("/work/shared/data")
# What a `why` says when it describes each check's defect class (read off dev.jsonl).
WHY_NAMES_CLASS: dict[str, str] = {
    "contract_text_in_input": r"VERDICT:|BACK-TRANSLATION:|ISSUES:",
    "truncating_division": r"ℕ division|truncating x / y|Numerals default to ℕ",
    # Big-operator rows also say "auto-bound"; they are `big_operator_scope`'s class.
    "auto_bound_variable": r"^(?!.*big-operator).*(auto-bound|fresh identifier)",
    "big_operator_scope": r"big-operator body",
    "counted_set_underdetermined": r"S need not|S is unconstrained",
    "shadowed_binder": r"shadows",
    "binder_default": r"optParam|default value",
    "function_space_distance": r"sup metric|Euclidean distance|EuclideanSpace",
    "measure_dimension": r"volume|Hausdorff|μH",
    "infinite_cardinality": r"ncard|Nat\.card|infinite set",
    "junk_value": r"junk value|0/0|log 0",
    "truncating_subtraction": r"truncated subtraction|ℕ subtraction",
    "narrower_number_type": r"typed ℕ.*(real|integer)|over (positive )?reals",
    "range_offset": r"Finset\.range|off by one|last term",
    "contradictory_hypotheses": r"vacuous|contradictory",
    "unused_variable": r"unused|never used|not used|dropped",
    # Big-operator rows also say "parses as"; they are `big_operator_scope`'s class.
    "implication_in_iff": r"↔[^.]*→|→[^.]*↔",
    "nat_zero_denominator": r"0/0|/ 0\b|division by (zero|0)",
}


@dataclass
class Tally:
    fired: list[str] = field(default_factory=list)
    true_positives: int = 0
    class_fired: int = 0  # mismatch rows whose `why` names the class, fired on
    class_total: int = 0  # mismatch rows whose `why` names the class


def read_rows(paths: Iterable[Path]) -> list[dict[str, str | None]]:
    return [json.loads(line) for path in paths for line in path.open(encoding="utf-8")]


def to_pair(row: dict[str, str | None]) -> Pair:
    # Three ProofNet rows have `informal: null`; a check must still see a string.
    return Pair(row.get("informal") or "", row.get("formal") or "", row.get("header") or "")


def tally_dev(check: Check, rows: list[dict[str, str | None]]) -> Tally:
    tally, pattern = Tally(), re.compile(WHY_NAMES_CLASS.get(check.code, r"(?!)"))
    for row in rows:
        fired = bool(check(to_pair(row)))
        mismatch = row["label"] == "mismatch"
        named = mismatch and bool(pattern.search(str(row.get("why") or "")))
        tally.class_total += named
        if fired:
            tally.fired.append(str(row["id"]))
            tally.true_positives += mismatch
            tally.class_fired += named
    return tally


def fired_ids(check: Check, rows: list[dict[str, str | None]]) -> list[str]:
    return [str(row["id"]) for row in rows if check(to_pair(row))]


def ratio(part: int, whole: int) -> str:
    return f"{part / whole:.2f}" if whole else "n/a"


def firing_rate(part: int, whole: int) -> str:
    percent = f"{100 * part / whole:.1f}%" if whole else "n/a"
    return f"{part} / {whole} ({percent})"


def table_row(check: Check, tally: Tally, mismatches: int, unlabelled: tuple[int, int]) -> str:
    fired, hits = len(tally.fired), tally.true_positives
    rate = firing_rate(*unlabelled)
    cells = [f"`{check.code}`", check.severity.value, str(fired), str(hits)]
    named = f"{tally.class_fired} / {tally.class_total}"
    cells += [ratio(hits, fired), ratio(hits, mismatches), named, rate]
    return "| " + " | ".join(cells) + " |"


HEADER = (
    "| check | severity | fired on (dev) | on mismatch rows (TP) | precision | recall "
    "| rows whose `why` names the class: fired / all | fired on unlabelled pairs |\n"
    "|---|---|---:|---:|---:|---:|---:|---:|"
)


Details = list[tuple[str, list[str], list[str]]]  # check code, dev ids, unlabelled ids


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    dev = read_rows([args.dev])
    pairs = read_rows(sorted(args.pairs.glob("*.jsonl")))
    mismatches = sum(row["label"] == "mismatch" for row in dev)
    print(f"{EVIDENCE_VERSION}: {len(dev)} labelled pairs ({mismatches} mismatch), ", end="")
    print(f"{len(pairs)} unlabelled pairs\n\n{HEADER}")
    details: Details = []
    for check in CHECKS:
        tally, unlabelled = tally_dev(check, dev), fired_ids(check, pairs)
        print(table_row(check, tally, mismatches, (len(unlabelled), len(pairs))))
        details.append((check.code, tally.fired, unlabelled))
    print(any_check_row(details, dev, mismatches, len(pairs)))
    if args.list:
        print_details(details)
    return 0


def any_check_row(
    details: Details, dev: list[dict[str, str | None]], mismatches: int, unlabelled_total: int
) -> str:
    fired = {row_id for _, dev_ids, _ in details for row_id in dev_ids}
    hits = sum(row["label"] == "mismatch" for row in dev if row["id"] in fired)
    unlabelled = len({row_id for _, _, ids in details for row_id in ids})
    rate = firing_rate(unlabelled, unlabelled_total)
    cells = ["any check", "", str(len(fired)), str(hits), ratio(hits, len(fired))]
    return "| " + " | ".join([*cells, ratio(hits, mismatches), "", rate]) + " |"


def print_details(details: Details) -> None:
    for code, dev_ids, unlabelled_ids in details:
        print(f"\n{code}\n  dev: {', '.join(dev_ids) or '-'}")
        print(f"  unlabelled: {', '.join(unlabelled_ids) or '-'}")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dev", nargs="?", type=Path, default=DATA / "labelled" / "dev.jsonl")
    parser.add_argument("--pairs", type=Path, default=DATA / "pairs")
    parser.add_argument("--list", action="store_true", help="also list the ids fired on")
    return parser.parse_args(argv)


if __name__ == "__main__":
    sys.exit(main())
