"""A re-scoring diff as plain text for the terminal. Pure."""

from __future__ import annotations

from collections.abc import Mapping

from app.calibration.tally import Matrix, rate_json
from app.calibration.text import rate_text
from app.rescore.diff import Diff


def diff_text(diff: Diff, rescore_id: str | None) -> str:
    versions = (
        f"parser {diff.parser_version}, policy {diff.policy_version}, "
        f"evidence {diff.evidence_version}"
    )
    if diff.readers:
        read = ", ".join(f"{reader} {n}" for reader, n in sorted(diff.readers.items()))
        versions += f" (replies read by {read})"
    lines = [
        f"Replayed {diff.considered} screenings with {versions}.",
        f"  unchanged {diff.unchanged} (of which {diff.restamped} under new versions), "
        f"changed {diff.changed}",
    ]
    if diff.skipped:
        skipped = ", ".join(f"{cause} {n}" for cause, n in sorted(diff.skipped.items()))
        lines.append(f"  skipped (nothing to replay): {skipped}")
    if diff.incomplete:
        lines.append(
            f"  {diff.incomplete} replays needed a call that was never made and were decided "
            "without it (never a pass)"
        )
    lines += _transitions(diff)
    lines += _section("Reasons added", diff.reasons_added)
    lines += _section("Reasons removed", diff.reasons_removed)
    lines += _section("Readings (status/verdict, from -> to)", diff.readings)
    lines += _calibration(diff.calibration_before, diff.calibration_after)
    if diff.unversioned:
        lines += [
            "",
            f"WARNING: {diff.unversioned} screenings change with no new version: the "
            "parser, policy or evidence code changed without its version. They are not "
            "applied; "
            "bump PARSER_VERSION, POLICY_VERSION or EVIDENCE_VERSION.",
        ]
    lines.append("")
    if rescore_id is None:
        lines.append("Dry run: nothing was written (--apply records the changes).")
    else:
        lines.append(
            f"Applied as rescore {rescore_id}: {diff.applied} outcomes moved, "
            f"{diff.restamps_applied} kept under the new versions."
        )
        if diff.raced:
            lines.append(
                f"{diff.raced} screenings changed meanwhile and were left: run again for them."
            )
    return "\n".join(lines) + "\n"


def _transitions(diff: Diff) -> list[str]:
    """Each move with its count, and under it the reasons it added (+) and removed (-)."""
    if not diff.transitions:
        return []
    lines = ["", "Outcomes (from -> to), with the reasons added (+) and removed (-)"]
    width = max(len(move) for move in diff.transitions)
    for move, n in _ordered(diff.transitions):
        lines.append(f"  {move.ljust(width)}  {n}")
        lines += [f"      {reason}  {k}" for reason, k in _ordered(diff.by_transition[move])]
    return lines


def _calibration(before: Matrix, after: Matrix) -> list[str]:
    """False-pass and false-alarm on the labelled screenings, now -> as re-scored."""
    if not before.labelled:
        return []
    now, then = before.rates(), after.rates()
    lines = ["", f"On the {before.labelled} labelled screenings (now -> re-scored)"]
    for name in ("false_pass", "false_alarm"):
        moved = f"{rate_text(rate_json(now[name]))} -> {rate_text(rate_json(then[name]))}"
        lines.append(f"  {name.ljust(11)}  {moved}")
    return lines


def _section(title: str, counts: Mapping[str, int]) -> list[str]:
    if not counts:
        return []
    width = max(len(key) for key in counts)
    return ["", title] + [f"  {key.ljust(width)}  {n}" for key, n in _ordered(counts)]


def _ordered(counts: Mapping[str, int]) -> list[tuple[str, int]]:
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))
