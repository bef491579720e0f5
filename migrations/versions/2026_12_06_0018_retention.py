# Retention keeps the audit record: only a review's prompt may be cleared (issue 33). And
# /metrics' totals are kept by triggers at write time, not counted from history per scrape.
"""retention

Revision ID: 0018_retention
Revises: 0017_review_threads
Create Date: 2026-12-06 00:18:00+00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0018_retention"
down_revision: str | Sequence[str] | None = "0017_review_threads"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# ---- Reviews: only the prompt may be cleared ---------------------------------------------

# SQLite has no whole-row comparison: the trigger names every column but `messages` as the
# table has them when this runs. A later migration adding a column to reviews recreates it.
SQLITE_PROMPT_ONLY = """
CREATE TRIGGER reviews_append_only BEFORE UPDATE ON reviews
WHEN NOT (NEW.messages IS NULL AND {unchanged})
BEGIN
    SELECT RAISE(ABORT, 'reviews are append-only: only a prompt may be cleared');
END
"""
SQLITE_ANY_UPDATE = """
CREATE TRIGGER reviews_append_only BEFORE UPDATE ON reviews
BEGIN
    SELECT RAISE(ABORT, 'reviews are append-only');
END
"""
# PostgreSQL compares whole rows, so a column added later is covered without a change here.
POSTGRES_PROMPT_ONLY_FUNCTION = """
CREATE FUNCTION reviews_refuse_update_but_prompt_pruning() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.messages IS NULL AND (to_jsonb(NEW) - 'messages') = (to_jsonb(OLD) - 'messages') THEN
        RETURN NEW;
    END IF;
    RAISE EXCEPTION 'reviews are append-only: only a prompt may be cleared (review %)', OLD.id;
