"""Who holds a lease: owner names `host:pid:random`, and freeing a dead local owner's jobs.

A crashed worker's running jobs wait for their lease to lapse (FAITHSCREEN_JOB_LEASE_SECONDS)
before another worker takes them. On SQLite a worker starting up frees them at once, if it
can tell that their owner is dead: same host, and that process id is gone (or is this very
process, a restart that was given the dead one's pid, as in a container). A SQLite file is
local to one machine, so every owner that can hold its jobs is checkable here.

On PostgreSQL the lease alone decides: workers run on other machines, and containers on one
machine can share a host name while each has its own process ids, so a pid seen from here
says nothing about them.
"""

from __future__ import annotations

import logging
import os
import socket
import uuid

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.repositories import jobs, provider_budgets

log = logging.getLogger("faithscreen.worker")


def new_owner_name() -> str:
    """Unique per worker process; the random part tells apart two lives of one pid."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def is_dead_here(owner: str, *, me: str) -> bool:
    """True only when `owner` certainly runs no more: a worker of this host whose process is
    gone. Unknown shapes, other hosts and live (or unreadable) processes are not dead."""
    host, _, rest = owner.partition(":")
    pid_text, _, _ = rest.partition(":")
    if host != socket.gethostname() or not pid_text.isdigit() or owner == me:
        return False
    pid = int(pid_text)
    if pid == os.getpid():
        return True  # this process holds that pid now, under the name `me`
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False  # alive, run by another user
    return False


async def free_dead_local_jobs(sessions: async_sessionmaker[AsyncSession], *, me: str) -> int:
    """Let the leases of dead local owners lapse now, on jobs and on provider budgets'
    calls in flight (app/budgets); returns how many jobs were freed."""
    async with sessions() as session:
        dead = [o for o in await jobs.running_owners(session) if is_dead_here(o, me=me)]
        freed = await jobs.expire_leases(session, dead)
        calling = await provider_budgets.lease_owners(session)
        gone = [o for o in calling if is_dead_here(o, me=me)]
        await provider_budgets.expire_leases(session, gone)
        await session.commit()
    if freed:
        log.info("freed %d running jobs of dead workers %s", freed, ", ".join(dead))
    return freed
