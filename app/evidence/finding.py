"""An evidence finding: a deterministic fact about the pair itself, with a severity."""

from __future__ import annotations

from dataclasses import dataclass

from app.vocabulary import Severity


@dataclass(frozen=True, slots=True)
class Finding:
    code: str
    message: str
    severity: Severity
