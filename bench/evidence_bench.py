"""Evidence benchmark: every check on 64 KiB statements of hostile shapes, against a plain
statement of the same size, in the same run.

    python bench/evidence_bench.py [--bytes 65536] [--repeat 5] [--shape NAME ...]
                                   [--field formal|header|informal] [--scaling]

Each shape is a formal statement of exactly --bytes UTF-8 bytes (deep nesting of every
bracket, long binder lists, thousands of big operators, `∃!`, lines with no space, many
declarations, comments and strings left open, `/` and `%` everywhere, ...); `plain` is an
ordinary theorem with many hypotheses, the reference. The statement goes into --field of
a pair whose other fields are short. For each shape it prints, in milliseconds (the best
of --repeat runs, since a shared machine only ever slows a run down): reading the Lean
text into tokens (`tokens`: comments, strings and tactic blocks removed, bracket groups
matched), each check on those tokens, `total` (run_checks from cold caches, as a new
pair meets it), and total / plain's total. A check that raises is printed as `raised`.

--scaling also runs every shape at half the size and prints total(full) / total(half):
about 2 where the work grows linearly, 4 where it grows with the square.

--pairs DIR times the real pairs instead (every `*.jsonl` there, the 2,059 shared pairs by
default): per pair, reading its formal text and header into tokens (`parse`) and all checks
from cold caches (`checks`, parse included), best of --repeat; it prints mean, p95 and max
of each in ms, and checks / parse, the ratio of their totals.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from app.evidence import CHECKS, run_checks
from app.evidence.declaration import main_theorem
from app.evidence.free_variables import _bound_in_header
from app.evidence.lean_source import lean_tokens
from app.vocabulary import Pair

Shape = Callable[[int], str]
Cell = tuple[float, str | None]  # ms, or the error raised


def fill(head: str, unit: Callable[[int], str], tail: str, size: int) -> str:
    """`head`, then `unit(0)`, `unit(1)`, ... while it fits, then `tail`: `size` bytes,
    padded with spaces to exactly that size."""
    parts, used, index = [head], len(head.encode()) + len(tail.encode()), 0
    while True:
        piece = unit(index)
        if not piece or used + len(piece.encode()) > size:
            break
        parts.append(piece)
        used += len(piece.encode())
        index += 1
    return "".join(parts) + tail + " " * (size - used)


def nested(opener: str, closer: str, inner: str = "1 = 1") -> Shape:
    def shape(size: int) -> str:
        head = "theorem t : "
        depth = (size - len(head.encode()) - len(inner.encode())) // len((opener + closer).encode())
        return fill(head + opener * depth + inner + closer * depth, lambda i: "", "", size)

    return shape


def repeated(head: str, unit: Callable[[int], str], tail: str = "") -> Shape:
    return lambda size: fill(head, unit, tail, size)


def plain(size: int) -> str:
    hypotheses = [
        "(h{i} : x + 2 * y = {i})",
        "(h{i} : ∀ n : ℕ, 0 < n → f n ≤ f (n + 1))",
        "(h{i} : Real.sqrt (x ^ 2 + {i}) = y + 1)",
        "(h{i} : ∑ k ∈ Finset.range {i}, (k : ℝ) = x)",
        "(h{i} : ∃ z : ℝ, z * x = y ∧ z ≠ 0)",
    ]
    head = "theorem plain (x y : ℝ) (f : ℕ → ℝ)\n"
    return fill(
        head,
        lambda i: "    " + hypotheses[i % len(hypotheses)].format(i=i) + "\n",
        "    : x = 6 := by sorry",
        size,
    )


def long_number(size: int) -> str:
    digits = (size - 40) // 2
    return fill(f"theorem t : x ^ ({'7' * digits} / {'3' * digits}) = 1", lambda i: "", "", size)


SHAPES: dict[str, Shape] = {
    "plain": plain,
    "nest ( )": nested("(", ")"),
    "nest [ ]": nested("[", "]"),
    "nest { }": nested("{", "}"),
    "nest ⟨ ⟩": nested("⟨", "⟩"),
    "nest ⦃ ⦄": nested("⦃", "⦄"),
    "nest ( unclosed": nested("(", ""),
    "closers only": nested("", ")"),
    "nest ( then =": repeated("theorem t : ", lambda i: "(", " = 1"),
    "binder list": repeated("theorem t (", lambda i: f"a{i} ", ": ℕ) : a0 = 1"),
    "binder groups": repeated("theorem t ", lambda i: f"(a{i} : ℕ) ", ": a0 = 1"),
    "set binders": repeated("theorem t ", lambda i: f"(S{i} : Finset ℕ) ", ": S0.card = 1"),
    "set measures": repeated(
        "theorem t (S : Finset ℕ) (h : ∀ x ∈ S, x < 9) : S.card = ", lambda i: "S.card + "
    ),
    "∀ binders": repeated("theorem t : ∀ ", lambda i: f"x{i} ", ", x0 = 1"),
    "∀ ∀ ∀": repeated("theorem t : ", lambda i: "∀ "),
    "∃! x,": repeated("theorem t : ", lambda i: f"∃! x{i}, ", "x0 = 1"),
    "∑ k ∈ s,": repeated("theorem t : ", lambda i: "∑ k ∈ s, ", "k + k = 1"),
    "∑ a ∑ a": repeated("theorem t : ", lambda i: "∑ a "),
    "∑ then + k": repeated("theorem t : ∑ k ∈ s, f k", lambda i: " + k"),
    "⋃ ∏ mixed": repeated("theorem t : ", lambda i: "⋃ i, ∏ j ∈ s, (i + j) + "),
    "no spaces ident": repeated("theorem t : ", lambda i: "a", " = 1"),
    "no spaces dotted": repeated("theorem t : a", lambda i: ".b", " = 1"),
    "no spaces symbols": repeated("theorem t : ", lambda i: "+-*"),
    "no spaces mixed": repeated("theorem t : ", lambda i: "x^(1/3)+(a.b(c))*"),
    "long numerals": long_number,
    "declarations": repeated("", lambda i: f"theorem t{i} (n : ℕ) : n = {i}\n"),
    "inductives": repeated("", lambda i: f"inductive T{i} | a{i} | b (n : ℕ)\n"),
    "fields": repeated("structure S where\n", lambda i: f"  x{i} : ℕ\n"),
    "field runs": repeated("", lambda i: f"x{i}\n" if i % 64 else "(a) " * 2000 + "\n"),
    "patterns": repeated("def f : ℕ → ℕ\n", lambda i: f"  | ⟨a{i}, b⟩ => a{i}\n"),
    "bars": repeated("theorem t : ", lambda i: "| "),
    "set-builder": repeated("theorem t : ", lambda i: "{x | x ∈ {y | "),
    "comments": repeated("theorem t : ", lambda i: "/- c -/ x "),
    "line comments": repeated("theorem t : ", lambda i: "x -- c\n"),
    "comment open": repeated("theorem t : /-", lambda i: " /- x"),
    "string open": repeated('theorem t : "', lambda i: "x \\"),
    "strings": repeated("theorem t : ", lambda i: '"a" '),
    "division": repeated("theorem t (n : ℕ) : ", lambda i: "1 / 4 + ", "1 = 1 / 4"),
    "modulo": repeated("theorem t (n : ℕ) : ", lambda i: "n % 4 / ", "1 = 1"),
    "exponents": repeated("theorem t (r : ℝ) : r", lambda i: " ^ (1 / 3)", " = 1"),
    "by by by": repeated("theorem t : 1 = 1 := ", lambda i: "by "),
    "by blocks": repeated("theorem t : 1 = 1 := by\n", lambda i: f"  intro x{i}\n"),
    "notation": repeated("", lambda i: "notation "),
    "if h :": repeated("theorem t : ", lambda i: "if h : "),
    "shadowing": repeated("theorem t (n : ℕ) ", lambda i: f"(h{i} : n = {i}) (n) ", ": n = 1"),
    "lines": repeated("theorem t :", lambda i: "\n"),
    # The evidence-3 checks' own shapes, each firing (or almost) everywhere.
    "binder defaults": repeated("theorem t ", lambda i: f"(a{i} : ℕ := {i}) ", ": a0 = 1"),
    "lets in binders": repeated("theorem t (h : ", lambda i: f"let r{i} := {i}; ", "1 = 1)"),
    "dist on ℝ × ℝ": repeated("theorem t (A B : ℝ × ℝ) : ", lambda i: "dist A B + ", "0 = 1"),
    "one name, many types": repeated(
        "theorem t ", lambda i: f"(x : Fin {i} → ℝ) ", ": dist x x + ‖x - x‖ = 0"
    ),
    "∀ A ∈ S": repeated(
        "theorem t (S : Set (ℝ × ℝ)) : ", lambda i: f"∀ A{i} ∈ S, dist A{i} A0 = 1 ∧ "
    ),
    "defs returning points": repeated("", lambda i: f"def p{i} (n : ℕ) : ℝ × ℝ := (n, n)\n"),
    "volumes": repeated("theorem t (S : Set (Fin 3 → ℝ)) : ", lambda i: "volume S + ", "0 = 1"),
    "ncard bounds": repeated("theorem t (S : Set ℕ) : ", lambda i: "S.ncard ≤ ", "3"),
    "sqrt of x": repeated(
        "theorem t (x : ℝ) : ", lambda i: "Real.sqrt x + x / y + x⁻¹ + ", "0 = 1"
    ),
    "guards": repeated("theorem t (x : ℝ) : ", lambda i: f"0 < x{i} ∧ Real.sqrt x{i} = 1 ∧ "),
    "ℕ subtraction": repeated("theorem t (a b : ℕ) : ", lambda i: "a - b - ", "a = 0"),
    "ℕ clauses": repeated("theorem t (a b : ℕ) : ", lambda i: "a - b = 0 ∧ b ≤ a ∧ "),
    "f applied - f": repeated("theorem t (f : ℕ → ℕ) : ", lambda i: "f (a) - f b - ", "0 = 1"),
    # The evidence-5 checks' own shapes (the informal text below names `x`, `f` and a sum).
    "bounds": repeated("theorem t (x : ℝ) ", lambda i: f"(h{i} : 0 < x ∧ x < {i}) ", ": x = 0"),
    "chained bounds": repeated("theorem t (x : ℝ) (h : ", lambda i: f"{i} < x ≤ {i} ∧ "),
    "ranges": repeated("theorem t (n : ℕ) : ", lambda i: "∑ k ∈ Finset.range n, k + ", "0 = 1"),
    "Ico ranges": repeated("theorem t : ", lambda i: "∑ k ∈ Finset.Ico 1 (n), (k) + ", "0"),
    "typed ℕ": repeated("theorem t ", lambda i: f"(x f : ℕ) (f : ℕ → ℕ) (x{i} : ℕ) ", ": 1"),
    "declared in text": repeated("", lambda i: f"Let $x_{i % 10}$, $y$ and $z$ be real numbers. "),
    "$ runs": repeated("", lambda i: "$x$ and ", "be real"),
}
SUBTRACTION = (
    "Show that a - b is at most 3: the square root, the log, the area, x/y. Let $x$ be a "
    "real number, $f: \\mathbb{R} \\to \\mathbb{R}$ and $\\sum_{k=1}^{n} k$."
)


def cold(pair: Pair) -> None:
    """Forget every cache, as a new pair meets them."""
    lean_tokens.cache_clear()
    main_theorem.cache_clear()
    _bound_in_header.cache_clear()


def timed(repeat: int, prepare: Callable[[], object], run: Callable[[], object]) -> Cell:
    """The fastest of `repeat` runs of `run` (each after an untimed `prepare`), in ms of
    this process's CPU, or the name of the error it raised."""
    times = []
    for _ in range(repeat):
        prepare()
        start = time.process_time()
        try:
            run()
        except Exception as error:  # a bench reports whatever a check raises
            return 0.0, type(error).__name__
        times.append((time.process_time() - start) * 1000)
    return min(times), None


