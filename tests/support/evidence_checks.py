"""Shared by the test_evidence_v*_checks files: one check's findings on a pair, and the
characters a finding's span covers."""

from __future__ import annotations

from app.evidence import CHECKS, Finding
from app.vocabulary import Pair

BY_CODE = {check.code: check for check in CHECKS}


def findings(code: str, formal: str, informal: str = "") -> list[Finding]:
    """What the check `code` alone finds in the pair (`informal`, `formal`)."""
    return BY_CODE[code](Pair(informal, formal))


def spanned(formal: str, finding: Finding) -> str:
    """The characters a finding's span covers, read the way the review page reads them."""
    assert finding.field == "formal" and finding.line is not None
    assert finding.column is not None and finding.end_column is not None
    return formal.split("\n")[finding.line - 1][finding.column : finding.end_column]
