"""A tiny reader of the GBNF subset app/contract/grammar.py writes, for tests: a grammar
without recursion becomes one Python regular expression (what it admits) and a number (the
longest string it admits, in characters).

The subset: one rule a line (`name ::= expression`), string literals with `\\n` and `\\"`
escapes, character classes (`[...]`, read by Python's `re` as written, since both spell
`\\xHH` and ranges alike), rule names, groups, alternatives, and the postfix `?`, `*`, `+`
and `{m,n}`. Anything else is a ValueError, so a grammar that grows past the subset is
noticed rather than misread.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

_TOKEN = re.compile(
    r'\s*(?:(?P<literal>"(?:[^"\\]|\\.)*")|(?P<cls>\[(?:[^\]\\]|\\.)*\])|(?P<name>[a-zA-Z0-9-]+)'
    r"|(?P<repeat>\{\d+(?:,\d*)?\})|(?P<op>[()|?*+]))"
)
_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", '"': '"', "\\": "\\"}


@dataclass(frozen=True)
class Compiled:
    regex: str  # for re.fullmatch
    longest: float  # math.inf when unbounded


def compile_gbnf(grammar: str, start: str = "root") -> Compiled:
    rules: dict[str, list[tuple[str, str]]] = {}
    for line in grammar.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        name, _, body = line.partition("::=")
        rules[name.strip()] = _tokens(body)
    return _Reader(rules).rule(start, ())


def _tokens(body: str) -> list[tuple[str, str]]:
    tokens, at = [], 0
    while body[at:].strip():
        found = _TOKEN.match(body, at)
        if found is None or found.lastgroup is None:
            raise ValueError(f"not in the subset: {body[at : at + 30]!r}")
        tokens.append((found.lastgroup, found.group(found.lastgroup)))
        at = found.end()
    return tokens


class _Reader:
    def __init__(self, rules: dict[str, list[tuple[str, str]]]) -> None:
        self.rules = rules
        self.cache: dict[str, Compiled] = {}

    def rule(self, name: str, stack: tuple[str, ...]) -> Compiled:
        if name in stack:
            raise ValueError(f"recursive rule {name}: not a regular grammar")
        if name not in self.cache:
            tokens = self.rules[name]
            compiled, at = self.alternatives(tokens, 0, (*stack, name))
            if at != len(tokens):
                raise ValueError(f"unbalanced rule {name}")
            self.cache[name] = compiled
        return self.cache[name]

    def alternatives(
        self, tokens: list[tuple[str, str]], at: int, stack: tuple[str, ...]
    ) -> tuple[Compiled, int]:
        options = []
        while True:
            sequence, at = self.sequence(tokens, at, stack)
            options.append(sequence)
            if at < len(tokens) and tokens[at] == ("op", "|"):
                at += 1
                continue
            regex = "|".join(option.regex for option in options)
            return Compiled(f"(?:{regex})", max(o.longest for o in options)), at

    def sequence(
        self, tokens: list[tuple[str, str]], at: int, stack: tuple[str, ...]
    ) -> tuple[Compiled, int]:
        parts: list[Compiled] = []
        while at < len(tokens) and tokens[at] not in (("op", "|"), ("op", ")")):
            atom, at = self.atom(tokens, at, stack)
            atom, at = self.postfix(atom, tokens, at)
            parts.append(atom)
        return Compiled("".join(p.regex for p in parts), sum(p.longest for p in parts)), at

    def atom(
        self, tokens: list[tuple[str, str]], at: int, stack: tuple[str, ...]
    ) -> tuple[Compiled, int]:
        kind, text = tokens[at]
        if kind == "literal":
            value = re.sub(r"\\(.)", lambda m: _ESCAPES[m.group(1)], text[1:-1])
            return Compiled(re.escape(value), len(value)), at + 1
        if kind == "cls":
            return Compiled(text, 1), at + 1
        if kind == "name":
            return self.rule(text, stack), at + 1
        if (kind, text) == ("op", "("):
            inner, at = self.alternatives(tokens, at + 1, stack)
            if tokens[at] != ("op", ")"):
                raise ValueError("unclosed group")
            return inner, at + 1
        raise ValueError(f"unexpected {text!r}")

    def postfix(
        self, atom: Compiled, tokens: list[tuple[str, str]], at: int
    ) -> tuple[Compiled, int]:
        if at >= len(tokens) or tokens[at][0] not in ("op", "repeat"):
            return atom, at
        kind, text = tokens[at]
        group = f"(?:{atom.regex})"
        if kind == "repeat":
            low, _, high = text[1:-1].partition(",")
            most = int(high) if high else (int(low) if not _ else math.inf)
            spelled = text if high or not _ else f"{{{low},}}"
            return Compiled(group + spelled, atom.longest * most), at + 1
        if text in "?*+":
            most = 1 if text == "?" else math.inf
            return Compiled(group + text, atom.longest * most), at + 1
        return atom, at
