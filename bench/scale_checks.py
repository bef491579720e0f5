"""What bench/scale_bench.py reads from the database after a run: lost and doubled work,
the prompts the service stored (to compare with the calls the provider answered), and
the bulk seeding of stored reviews for the /metrics scrape at scale.

Plain SQL through psycopg on PostgreSQL, as an operator would check a deployment.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass

import psycopg

# A review's prompt text as the provider saw it (tests/support/scripted_openai.py
# RecordedRequest.text: every message's string content joined with newlines), hashed.
PROMPT_DIGESTS = """
SELECT r.role, encode(sha256(convert_to(string_agg(m.value ->> 'content', E'\\n'
         ORDER BY m.ordinality), 'UTF8')), 'hex')
FROM reviews r, jsonb_array_elements(r.messages::jsonb) WITH ORDINALITY AS m
WHERE jsonb_typeof(m.value -> 'content') = 'string'
GROUP BY r.id, r.role
"""


@dataclass
class Ledger:
    screenings: int
    by_status: dict[str, int]
    by_outcome: dict[str, int]
    not_done: int
    reviews_by_role: dict[str, int]
    reviews_by_http_status: dict[str, int]
    # screenings whose translator or judge has other than exactly one first attempt
    missing_role: int
    doubled_role: int
    attempts_over_one: int
    prompts: dict[str, Counter[str]]


def ledger(url: str) -> Ledger:
    with psycopg.connect(url) as db:

        def groups(sql: str) -> dict[str, int]:
            return {str(k): int(n) for k, n in db.execute(sql).fetchall()}

        by_status = groups("SELECT status, count(*) FROM screenings GROUP BY 1")
        by_outcome = groups("SELECT coalesce(outcome, 'none'), count(*) FROM screenings GROUP BY 1")
        per_role = """
            SELECT s.id, count(r.id) FILTER (WHERE r.role = %s AND r.attempt = 1) AS n
            FROM screenings s LEFT JOIN reviews r ON r.screening_id = s.id GROUP BY s.id"""
        missing = doubled = 0
        for role in ("translator", "judge"):
            row = db.execute(
                f"SELECT count(*) FILTER (WHERE n = 0), count(*) FILTER (WHERE n > 1) "
                f"FROM ({per_role}) AS t",
                (role,),
            ).fetchone()
            assert row is not None
            missing, doubled = missing + row[0], doubled + row[1]
        prompts: dict[str, Counter[str]] = {"translator": Counter(), "judge": Counter()}
        for role, digest in db.execute(PROMPT_DIGESTS):
            prompts[role][digest] += 1
        return Ledger(
            screenings=sum(by_status.values()),
            by_status=by_status,
            by_outcome=by_outcome,
            not_done=sum(n for s, n in by_status.items() if s != "done"),
            reviews_by_role=groups("SELECT role, count(*) FROM reviews GROUP BY 1"),
            reviews_by_http_status=groups(
                "SELECT coalesce(http_status::text, 'none'), count(*) FROM reviews GROUP BY 1"
            ),
            missing_role=missing,
            doubled_role=doubled,
            attempts_over_one=int(
                db.execute("SELECT count(*) FROM reviews WHERE attempt > 1").fetchone()[0]  # type: ignore[index]
            ),
            prompts=prompts,
        )


def review_count(url: str) -> int:
    with psycopg.connect(url) as db:
        return int(db.execute("SELECT count(*) FROM reviews").fetchone()[0])  # type: ignore[index]


def columns(db: psycopg.Connection[tuple[object, ...]], table: str) -> list[str]:
    rows = db.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_name = %s "
        "ORDER BY ordinal_position",
        (table,),
    ).fetchall()
    return [str(r[0]) for r in rows]


def seed_reviews(url: str, target: int, deadline: float, chunk: int = 100_000) -> int:
    """Copy the run's done screenings and their reviews (new ids, no batch, the prompt
    cleared as `faithscreen db prune` leaves it) until `target` reviews are stored or
    `deadline` (time.monotonic()) passes; the tables' triggers run as for any insert.
    Returns the reviews stored."""
    with psycopg.connect(url, autocommit=True) as db:
        screening_cols = [c for c in columns(db, "screenings") if c != "id"]
        review_cols = [c for c in columns(db, "reviews") if c not in ("id", "screening_id")]
        per_screening = db.execute(
            "SELECT count(*)::float / count(DISTINCT screening_id) FROM reviews"
        ).fetchone()[0]  # type: ignore[index]
        stored = review_count(url)
        while stored < target and time.monotonic() < deadline:
            copies = max(1, int(min(chunk, target - stored) / per_screening))
            _copy_screenings(db, screening_cols, review_cols, copies)
            stored = review_count(url)
            print(f"  seeded: {stored:,} reviews stored", flush=True)
        return stored


def _copy_screenings(
    db: psycopg.Connection[tuple[object, ...]],
    screening_cols: list[str],
    review_cols: list[str],
    copies: int,
) -> None:
    blank = {"batch_id": "NULL", "batch_index": "NULL", "external_id": "NULL"}
    picked = ", ".join(blank.get(c, f"s.{c}") for c in screening_cols)
    review_picked = ", ".join("NULL" if c == "messages" else f"r.{c}" for c in review_cols)
    with db.transaction():
        db.execute(
            "CREATE TEMP TABLE seed_map ON COMMIT DROP AS "
            "SELECT s.id AS old_id, gen_random_uuid()::text AS new_id "
            "FROM (SELECT id FROM screenings WHERE status = 'done' AND batch_id IS NOT NULL "
            "ORDER BY random() LIMIT 20000) s, generate_series(1, %s) AS g",
            (max(1, -(-copies // 20000)),),
        )
        db.execute(
            f"DELETE FROM seed_map WHERE ctid IN (SELECT ctid FROM seed_map OFFSET {copies})"
        )
        db.execute(
            f"INSERT INTO screenings (id, {', '.join(screening_cols)}) "
            f"SELECT m.new_id, {picked} FROM seed_map m JOIN screenings s ON s.id = m.old_id"
        )
        db.execute(
            f"INSERT INTO reviews (screening_id, {', '.join(review_cols)}) "
            f"SELECT m.new_id, {review_picked} FROM seed_map m "
            f"JOIN reviews r ON r.screening_id = m.old_id"
        )
