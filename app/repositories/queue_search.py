"""Free-text search over the queue: a term found (case-insensitively, as a plain
substring: `%` and `_` match themselves) in an item's informal or formal statement, or in
the external id of a screening it answers for.

Bounded rather than indexed: a substring match cannot use a B-tree index on either
database, so the term is short (MAX_TERM_CHARS, checked by the callers), each statement is
matched through the pair of the item's own screening (found by primary keys), and the
listing stays a keyset page of at most its limit. SQLite's lower() folds ASCII letters
only; PostgreSQL's folds every letter.

Blind items: the statements are shown on a blind item, so they are searched; of its
external ids only its own screening's is shown to the person it is blind to (which later
screenings joined it would hint at their outcomes: docs/review.md), so only that one is
searched for them. Else a search would tell them what the listing withholds.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement, and_, exists, func, or_, select

from app.models.pair import PairRow
from app.models.queue_item import QueueItem, QueueItemScreening
from app.models.screening import Screening

# The longest search term taken (the API and the page refuse a longer one).
MAX_TERM_CHARS = 200


def _contains(column: Any, term: str) -> ColumnElement[bool]:
    return func.lower(column).contains(term.lower(), autoescape=True)


def matching(term: str, blind: ColumnElement[bool] | None) -> ColumnElement[bool]:
    """A condition on `QueueItem`: `term` is in its pair's statements or an external id it
    shows. `blind`: the caller's condition for an item blind to them (None: none is)."""
    in_pair = exists(
        select(1)
        .select_from(Screening)
        .join(PairRow, PairRow.id == Screening.pair_id)
        .where(
            Screening.id == QueueItem.screening_id,
            or_(_contains(PairRow.informal, term), _contains(PairRow.formal, term)),
        )
    )
    own_id = exists(
        select(1).where(
            Screening.id == QueueItem.screening_id, _contains(Screening.external_id, term)
        )
    )
    joined_ids: ColumnElement[bool] = exists(
        select(1)
        .select_from(QueueItemScreening)
        .join(Screening, Screening.id == QueueItemScreening.screening_id)
        .where(
            QueueItemScreening.queue_item_id == QueueItem.id,
            _contains(Screening.external_id, term),
        )
    )
    if blind is not None:
        joined_ids = and_(~blind, joined_ids)
    return or_(in_pair, own_id, joined_ids)
