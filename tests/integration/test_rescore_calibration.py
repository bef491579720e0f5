"""Re-scoring a labelled batch shows false-pass and false-alarm before and after: a parser
or policy change is judged on labels before it is applied."""

from __future__ import annotations

import asyncio
import json
import re

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.repositories import batches
from app.rescore.replay import read_text_reply
from tests.integration.test_rescore import (
    BATCH,
    FAITHFUL,
    QUOTING,
    run_cli,
    stored_screening,
)
from tests.support.in_process_api import Api


async def seed_labelled(factory: async_sessionmaker[AsyncSession]) -> None:
    """Stored by the old naive parser: a quoted MISMATCH passed (a false pass the current
    parser catches), a clean faithful pass, a job that failed, and one unlabelled."""
    async with factory() as session:
        await batches.add(
            session, batch_id=BATCH, name="b", total=4, idempotency_key=None, body_sha256="0" * 64
        )
        await stored_screening(session, 1, (QUOTING, FAITHFUL), label="mismatch")
        await stored_screening(
            session, 2, (FAITHFUL, FAITHFUL), read=read_text_reply, label="faithful"
        )
        await stored_screening(
            session, 3, None, outcome="needs_review", reasons=("job_failed",), label="mismatch"
        )
        await stored_screening(session, 5, (QUOTING, FAITHFUL))
        await session.commit()


async def test_a_dry_run_shows_the_rates_before_and_after_on_the_labelled_screenings(
    session_factory: async_sessionmaker[AsyncSession],
    database_url: str,
) -> None:
    await seed_labelled(session_factory)
    raw = await asyncio.to_thread(run_cli, database_url, "--batch", BATCH, "--json")
    calibration = json.loads(raw)["calibration"]
    before, after = calibration["before"], calibration["after"]
    # The failed job stays needs_review; the unlabelled screening is not counted.
    assert before["labelled"] == after["labelled"] == 3
    assert before["matrix"]["mismatch"] == {"passed": 1, "flagged": 0, "needs_review": 1}
    assert after["matrix"]["mismatch"] == {"passed": 0, "flagged": 1, "needs_review": 1}
    assert (before["rates"]["false_pass"]["k"], after["rates"]["false_pass"]["k"]) == (1, 0)
    assert before["rates"]["false_pass"]["n"] == after["rates"]["false_pass"]["n"] == 2
    assert before["rates"]["false_alarm"] == after["rates"]["false_alarm"]

    text = await asyncio.to_thread(run_cli, database_url, "--batch", BATCH)
    assert "On the 3 labelled screenings (now -> re-scored)" in text
    assert re.search(r"false_pass\s+1/2 = 50\.0% \[[^]]+\] -> 0/2 = 0\.0% \[", text)
    assert re.search(r"false_alarm\s+0/1 = 0\.0% \[[^]]+\] -> 0/1 = 0\.0% \[", text)


async def test_the_api_carries_the_calibration_move(
    api: Api,
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    await seed_labelled(session_factory)
    response = await api.client.post("/v1/rescore", json={"batch_id": BATCH})
    assert response.status_code == 200, response.text
    move = response.json()["calibration"]
    assert move["before"]["rates"]["false_pass"]["k"] == 1
    assert move["after"]["rates"]["false_pass"]["k"] == 0
