"""The policy: readings + evidence -> outcome, with machine-readable reasons.

Pure: no database, no HTTP, no framework imports. The rules are in `ruling`'s docstring;
every reason code is in `reasons`.
"""

from app.policy.ruling import (
    POLICY_VERSION,
    Ruling,
    RoleResult,
    confirmations_needed,
    decide,
)
from app.policy.reasons import REASON_DESCRIPTIONS, Reason, reason_kind

__all__ = [
    "POLICY_VERSION",
    "REASON_DESCRIPTIONS",
    "Ruling",
    "Reason",
    "RoleResult",
    "confirmations_needed",
    "decide",
    "reason_kind",
]
