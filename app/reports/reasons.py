"""Reasons as a report counts them.

The policy writes a bare evidence reason (`evidence_review`) beside one
`evidence_review:<code>` per finding code. Counting the bare one too would count each such
screening twice under one finding, so a bare reason is left out wherever a finer reason of
its kind (`<reason>:<code>`) is present. A bare reason standing alone is still counted.
"""

from __future__ import annotations

from collections.abc import Sequence


def counted_reasons(reasons: Sequence[str]) -> list[str]:
    """`reasons` without the bare kinds that a `<kind>:<code>` beside them refines, each once."""
    refined = {reason.partition(":")[0] for reason in reasons if ":" in reason}
    return [reason for reason in dict.fromkeys(reasons) if reason not in refined]
