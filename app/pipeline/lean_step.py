"""The Lean step of a screening (FAITHSCREEN_LEAN_SERVER_URL set): before any model is
asked, the pair's `header + formal` is checked by the Lean server, once per screening.

The check is stored (app/repositories/lean_checks.py) in a short transaction of its own
after the call, never across it; a screening run again after a crash reads the stored
check and does not ask Lean twice. A stored check is read again from its stored body by
the same reader as a fresh one (app/lean/body.py), as a re-score reads it.
"""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.evidence import run_checks
from app.lean import LeanClient, LeanReading, read_call, snippet_code
from app.lean.body import read_answer
from app.models.lean_check import LeanCheck
from app.pipeline.ruling import ScreeningRuling
from app.policy import after_lean, decide_lean
from app.process_metrics import LEAN_CHECKS, REGISTRY
from app.repositories import lean_checks
from app.repositories.lean_checks import LeanCheckRecord
from app.vocabulary import Pair


class LeanStep:
    def __init__(self, sessions: async_sessionmaker[AsyncSession], client: LeanClient) -> None:
        self._sessions = sessions
        self._client = client

    async def check(self, screening_id: str, pair: Pair) -> LeanReading:
        """The screening's Lean reading: the stored check's, or a new check's (stored)."""
        async with self._sessions() as session:
            stored = await lean_checks.for_screening(session, screening_id)
        if stored is not None:
            return stored_reading(stored)
        call = await self._client.check(screening_id, snippet_code(pair))
        reading = read_call(call)
        async with self._sessions() as session:
            added = await lean_checks.add(session, LeanCheckRecord(call, reading, screening_id))
            await session.commit()
        if added:  # another run's check, stored first, was counted by that run
            REGISTRY.add(LEAN_CHECKS, (reading.status.value,))
        return reading

    async def aclose(self) -> None:
        await self._client.aclose()


def stored_reading(stored: LeanCheck) -> LeanReading:
    return read_answer(
        stored.http_status, stored.raw_body, stored.failure, stored.snippet_id, stored.code
    )


def stopped_by_lean(pair: Pair, reading: LeanReading) -> ScreeningRuling | None:
    """The ruling when Lean's status decides the pair without a model (policy-5)."""
    findings = tuple(run_checks(pair))
    ruling = decide_lean(reading.status, findings)
    return None if ruling is None else ScreeningRuling(ruling, findings)


def ruled_after_lean(screening: ScreeningRuling) -> ScreeningRuling:
    """The models' ruling of a pair Lean elaborated, under the version that says so."""
    return ScreeningRuling(after_lean(screening.ruling), screening.findings)
