"""Blind review: which queue items a person decides without seeing what the models said.

A person who sees the models' verdicts before deciding anchors on them, and the false-pass
rate measured from audits comes out too low. So, until an item is resolved, a blind item
shows its pair (and header) only: none of the outcome, reasons, evidence, reviews,
back-translations, rulings or label. `FAITHSCREEN_REVIEW_BLIND` says which items are blind:
`audit` (the sampled passed and flagged screenings, the default), `all`, or `off`. Admins
always see everything. Pure.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, Protocol

from app.auth.principal import Principal
from app.models.api_key import AccessRole

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


def item_blind_for(
    principal: Principal, mode: BlindMode, *, audit: bool, resolved: bool, pair_audit: bool | None
) -> bool:
    """Whether `principal` sees a queue item blind: while it is blind itself, and while
    another, unresolved item of its pair is (`pair_audit`: that item's `audit` flag, None
    without one), since an older item of the pair would show what that one hides."""
    if blind_for(principal, mode, audit=audit, resolved=resolved):
        return True
    return pair_audit is not None and blind_for(principal, mode, audit=pair_audit, resolved=False)


def screenings_blind_for(principal: Principal) -> bool:
    """Whether `principal` is refused the screenings behind items blind to them (their
    outcome through GET /v1/screenings, listings and batch results): a key that may decide
    queue items but is no admin. A submitter-role key cannot open the queue, so it keeps
    reading its own screenings' outcomes: a pipeline polling its result must not break."""
    return principal.allows(AccessRole.REVIEWER) and not principal.allows(AccessRole.ADMIN)


def blind_audit_values(mode: BlindMode) -> tuple[bool, ...]:
    """The `audit` values of unresolved items that are blind under `mode` (a resolved item
    never is): item_is_blind spelt out for a query to filter on."""
    return tuple(a for a in (True, False) if item_is_blind(mode, audit=a, resolved=False))


def screening_blind_audits(principal: Principal, mode: BlindMode) -> tuple[bool, ...]:
    """`blind_audit_values` for the screening reads of `principal`: none unless
    `screenings_blind_for` them."""
    return blind_audit_values(mode) if screenings_blind_for(principal) else ()


def audit_withheld(mode: BlindMode) -> bool:
    """Whether a blind item's `audit` flag is withheld too: under `all`, where it would tell a
    sampled passed or flagged outcome from a needs_review (under `audit` every blind item is
    an audit, so the flag tells nothing)."""
    return len(blind_audit_values(mode)) > 1


class TrailRow(Protocol):
    """A row of an item's decision trail (models.decision.Decision)."""

    @property
    def id(self) -> int: ...
    @property
    def kind(self) -> str: ...
    @property
    def actor(self) -> str: ...


def hidden_trail_rows(
    principal: Principal, trail: Sequence[TrailRow], *, awaiting_second: bool
) -> set[int]:
    """The ids of trail rows `principal` may not see: while a double review awaits its second
    decision, nobody but admins sees the first (so the second person decides unanchored),
    nor anything else another person did since the last reopen. The first person still sees
    their own. Once both are in (agreed and resolved, or disputed), everyone sees all."""
    if not awaiting_second or principal.role is AccessRole.ADMIN:
        return set()
    reopens = [i for i, row in enumerate(trail) if row.kind == "reopen"]
    current = trail[reopens[-1] + 1 :] if reopens else trail
    return {row.id for row in current if row.actor != principal.name}
