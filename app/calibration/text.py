"""The calibration and the comparison as plain text, for the command line (pure)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.vocabulary import LABELS, OUTCOMES, SINGLE_JUDGE

RATE_NAMES = (
    "false_pass",
    "false_alarm",
    "false_flag",
    "flag_precision",
    "pass_precision",
    "automation",
)
RATE_MEANINGS = {
    "false_pass": "mismatch passed / mismatch",
    "false_alarm": "faithful not passed / faithful",
    "false_flag": "faithful flagged / faithful",
    "flag_precision": "mismatch among flagged",
    "pass_precision": "faithful among passed",
    "automation": "passed or flagged / labelled",
}
SLICE_RATES = ("false_pass", "false_alarm")


def rate_text(rate: Mapping[str, Any]) -> str:
    """`3/6 = 50.0% [18.8%, 81.2%]`, or `0/0` when there is no case."""
    counts = f"{rate['k']}/{rate['n']}"
    if rate["rate"] is None:
        return f"{counts} (no cases)"
    return f"{counts} = {rate['rate']:.1%} [{rate['low']:.1%}, {rate['high']:.1%}]"


def batch_label(batch_id: str, name: str | None) -> str:
    """`"baseline" (batch <id>)` for a named batch, else `batch <id>`: the name is what the
    user chose to remember the run by, the id what tells two runs of one name apart."""
    return f'"{name}" (batch {batch_id})' if name else f"batch {batch_id}"


def calibration_text(body: Mapping[str, Any], name: str | None = None) -> str:
    lines = [f"calibration of {batch_label(body['batch_id'], name)}"]
    lines.append(
        f"labelled and done: {body['labelled']}, pending: {body['pending']}, "
        f"unlabelled: {body['unlabelled']}"
    )
    if body["partial"]:
        lines.append("PARTIAL: some labelled screenings are not done yet; rates will move")
    lines += non_evidential_lines(body.get("non_evidential") or {})
    lines += ["", *_matrix_lines(body["matrix"]), "", "rates (95% Wilson interval):"]
    width = max(map(len, RATE_NAMES))
    for name in RATE_NAMES:
        meaning = RATE_MEANINGS[name]
        lines.append(f"  {name:<{width}}  {rate_text(body['rates'][name])}  ({meaning})")
    lines += _slice_lines("by tag", body["by_tag"])
    lines += _slice_lines("by kind", body["by_kind"])
    lines += _lean_lines(body.get("by_lean_status") or {})
    lines += _counts_lines("needs_review reasons", body["needs_review_reasons"])
    lines += _config_lines(body["configs"])
    lines += _cost_lines(body["cost"])
    lines += _judge_lines(body.get("by_judge") or {})
    return "\n".join(lines) + "\n"


def non_evidential_lines(seats: Mapping[str, int]) -> list[str]:
    """One line when a model was marked not evidential: its verdicts are not what the
    rates measure, and a pass could not come from it."""
    if not seats:
        return []
    named = ", ".join(f"{seat} in {count}" for seat, count in seats.items())
    return [
        f"NOT EVIDENTIAL: models marked not evidential (FAITHSCREEN_*_EVIDENTIAL=false), "
        f"screenings: {named}; their FAITHFUL never passes a pair, so read false pass "
        "and automation, not their verdicts"
    ]


def _judge_lines(by_judge: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Per panel judge, its own verdicts and cost (not shown for the single judge alone,
    whose verdicts the rates above already are)."""
    if set(by_judge) <= {SINGLE_JUDGE}:
        return []
    lines = ["", "by judge (its own verdict; 95% Wilson interval):"]
    for name, judge in by_judge.items():
        tokens = judge["tokens_per_pair"]
        lines += [
            f"  {name} ({', '.join(judge['models'])}): {judge['pairs']} pairs, "
            f"{judge['calls_per_pair']:.2f} calls and {tokens:.0f} tokens a pair",
            f"    catches     {rate_text(judge['catches'])}  (said MISMATCH / mismatch)",
            f"    faithful    {rate_text(judge['faithful'])}  (said FAITHFUL / faithful)",
            f"    unreadable  {rate_text(judge['unreadable'])}  (no ok reply / pairs)",
        ]
    return lines


