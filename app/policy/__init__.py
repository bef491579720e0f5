"""The policy: readings + evidence -> outcome, with machine-readable reasons.

Pure: no database, no HTTP, no framework imports. The rules are in `ruling`'s docstring;
every reason code is in `reasons`.
"""

from app.policy.reasons import REASON_DESCRIPTIONS, Reason, reason_kind
from app.policy.ruling import (
    POLICY_VERSION,
    RoleResult,
    Ruling,
    confirmations_needed,
    decide,
)

__all__ = [
    "POLICY_VERSION",
    "REASON_DESCRIPTIONS",
    "Reason",
    "RoleResult",
    "Ruling",
    "confirmations_needed",
    "decide",
    "reason_kind",
]
