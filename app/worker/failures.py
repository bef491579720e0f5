"""What happens to a job whose screening raised: retry with backoff, then a dead job.

A dead job keeps its error, and its screening ends in `needs_review` with the reason
`job_failed`, so nothing is lost and nothing passes by default.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.clock import utcnow
from app.evidence import EVIDENCE_VERSION
from app.pipeline.screening import Claim
from app.policy import POLICY_VERSION
from app.policy.reasons import Reason
from app.repositories import jobs, screenings
from app.review_queue.enqueue import queue_for_review
from app.vocabulary import Outcome


@dataclass(frozen=True, slots=True)
class FailurePolicy:
    session_factory: async_sessionmaker[AsyncSession]
    max_attempts: int = 5
    base_delay_seconds: float = 2.0
    max_delay_seconds: float = 300.0

    def exhausted(self, attempts: int) -> bool:
        return attempts > self.max_attempts

    def delay(self, attempts: int) -> float:
        return float(
            min(self.base_delay_seconds * 2 ** max(attempts - 1, 0), self.max_delay_seconds)
        )

    async def record(self, claim: Claim, attempts: int, error: BaseException) -> None:
        message = f"{type(error).__name__}: {error}"[:4000]
        dead = attempts >= self.max_attempts
        retry_at = None if dead else utcnow() + timedelta(seconds=self.delay(attempts))
        async with self.session_factory() as session:
            if not await jobs.fail(
                session, claim.job_id, claim.owner, error=message, retry_at=retry_at
            ):
                return  # no longer ours: whoever holds it decides
            if dead and await screenings.record_outcome(
                session,
                claim.screening_id,
                outcome=Outcome.NEEDS_REVIEW,
                reasons=[Reason.JOB_FAILED.value],
                evidence=[],
                policy_version=POLICY_VERSION,
                evidence_version=EVIDENCE_VERSION,
                error=f"gave up after {attempts} attempts: {message}",
            ):
                # A person must look, since no model screened the pair; needs_review is
                # always queued, whatever the audit rate, so the rate given here does not
                # matter.
                await queue_for_review(
                    session,
                    claim.screening_id,
                    Outcome.NEEDS_REVIEW,
                    [Reason.JOB_FAILED.value],
                    audit_rate=0.0,
                )
            await session.commit()