END
$$
"""
POSTGRES_UPDATE_TRIGGER = """
CREATE TRIGGER reviews_append_only BEFORE UPDATE ON reviews
FOR EACH ROW EXECUTE FUNCTION {function}()
"""

# ---- Metric counts kept at write time ----------------------------------------------------

# Frozen copies of app/repositories/metric_counts.py's constants as of this revision: a
# change there needs a migration that recreates the triggers.
LATENCY_BOUNDS_MS = (250, 500, 1000, 2500, 5000, 10000, 30000, 60000, 120000, 300000, 600000)
MAX_LABEL_CHARS = 128
TOKEN_KINDS = ("prompt", "completion", "reasoning")
COLUMNS = (
    "family, label1, label2, label3, label4, bucket, n, latency_ms, "
    "prompt_tokens, completion_tokens, reasoning_tokens"
)


def _model_label(row: str, dialect: str) -> str:
    """observability/labels.bounded in SQL: cut to MAX_LABEL_CHARS with the same mark."""
    model = f"{row}model"
    digits = f"length(CAST(length({model}) AS TEXT))"
    cut = (
        f"substr({model}, 1, {MAX_LABEL_CHARS - 18} - {digits}) || '\u2026[cut from ' || "
        f"CAST(length({model}) AS TEXT) || ' chars]'"
    )
    return (
        f"CASE WHEN {row}supplied THEN 'supplied' WHEN {model} IS NULL THEN 'unknown' "
        f"WHEN length({model}) <= {MAX_LABEL_CHARS} THEN {model} ELSE {cut} END"
    )


def _bucket(row: str) -> str:
    latency = f"{row}latency_ms"
    cases = " ".join(f"WHEN {latency} <= {b} THEN {i}" for i, b in enumerate(LATENCY_BOUNDS_MS))
    return f"CASE WHEN {latency} IS NULL THEN -1 {cases} ELSE {len(LATENCY_BOUNDS_MS)} END"


def _tokens(row: str, kind: str, dialect: str) -> str:
    """A count the provider reported as a JSON integer (not a bool, a float or text), else 0."""
    usage, key = f"{row}usage", f"{kind}_tokens"
    if dialect == "postgresql":
        text = f"({usage} ->> '{key}')"
        return (
            f"CASE WHEN json_typeof({usage} -> '{key}') = 'number' "
            f"AND {text} ~ '^-?[0-9]{{1,18}}$' "
            f"THEN CAST({text} AS BIGINT) ELSE 0 END"
        )
    path = f"'$.{key}'"
    return (
        f"CASE WHEN json_valid({usage}) AND json_type({usage}, {path}) = 'integer' "
        f"THEN json_extract({usage}, {path}) ELSE 0 END"
    )


def _review_values(row: str, dialect: str) -> list[str]:
    return [
        "'reviews'",
        f"{row}role",
        f"{row}judge_name",
        _model_label(row, dialect),
        f"{row}parse_status",
        _bucket(row),
        "1",
        f"COALESCE({row}latency_ms, 0)",
        *[_tokens(row, kind, dialect) for kind in TOKEN_KINDS],
    ]


def _status_values(family: str, row: str, sign: int) -> list[str]:
    if family == "screenings":
        labels = [f"COALESCE({row}outcome, 'none')", f"{row}status", "''"]
    else:
        labels = [f"{row}status", "''", "''"]
    return [f"'{family}'", *labels, "''", "-1", str(sign), "0", "0", "0", "0"]


# The families counted by status, and the columns whose change moves a row between labels.
STATUS_TABLES = {
    "screenings": ("outcome", "status"),
    "jobs": ("status",),
    "queue_items": ("status",),
}
INSERT_CHANGE = "INSERT INTO metric_count_changes (" + COLUMNS + ") VALUES ({values});"


def _insert_change(values: list[str]) -> str:
    return INSERT_CHANGE.format(values=", ".join(values))


def _changed(columns: tuple[str, ...]) -> str:
    return " OR ".join(f"OLD.{c} IS NOT NEW.{c}" for c in columns)


def _sqlite_triggers() -> list[str]:
    statements = [
        "CREATE TRIGGER reviews_metric_counts AFTER INSERT ON reviews BEGIN "
        + _insert_change(_review_values("NEW.", "sqlite"))
        + " END"
    ]
    for table, columns in STATUS_TABLES.items():
        plus = _insert_change(_status_values(table, "NEW.", 1))
        minus = _insert_change(_status_values(table, "OLD.", -1))
        statements += [
            f"CREATE TRIGGER {table}_metric_counts_insert AFTER INSERT ON {table} BEGIN {plus} END",
            f"CREATE TRIGGER {table}_metric_counts_update AFTER UPDATE OF {', '.join(columns)} "
            f"ON {table} WHEN {_changed(columns)} BEGIN {minus} {plus} END",
            f"CREATE TRIGGER {table}_metric_counts_delete AFTER DELETE ON {table} "
            f"BEGIN {minus} END",
        ]
    return statements


POSTGRES_FUNCTION = """
CREATE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
{body}
    RETURN NULL;