def _matrix_lines(matrix: Mapping[str, Mapping[str, int]]) -> list[str]:
    width = max(map(len, OUTCOMES))
    header = "label \\ outcome".ljust(16) + "".join(f"{o:>{width + 2}}" for o in OUTCOMES)
    rows = [
        label.ljust(16) + "".join(f"{matrix[label][o]:>{width + 2}}" for o in OUTCOMES)
        for label in LABELS
    ]
    return [header, *rows]


def _slice_lines(title: str, slices: Mapping[str, Mapping[str, Any]]) -> list[str]:
    shown = {name: part for name, part in slices.items() if part["labelled"]}
    if not shown:
        return []
    width = max(map(len, shown))
    lines = ["", f"{title}:"]
    for name, part in shown.items():
        rates = "  ".join(f"{r} {rate_text(part['rates'][r])}" for r in SLICE_RATES)
        lines.append(f"  {name:<{width}}  labelled {part['labelled']}  {rates}")
    return lines


def _lean_lines(by_status: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """By lean_status, when there are two statuses or more (one would only repeat the
    rates above)."""
    return _slice_lines("by Lean status", by_status) if len(by_status) > 1 else []


def _counts_lines(title: str, counts: Mapping[str, int]) -> list[str]:
    if not counts:
        return []
    return ["", f"{title}:", *(f"  {code}: {count}" for code, count in counts.items())]


def _config_lines(configs: list[Mapping[str, Any]]) -> list[str]:
    lines = ["", "configurations:"]
    for config in configs:
        fields = ", ".join(f"{k} {v}" for k, v in config.items() if k != "count")
        lines.append(f"  {config['count']} screenings: {fields}")
    return lines if configs else []


def _cost_lines(cost: Mapping[str, Any]) -> list[str]:
    if not cost["screenings"]:
        return []
    latency = ", ".join(
        f"{q} {cost[f'latency_{q}_ms']:.0f} ms"
        for q in ("p50", "p95")
        if cost[f"latency_{q}_ms"] is not None
    )
    return [
        "",
        f"cost per screening: {cost['calls_per_screening']:.2f} calls, "
        f"{cost['prompt_tokens_per_screening']:.0f} prompt + "
        f"{cost['completion_tokens_per_screening']:.0f} completion tokens"
        + (f"; call latency {latency}" if latency else ""),
    ]


def comparison_text(body: Mapping[str, Any], names: Mapping[str, str] | None = None) -> str:
    """`names`: batch id -> name, for the batches that have one."""
    a, b = (batch_label(body[side], (names or {}).get(body[side])) for side in ("a", "b"))
    lines = [
        f"A: {a} vs B: {b}",
        f"pairs labelled alike and done in both: {body['common']} "
        f"(labelled differently, left out: {body['label_conflicts']})",
    ]
    versions = body.get("prompt_versions") or {}
    if versions:
        prompts = [", ".join(versions.get(body[side]) or ["-"]) for side in ("a", "b")]
        lines.append(f"prompts: A {prompts[0]}; B {prompts[1]}")
    for name in ("false_pass", "false_alarm"):
        pair = body["rates"][name]
        difference = pair["difference"]
        moved = "n/a" if difference is None else f"{difference:+.1%}"
        discordant = pair["discordant"]
        lines += [
            "",
            f"{name} ({RATE_MEANINGS[name]}):",
            f"  A  {rate_text(pair['a'])}",
            f"  B  {rate_text(pair['b'])}",
            f"  B - A {moved}; wrong under A only {discordant['a_only']}, under B only "
            f"{discordant['b_only']}; exact McNemar p = {pair['p_value']:.4g}",
        ]
    return "\n".join(lines) + "\n"
