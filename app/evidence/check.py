"""A check: one named, deterministic test of a pair that yields findings of one severity."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from app.evidence.finding import Detected, Finding
from app.vocabulary import Pair, Severity

Detector = Callable[[Pair], Sequence[str | Detected]]
"""Pure function: the pair's problems, each a human-readable message or a message with
its span (empty when none)."""


@dataclass(frozen=True, slots=True)
class Check:
    code: str
    severity: Severity
    description: str
    detect: Detector

    def __call__(self, pair: Pair) -> list[Finding]:
        return [
            Finding.at(self.code, self.severity, _detected(found)) for found in self.detect(pair)
        ]


def _detected(found: str | Detected) -> Detected:
    return Detected(found) if isinstance(found, str) else found
