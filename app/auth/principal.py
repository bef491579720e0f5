"""Who is acting: a key's name and its access role. Pure.

"Access role" keeps the word apart from `app.vocabulary.Role` (translator, judge): the API
and the CLI say `role` for it, as the issue names it, but code calls it AccessRole.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class AccessRole(StrEnum):
    """What a key may do. Each role of the chain may do everything the roles before it may;
    `metrics` stands apart: it may read /metrics and nothing else (and admins may too)."""

    SUBMITTER = "submitter"  # submit and read screenings and batches
    REVIEWER = "reviewer"  # plus the review queue and its decisions
    ADMIN = "admin"  # plus keys, reopening decisions, releasing others' claims
    METRICS = "metrics"  # a Prometheus scraper: /metrics only

    def allows(self, needed: AccessRole) -> bool:
        if AccessRole.METRICS in (self, needed):
            return self is needed or self is AccessRole.ADMIN
        return CHAIN.index(self) >= CHAIN.index(needed)


ACCESS_ROLES: tuple[AccessRole, ...] = tuple(AccessRole)
# The roles that include one another, lowest first.
CHAIN = (AccessRole.SUBMITTER, AccessRole.REVIEWER, AccessRole.ADMIN)


@dataclass(frozen=True, slots=True)
class Principal:
    """The caller of one request: the key's name (recorded as actor and claimant) and role."""

    name: str
    role: AccessRole

    def allows(self, needed: AccessRole) -> bool:
        return self.role.allows(needed)


# With FAITHSCREEN_AUTH=off (loopback only) every request acts as this admin.
ANONYMOUS = Principal("anonymous", AccessRole.ADMIN)
