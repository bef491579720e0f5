"""Who is acting: a key's name and its access role. Pure.

"Access role" keeps the word apart from `app.vocabulary.Role` (translator, judge): the API
and the CLI say `role` for it, as the issue names it, but code calls it AccessRole.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class AccessRole(StrEnum):
    """What a key may do. Each role may do everything the roles before it may."""

    SUBMITTER = "submitter"  # submit and read screenings and batches
    REVIEWER = "reviewer"  # plus the review queue and its decisions
    ADMIN = "admin"  # plus keys, reopening decisions, releasing others' claims

    @property
    def rank(self) -> int:
        return ACCESS_ROLES.index(self)

    def allows(self, needed: AccessRole) -> bool:
        return self.rank >= needed.rank


ACCESS_ROLES: tuple[AccessRole, ...] = tuple(AccessRole)


@dataclass(frozen=True, slots=True)
class Principal:
    """The caller of one request: the key's name (recorded as actor and claimant) and role."""

    name: str
    role: AccessRole

    def allows(self, needed: AccessRole) -> bool:
        return self.role.allows(needed)


# With FAITHSCREEN_AUTH=off (loopback only) every request acts as this admin.
ANONYMOUS = Principal("anonymous", AccessRole.ADMIN)
