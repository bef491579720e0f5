"""FaithScreen behind PgBouncer in transaction mode, when FAITHSCREEN_TEST_PGBOUNCER_URL
names one (for instance postgresql://postgres@127.0.0.1:6432, in front of the
FAITHSCREEN_TEST_POSTGRES_URL server; `.ci/run` starts Debian's PgBouncer so and sets it;
skipped where it is not set).

With `?prepared_statements=off` the migrations, the API, the worker (claims, leases,
advisory transaction locks) and /metrics all run through it; docs/operations.md says what
fails without it. Several workers' sessions share the pooler's server connections, so a
prepared statement would be found missing, or already there, on the next one."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from sqlalchemy import make_url

from app.db.migrate import current_revision, head_revision, upgrade_to_head
from app.settings import Settings
from tests.conftest import create_database, drop_database
from tests.support.batches import post_batch, queued_item, results, wait_batch_done
from tests.support.in_process_api import (
    JUDGE_MODEL,
    TRANSLATOR_KEY,
    TRANSLATOR_MODEL,
    StartApi,
    provider,
)
from tests.support.scripted_openai import ScriptedOpenAI

PGBOUNCER_ENV = "FAITHSCREEN_TEST_PGBOUNCER_URL"


@pytest.fixture
def pooled_url(postgres_server_url: str) -> Iterator[str]:
    pooler = os.environ.get(PGBOUNCER_ENV)
    if not pooler:
        pytest.skip(f"set {PGBOUNCER_ENV} to a PgBouncer in transaction mode")
    direct = create_database(postgres_server_url)
    name = make_url(direct).database
    through = make_url(pooler).set(database=name).render_as_string(hide_password=False)
    try:
        yield through + "?prepared_statements=off"
    finally:
        drop_database(postgres_server_url, direct)


@pytest.mark.postgres
async def test_screening_and_metrics_through_a_transaction_pooler(
    pooled_url: str, start_api: StartApi, clean_env: None, scripted_openai: ScriptedOpenAI
) -> None:
    upgrade_to_head(pooled_url)
    assert current_revision(pooled_url) == head_revision()
    settings = Settings(
        database_url=pooled_url,
        translator=provider(scripted_openai.base_url, TRANSLATOR_MODEL, TRANSLATOR_KEY),
        judge=provider(scripted_openai.base_url, JUDGE_MODEL),
        audit_rate=0.0,
        auth="off",
    )
    async with start_api(settings) as api:
        # Enough screenings that each statement runs far past psycopg's 5 before it
        # would prepare, on sessions the pooler moves between server connections.
        batch = await post_batch(api, [queued_item(n) for n in range(40)])
        await wait_batch_done(api, batch["id"])
        assert {row["outcome"] for row in await results(api, batch["id"])} == {"passed"}
        for _ in range(8):
            response = await api.client.get("/metrics")
            assert response.status_code == 200, response.text
        assert 'faithscreen_screenings{outcome="passed",status="done"} 40' in response.text
