"""A check: one named, deterministic test of a pair that yields findings of one severity."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from app.evidence.finding import Finding
from app.vocabulary import Pair, Severity

Detector = Callable[[Pair], list[str]]
"""Pure function: the pair's problems as human-readable messages (empty when none)."""


@dataclass(frozen=True, slots=True)
class Check:
    code: str
    severity: Severity
    description: str
    detect: Detector

    def __call__(self, pair: Pair) -> list[Finding]:
        return [Finding(self.code, message, self.severity) for message in self.detect(pair)]