def measure(text: str, field: str, repeat: int) -> dict[str, Cell]:
    fields = {"informal": SUBTRACTION, "formal": "theorem t : x = 6", "header": ""}
    pair = Pair(**{**fields, field: text})

    def tokenized() -> None:  # cold caches, then the tokens: each check starts from these
        cold(pair)
        lean_tokens(pair.formal), lean_tokens(pair.header)

    row = {"tokens": timed(repeat, lambda: cold(pair), lambda: lean_tokens(text))}
    for check in CHECKS:
        row[check.code] = timed(repeat, tokenized, lambda check=check: check.detect(pair))
    row["total"] = timed(repeat, lambda: cold(pair), lambda: run_checks(pair))
    return row


def cell(value: Cell) -> str:
    return f"{value[1]:>9}" if value[1] else f"{value[0]:9.2f}"


def pair_rows(directory: Path) -> list[Pair]:
    rows = [
        json.loads(line)
        for path in sorted(directory.glob("*.jsonl"))
        for line in path.open(encoding="utf-8")
    ]
    return [
        Pair(r.get("informal") or "", r.get("formal") or "", r.get("header") or "") for r in rows
    ]


def time_pairs(directory: Path, repeat: int) -> None:
    """Per pair: parse (tokens of formal and header) and all checks, from cold caches."""
    parse, checks = [], []
    for pair in pair_rows(directory):
        tokens = timed(repeat, lambda p=pair: cold(p), lambda p=pair: _parse(p))
        total = timed(repeat, lambda p=pair: cold(p), lambda p=pair: run_checks(p))
        parse.append(tokens[0])
        checks.append(total[0])
    print(f"{len(checks)} pairs from {directory}, ms per pair (best of {repeat})")
    print(f"{'':<8}{'mean':>9}{'p95':>9}{'max':>9}")
    for name, values in (("parse", parse), ("checks", checks)):
        p95 = statistics.quantiles(values, n=20)[-1]
        print(f"{name:<8}{statistics.fmean(values):9.3f}{p95:9.3f}{max(values):9.3f}")
    print(f"checks / parse (totals): {sum(checks) / sum(parse):.2f}")


