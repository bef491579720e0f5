"""Blind review: which queue items a person decides without seeing what the models said.

A person who sees the models' verdicts before deciding anchors on them, and the false-pass
rate measured from audits comes out too low. So, until an item is resolved, a blind item
shows its pair (and header) only: none of the outcome, reasons, evidence, reviews,
back-translations, rulings or label. `FAITHSCREEN_REVIEW_BLIND` says which items are blind:
`audit` (the sampled passed and flagged screenings, the default), `all`, or `off`. Admins
always see everything. Pure.
"""

from __future__ import annotations

from typing import Literal

from app.auth.principal import AccessRole, Principal

BlindMode = Literal["audit", "all", "off"]
BLIND_MODES: tuple[BlindMode, ...] = ("audit", "all", "off")


def item_is_blind(mode: BlindMode, *, audit: bool, resolved: bool) -> bool:
    """Whether an item is decided blind under `mode` (for everyone but admins)."""
    if resolved or mode == "off":
        return False
    return mode == "all" or audit


def blind_for(principal: Principal, mode: BlindMode, *, audit: bool, resolved: bool) -> bool:
    """Whether `principal` sees the item blind: admins never do."""
    if principal.role is AccessRole.ADMIN:
        return False
    return item_is_blind(mode, audit=audit, resolved=resolved)
