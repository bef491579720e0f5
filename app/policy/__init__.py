"""The policy: readings + evidence -> outcome, with machine-readable reasons.

Pure: no database, no HTTP, no framework imports. The rules are in `ruling`'s docstring;
every reason code is in `reasons`.
"""

from app.policy.lean import LEAN_POLICY_VERSION, after_lean, decide_lean
from app.policy.panel import PANEL_POLICY_VERSION, Panel, decide_panel, panel_of
from app.policy.reasons import REASON_DESCRIPTIONS, Reason, reason_kind
from app.policy.ruling import (
    POLICY_VERSION,
    RoleResult,
    Ruling,
    confirmations_needed,
    decide,
)

__all__ = [
    "LEAN_POLICY_VERSION",
    "PANEL_POLICY_VERSION",
    "POLICY_VERSION",
    "REASON_DESCRIPTIONS",
    "Panel",
    "Reason",
    "RoleResult",
    "Ruling",
    "after_lean",
    "confirmations_needed",
    "decide",
    "decide_lean",
    "decide_panel",
    "panel_of",
    "reason_kind",
]