def _parse(pair: Pair) -> None:
    lean_tokens(pair.formal), lean_tokens(pair.header)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--bytes", type=int, default=64 * 1024)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--shape", nargs="*", choices=list(SHAPES), default=list(SHAPES))
    parser.add_argument("--field", choices=["formal", "header", "informal"], default="formal")
    parser.add_argument("--scaling", action="store_true")
    parser.add_argument("--pairs", type=Path, nargs="?", const=Path("/work/shared/data/pairs"))
    args = parser.parse_args()
    if args.pairs:
        time_pairs(args.pairs, args.repeat)
        return
    shapes = ["plain", *(name for name in args.shape if name != "plain")]
    columns = ["tokens", *(check.code[:9] for check in CHECKS), "total", "× plain"]
    if args.scaling:
        columns.append("full/half")
    print(f"{args.bytes:,} UTF-8 bytes in `{args.field}`, ms (best of {args.repeat})")
    print(f"{'shape':<18}" + "".join(f"{name:>10}" for name in columns))
    plain_total = 0.0
    for name in shapes:
        text = SHAPES[name](args.bytes)
        assert len(text.encode()) == args.bytes, (name, len(text.encode()))
        row = measure(text, args.field, args.repeat)
        total = row["total"][0]
        plain_total = plain_total or total
        line = f"{name:<18}" + "".join(f" {cell(value)}" for value in row.values())
        line += f" {total / plain_total:9.2f}" if not row["total"][1] else f" {'-':>9}"
        if args.scaling:
            half = measure(SHAPES[name](args.bytes // 2), args.field, args.repeat)["total"][0]
            line += f" {total / half:9.2f}" if half else f" {'-':>9}"
        print(line, flush=True)


if __name__ == "__main__":
    main()