END
$$
"""


def _postgres_triggers() -> list[str]:
    review = _insert_change(_review_values("NEW.", "postgresql"))
    statements = [
        POSTGRES_FUNCTION.format(name="reviews_metric_count", body=review),
        "CREATE TRIGGER reviews_metric_counts AFTER INSERT ON reviews "
        "FOR EACH ROW EXECUTE FUNCTION reviews_metric_count()",
    ]
    for table, columns in STATUS_TABLES.items():
        plus = _insert_change(_status_values(table, "NEW.", 1))
        minus = _insert_change(_status_values(table, "OLD.", -1))
        body = (
            f"    IF TG_OP IN ('UPDATE', 'DELETE') THEN {minus} END IF;\n"
            f"    IF TG_OP IN ('UPDATE', 'INSERT') THEN {plus} END IF;"
        )
        changed = _changed(columns).replace("IS NOT", "IS DISTINCT FROM")
        statements += [
            POSTGRES_FUNCTION.format(name=f"{table}_metric_count", body=body),
            f"CREATE TRIGGER {table}_metric_counts_write AFTER INSERT OR DELETE ON {table} "
            f"FOR EACH ROW EXECUTE FUNCTION {table}_metric_count()",
            f"CREATE TRIGGER {table}_metric_counts_update AFTER UPDATE OF {', '.join(columns)} "
            f"ON {table} FOR EACH ROW WHEN ({changed}) EXECUTE FUNCTION {table}_metric_count()",
        ]
    return statements


def _backfill(dialect: str) -> list[str]:
    """What is stored already, counted once here (the last full scan /metrics needs)."""
    names = [name.strip() for name in COLUMNS.split(",")]
    keys = ", ".join(names[:6])
    sums = ", ".join(f"SUM({name})" for name in names[6:])
    sources = [(_review_values("", dialect), "reviews")]
    sources += [(_status_values(table, "", 1), table) for table in STATUS_TABLES]
    statements = []
    for values, table in sources:
        named = ", ".join(f"{value} AS {name}" for value, name in zip(values, names, strict=True))
        statements.append(
            f"INSERT INTO metric_counts ({COLUMNS}) SELECT {keys}, {sums} "
            f"FROM (SELECT {named} FROM {table}) AS stored GROUP BY {keys}"
        )
    return statements


def _counted_columns() -> list[sa.Column[object]]:
    label = [sa.Column(f"label{i}", sa.String(256), nullable=False) for i in range(1, 5)]
    numbers = ("n", "latency_ms", "prompt_tokens", "completion_tokens", "reasoning_tokens")
    return [
        sa.Column("family", sa.String(16), nullable=False),
        *label,
        sa.Column("bucket", sa.Integer(), nullable=False),
        *[sa.Column(name, sa.BigInteger(), nullable=False) for name in numbers],
    ]


def upgrade() -> None:
    dialect = op.get_bind().dialect.name
    op.create_table(
        "metric_counts",
        *_counted_columns(),
        sa.PrimaryKeyConstraint(
            "family", "label1", "label2", "label3", "label4", "bucket", name="pk_metric_counts"
        ),
    )
    op.create_table(
        "metric_count_changes",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            primary_key=True,
            autoincrement=True,
        ),
        *_counted_columns(),
        sa.PrimaryKeyConstraint("id", name="pk_metric_count_changes"),
    )
    for statement in _backfill(dialect):
        op.execute(statement)
    for statement in _postgres_triggers() if dialect == "postgresql" else _sqlite_triggers():
        op.execute(statement)
    _allow_prompt_pruning(dialect)


def _allow_prompt_pruning(dialect: str) -> None:
    if dialect == "postgresql":
        op.execute("DROP TRIGGER reviews_append_only ON reviews")
        op.execute(POSTGRES_PROMPT_ONLY_FUNCTION)
        function = "reviews_refuse_update_but_prompt_pruning"
        op.execute(POSTGRES_UPDATE_TRIGGER.format(function=function))
        return
    columns = [row[1] for row in op.get_bind().exec_driver_sql("PRAGMA table_info(reviews)")]
    unchanged = " AND ".join(f"NEW.{c} IS OLD.{c}" for c in columns if c != "messages")
    op.execute("DROP TRIGGER reviews_append_only")
    op.execute(SQLITE_PROMPT_ONLY.format(unchanged=unchanged))


def downgrade() -> None:
    dialect = op.get_bind().dialect.name
    if dialect == "postgresql":
        op.execute("DROP TRIGGER reviews_append_only ON reviews")
        op.execute("DROP FUNCTION reviews_refuse_update_but_prompt_pruning()")
        op.execute(POSTGRES_UPDATE_TRIGGER.format(function="reviews_refuse_update"))
        op.execute("DROP TRIGGER reviews_metric_counts ON reviews")
        op.execute("DROP FUNCTION reviews_metric_count()")
        for table in STATUS_TABLES:
            op.execute(f"DROP TRIGGER {table}_metric_counts_write ON {table}")
            op.execute(f"DROP TRIGGER {table}_metric_counts_update ON {table}")
            op.execute(f"DROP FUNCTION {table}_metric_count()")
    else:
        op.execute("DROP TRIGGER reviews_append_only")
        op.execute(SQLITE_ANY_UPDATE)
        op.execute("DROP TRIGGER reviews_metric_counts")
        for table in STATUS_TABLES:
            for event in ("insert", "update", "delete"):
                op.execute(f"DROP TRIGGER {table}_metric_counts_{event}")
    op.drop_table("metric_count_changes")
    op.drop_table("metric_counts")
