"""The figures bench/scale_bench.py prints: one Markdown report of a run, against the
goals of issue 33 (item 7)."""

from __future__ import annotations

import argparse
import hashlib
import math
import os
import platform
import statistics
from collections import Counter
from typing import Any

from app.prompts import judge_messages, translator_messages
from app.vocabulary import Pair


def report(
    run: dict[str, Any],
    args: argparse.Namespace,
    batch_pairs: list[dict[str, Any]],
    single_pairs: list[dict[str, Any]],
) -> None:
    print(f"\n## Scale run, started {run['started_at']}\n")
    print(f"machine: {platform.node()}, {os.cpu_count()} CPUs, {platform.platform()}")
    print(f"command: python bench/scale_bench.py {command_line(args)}")
    print(
        f"wall {run['wall']:.0f} s; batch ingest {run['ingest'][0]:.1f} s and "
        f"{run['ingest'][1]:.1f} s; batch B posted at {run['b_posted']:.0f} s"
    )
    work(run, batch_pairs, single_pairs)
    provider(run, args)
    singles(run, args)
    shares(run)
    metrics(run)
    cpu(run)


def command_line(args: argparse.Namespace) -> str:
    keys = (
        "pairs",
        "replicas",
        "workers",
        "rpm",
        "tpm",
        "provider_concurrency",
        "max_in_flight",
        "latency_ms",
        "single_every",
        "llm_concurrency",
        "capacity",
        "seed_reviews",
    )
    return " ".join(f"--{k.replace('_', '-')} {getattr(args, k)}" for k in keys)


def prompt_digests(pairs: list[dict[str, Any]]) -> dict[str, Counter[str]]:
    """Each pair's translator and judge prompt text, hashed as the provider hashes it."""
    digests: dict[str, Counter[str]] = {"translator": Counter(), "judge": Counter()}
    for row in pairs:
        pair = Pair(row["informal"], row["formal"], row["header"])
        for role, messages in (
            ("translator", translator_messages(pair)),
            ("judge", judge_messages(pair)),
        ):
            text = "\n".join(m["content"] for m in messages if isinstance(m["content"], str))
            digests[role][hashlib.sha256(text.encode()).hexdigest()] += 1
    return digests


def work(run: dict[str, Any], batch_pairs: list[dict[str, Any]], singles: list[Any]) -> None:
    ledger, stats = run["ledger"], run["provider"]["models"]
    submitted = len(batch_pairs) + len(run["singles"])
    print("\n### Lost and doubled\n")
    print(
        f"screenings stored {ledger.screenings} (submitted: {len(batch_pairs)} batch items + "
        f"{len(run['singles'])} singles = {submitted}); by status {ledger.by_status}; "
        f"by outcome {ledger.by_outcome}"
    )
    print(f"lost: {ledger.not_done} not done; {ledger.missing_role} role reviews missing")
    print(
        f"doubled: {ledger.doubled_role} screenings with a role reviewed twice; "
        f"{ledger.attempts_over_one} reviews past attempt 1"
    )
    print(
        f"reviews by role {ledger.reviews_by_role}, by HTTP status {ledger.reviews_by_http_status}"
    )
    for role, model in (("translator", "translator-model"), ("judge", "judge-model")):
        answered = Counter(stats.get(model, {}).get("prompts", {}))
        stored = ledger.prompts[role]
        extra, missing = answered - stored, stored - answered
        print(
            f"{role}: provider answered {sum(answered.values())}, service stored "
            f"{sum(stored.values())}; prompts answered but not stored {sum(extra.values())}, "
            f"stored but not answered {sum(missing.values())}"
        )
    expected = prompt_digests(batch_pairs)
    for role in expected:
        stored = ledger.prompts[role]
        short = expected[role] - stored
        print(f"{role}: batch prompts submitted but not stored as often: {sum(short.values())}")


def mean_latency(limits: dict[str, Any]) -> float:
    return float(limits["latency_ms"]) / 1000 * math.exp(float(limits["sigma"]) ** 2 / 2)


def provider(run: dict[str, Any], args: argparse.Namespace) -> None:
    limits = run["provider"]["limits"]
    print("\n### At the provider (per model)\n")
    print(
        "| model | answered | 429s by limit | seconds answering | seconds a limit was "
        "exceeded | share | max in flight | calls/s | limit calls/s (binding) | "
        "achieved / limit | steady calls/s (middle 80%) | steady / limit |"
    )
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for model, s in run["provider"]["models"].items():
        span = s["last"] - s["first"]
        seconds = int(s["last"]) - int(s["first"]) + 1
        tokens_per_call = s["tokens"] / max(1, s["answered"])
        bounds = {"rpm": limits["rpm"] / 60}
        if limits["tpm"]:
            bounds["tpm"] = limits["tpm"] / 60 / tokens_per_call
        if limits["concurrency"]:
            bounds["concurrency"] = limits["concurrency"] / mean_latency(limits)
        binding = min(bounds, key=lambda k: bounds[k])
        rate = s["answered"] / span if span > 0 else 0.0
        steady = steady_rate(s["per_second"])
        exceeded = len(s["exceeded_seconds"])
        print(
            f"| {model} | {s['answered']} | {s['refused'] or 0} | {seconds} | {exceeded} "
            f"{s['exceeded_seconds_by_limit'] or ''} | {exceeded / seconds:.2%} | "
            f"{s['max_in_flight']} | {rate:.2f} | {bounds[binding]:.2f} ({binding}) | "
            f"{rate / bounds[binding]:.3f} | {steady:.2f} | {steady / bounds[binding]:.3f} |"
        )
        print(
            f"  tokens/call {tokens_per_call:.0f}; every bound: "
            + ", ".join(f"{k} {v:.2f}/s" for k, v in bounds.items())
        )


