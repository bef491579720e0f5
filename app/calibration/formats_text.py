"""The reply-format study as plain text, for the command line (pure: the study object of
app/calibration/formats.py in, text out)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.calibration.formats import ATTEMPTS, cause_text
from app.calibration.text import batch_label, rate_text

Body = Mapping[str, Any]
NOT_READ = (
    "a readable reply from a model at chance is still a model at chance: read false pass "
    "and the screen's automation, not readability"
)


def study_text(body: Body) -> str:
    lines = [
        f"reply format study: {body['pairs']} labelled pairs, each screened once per format; "
        f"each seat asked at most {body['attempts']} times a pair",
        NOT_READ,
        "",
        *_summary(body),
    ]
    for part in body["formats"]:
        lines += ["", *_format_lines(part, body["causes"])]
    lines += _agreement_lines(body["agreement"])
    return "\n".join(lines) + "\n"


def _summary(body: Body) -> list[str]:
    """One row per seat × format: the numbers to read first."""
    header = ("seat", "format", "ok@1", "ok@2", "ok@3", "false pass", "false alarm", "tok/pair")
    rows = [header]
    for part in body["formats"]:
        if part["refused"] is not None:
            rows.append(("all", part["format"], "refused", "", "", "", "", ""))
            continue
        for seat, tally in part["seats"].items():
            asked = tally["readable"]
            readable = [_counts(asked[str(n)]) if str(n) in asked else "-" for n in ATTEMPTS]
            tokens = tally["tokens_per_pair"]
            rows.append(
                (
                    seat,
                    part["format"],
                    *readable,
                    _counts(tally["false_pass"]),
                    _counts(tally["false_alarm"]),
                    "-" if tokens is None else f"{tokens:.0f}",
                )
            )
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    return [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        for row in rows
    ]


def _counts(rate: Mapping[str, Any]) -> str:
    return f"{rate['k']}/{rate['n']}"


def _format_lines(part: Body, causes: Mapping[str, str]) -> list[str]:
    name = part["format"]
    if part["refused"] is not None:
        return [f"format {name}: REFUSED by the settings, nothing screened: {part['refused']}"]
    lines = [f"format {name} ({batch_label(part['batch_id'], None)}):"]
    screen = part["screen"]
    rates = screen["rates"]
    lines.append(
        f"  screen (outcomes, policy and evidence included): labelled {screen['labelled']}; "
        f"false_pass {rate_text(rates['false_pass'])}; "
        f"false_alarm {rate_text(rates['false_alarm'])}; "
        f"automation {rate_text(rates['automation'])}"
    )
    if part["pending"]:
        lines.append(f"  PARTIAL: {part['pending']} labelled screenings not done")
    for seat, tally in part["seats"].items():
        lines += _seat_lines(seat, tally, causes)
    return lines


def _seat_lines(seat: str, tally: Body, causes: Mapping[str, str]) -> list[str]:
    tokens = tally["tokens_per_pair"]
    spent = "" if tokens is None else f", {tokens:.0f} tokens a pair"
    lines = [
        f"  {seat} ({', '.join(tally['models'])}): {tally['pairs']} pairs, "
        f"{tally['calls']} calls ({tally['prompt_tokens']} prompt + "
        f"{tally['completion_tokens']} completion tokens{spent})",
    ]
    for n, rate in tally["readable"].items():
        lines.append(f"    readable by attempt {n}  {rate_text(rate)}")
    failures = ", ".join(
        f"{cause_text(status, causes)} {count}" for status, count in tally["failures"].items()
    )
    lines.append(f"    failures (replies)    {failures or 'none'}")
    if tally["preamble"] is not None:
        lines.append(
            f"    preamble              {rate_text(tally['preamble'])}  "
            "(replies with text before their first field / replies with a field)"
        )
    verdicts = ", ".join(f"{verdict} {count}" for verdict, count in tally["verdicts"].items())
    lines += [
        f"    own verdicts          {verdicts or 'none read'}",
        f"    false_pass            {rate_text(tally['false_pass'])}  "
        "(said FAITHFUL / mismatch pairs)",
        f"    false_alarm           {rate_text(tally['false_alarm'])}  "
        "(no FAITHFUL read / faithful pairs)",
    ]
    return lines


def _agreement_lines(found: Mapping[str, list[Body]]) -> list[str]:
    if not any(found.values()):
        return []
    lines = ["", "agreement between formats (same own verdict / pairs read under both):"]
    for seat, pairs in found.items():
        for pair in pairs:
            lines.append(f"  {seat}  {pair['a']} vs {pair['b']}  {rate_text(pair)}")
    return lines
