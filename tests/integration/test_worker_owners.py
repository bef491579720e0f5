"""Freeing a dead local worker's jobs at once (what a worker on SQLite does at start)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.models import Job
from app.repositories import jobs, pairs, screenings
from app.vocabulary import Pair
from app.worker.owners import free_dead_local_jobs, is_dead_here, new_owner_name

HOST = socket.gethostname()
Sessions = async_sessionmaker[AsyncSession]


def dead_pid() -> int:
    """The pid of a process that has exited (and been reaped)."""
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def test_only_a_gone_process_of_this_host_is_dead() -> None:
    me = new_owner_name()
    assert is_dead_here(f"{HOST}:{dead_pid()}:abcd1234", me=me)
    # This process under another name: an earlier life of a restarted pid (containers).
    assert is_dead_here(f"{HOST}:{os.getpid()}:00000000", me=me)
    assert not is_dead_here(me, me=me)
    assert not is_dead_here(f"{HOST}:{os.getppid()}:abcd1234", me=me)  # alive
    assert not is_dead_here(f"elsewhere-{HOST}:{dead_pid()}:abcd1234", me=me)
    assert not is_dead_here("w1", me=me)
    assert not is_dead_here(f"{HOST}:not-a-pid:x", me=me)


async def held_job(sessions: Sessions, owner: str, marker: str) -> int:
    """A running job leased to `owner` for an hour."""
    async with sessions() as session:
        pair = await pairs.get_or_create(session, Pair("informal", f"theorem {marker} : 0 = 0"))
        screening = await screenings.add(
            session, pair_id=pair.id, external_id=marker, batch_id=None, confirmations=0
        )
        await jobs.enqueue(session, screening.id)
        [job] = await jobs.claim(session, owner=owner, lease_seconds=3600, limit=1)
        await session.commit()
        return job.id


async def test_a_dead_local_owner_s_jobs_are_claimable_at_once(session_factory: Sessions) -> None:
    dead = await held_job(session_factory, f"{HOST}:{dead_pid()}:abcd1234", "dead_owner")
    await held_job(session_factory, f"{HOST}:{os.getppid()}:abcd1234", "live_owner")
    await held_job(session_factory, f"other-host:{dead_pid()}:abcd1234", "remote")

    assert await free_dead_local_jobs(session_factory, me=new_owner_name()) == 1
    async with session_factory() as session:
        claimed = await jobs.claim(session, owner="next", lease_seconds=30, limit=10)
        await session.commit()
        attempts = (await session.execute(sa.select(Job.attempts).where(Job.id == dead))).scalar()
    assert [job.id for job in claimed] == [dead]  # the live and the remote owner keep theirs
    assert attempts == 2  # the crashed run counts