def steady_rate(per_second: dict[str, int]) -> float:
    """Calls a second over the middle 80% of the seconds the provider answered calls in."""
    seconds = sorted(int(k) for k in per_second)
    if not seconds:
        return 0.0
    first, last = seconds[0], seconds[-1]
    cut = (last - first) // 10
    lo, hi = first + cut, last - cut
    calls = sum(n for k, n in per_second.items() if lo <= int(k) <= hi)
    return calls / max(1, hi - lo + 1)


def percentile(values: list[float], q: float) -> float:
    return values[min(len(values) - 1, int(q * len(values)))] if values else float("nan")


def singles(run: dict[str, Any], args: argparse.Namespace) -> None:
    values = run["singles"]
    unit = mean_latency(run["provider"]["limits"])
    print("\n### Singles while the batches run\n")
    print(
        f"{len(values)} singles (one every {args.single_every} s; {run['singles_refused']} "
        f"refused at intake), created -> finished: p50 {percentile(values, 0.5):.2f} s, "
        f"p95 {percentile(values, 0.95):.2f} s, max {max(values, default=0):.2f} s; "
        f"provider mean latency {unit:.2f} s, goal p95 <= {2 * unit:.2f} s"
    )
    parts = run.get("single_parts")
    if parts:
        first, slower, calls = parts["to_first_call"], parts["slower_call"], parts["calls"]
        print(
            f"where it went: created -> first call began (the claim) p50 "
            f"{percentile(first, 0.5):.3f} s, p95 {percentile(first, 0.95):.3f} s; the "
            f"slower of its calls (budget wait + provider) p50 {percentile(slower, 0.5):.2f} s, "
            f"p95 {percentile(slower, 0.95):.2f} s; its calls' mean "
            f"{statistics.fmean(calls) if calls else float('nan'):.3f} s against the provider's "
            f"{unit:.3f} s (the difference: the budget's wait)"
        )


def shares(run: dict[str, Any]) -> None:
    samples, posted = run["samples"], run["b_posted"]
    print("\n### Batch work per key (per interval of about a minute)\n")
    print("| from s | to s | A done | B done | B's share |")
    print("|---:|---:|---:|---:|---:|")
    previous = samples[0]
    both: list[float] = []
    for sample in samples[1:]:
        if sample[0] - previous[0] < 55 and sample is not samples[-1]:
            continue
        da, db = sample[1] - previous[1], sample[2] - previous[2]
        share = db / (da + db) if da + db else float("nan")
        print(f"| {previous[0]:.0f} | {sample[0]:.0f} | {da} | {db} | {share:.2f} |")
        a_open = sample[1] < samples[-1][1]
        b_open = sample[2] < samples[-1][2]
        if previous[0] >= posted and a_open and b_open and da + db:
            both.append(share)
        previous = sample
    print(
        f"\ndatabase connections (sampled): at most {max(s[3] for s in samples)} open, "
        f"{max(s[4] for s in samples)} active"
    )
    if both:
        print(
            f"\nB's share while both batches were open: min {min(both):.2f}, "
            f"max {max(both):.2f}, mean {statistics.mean(both):.2f}"
        )


def metrics(run: dict[str, Any]) -> None:
    print("\n### GET /metrics scrape time (median of 5)\n")
    empty = run["metrics_empty"][0]
    print(f"empty database: {empty * 1000:.1f} ms {fmt(run['metrics_empty'][1])}")
    count, (after, times) = run["metrics_after_run"]
    print(
        f"after the run, {count:,} reviews: {after * 1000:.1f} ms {fmt(times)} "
        f"({after / empty:.2f}x empty)"
    )
    if "metrics_seeded" in run:
        seeded, (first, _), (steady, times) = run["metrics_seeded"]
        print(
            f"seeded to {seeded:,} reviews: first scrape (folds the seeded rows' counts) "
            f"{first * 1000:.0f} ms; then {steady * 1000:.1f} ms {fmt(times)} "
            f"({steady / empty:.2f}x empty)"
        )


def fmt(times: list[float]) -> str:
    return "[" + ", ".join(f"{t * 1000:.1f}" for t in times) + "]"


def cpu(run: dict[str, Any]) -> None:
    wall = run["wall"]
    print("\n### CPU\n")
    print(
        f"service processes {run['service_cpu']:.0f} CPU s over {wall:.0f} s "
        f"({run['service_cpu'] / wall:.2f} cores), provider {run['provider_cpu']:.0f} CPU s "
        f"({run['provider_cpu'] / wall:.2f} cores); machine busy {run['machine_busy']:.0%} "
        f"of its {os.cpu_count()} CPUs; load average before {run['load'][0][0]:.1f}, "
        f"after {run['load'][1][0]:.1f}"
    )
