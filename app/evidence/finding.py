"""An evidence finding: a deterministic fact about the pair itself, with a severity, and
where it is when a check can point at it."""

from __future__ import annotations

from dataclasses import dataclass

from app.vocabulary import Severity

FIELDS = ("formal", "informal", "header")


@dataclass(frozen=True, slots=True)
class Span:
    """Where a finding is: `line` (1-based, lines end at LF) of the pair's `field`, and
    the code-point columns `[column, end_column)` of that line (0-based; a span crossing
    lines is cut at the end of its first)."""

    field: str
    line: int
    column: int
    end_column: int


@dataclass(frozen=True, slots=True)
class Detected:
    """What a detector reports: one message, and its span when it knows one."""

    message: str
    span: Span | None = None


@dataclass(frozen=True, slots=True)
class Finding:
    code: str
    message: str
    severity: Severity
    # The span's parts, all None when the finding has no location (e.g. `check_failed`).
    field: str | None = None
    line: int | None = None
    column: int | None = None
    end_column: int | None = None

    @classmethod
    def at(cls, code: str, severity: Severity, detected: Detected) -> Finding:
        span = detected.span
        if span is None:
            return cls(code, detected.message, severity)
        return cls(
            code, detected.message, severity, span.field, span.line, span.column, span.end_column
        )

    def as_json(self) -> dict[str, object]:
        """How the finding is stored with a screening and shown by the API."""
        return {
            "code": self.code,
            "message": self.message,
            "severity": self.severity.value,
            "field": self.field,
            "line": self.line,
            "column": self.column,
            "end_column": self.end_column,
        }
