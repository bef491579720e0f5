"""The words of the domain, as values. Every layer speaks in these; see CONVENTIONS.md.

Pure: no database, no HTTP, no framework imports.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Verdict(StrEnum):
    FAITHFUL = "faithful"
    MISMATCH = "mismatch"
    UNCLEAR = "unclear"


class ParseStatus(StrEnum):
    """Why a verdict is what it is. Kept apart from the verdict in every record.

    The first six come from reading the reply text (the contract parser); the rest
    describe the call that produced it.
    """

    OK = "ok"
    MISSING = "missing"
    INVALID = "invalid"
    CONFLICTING = "conflicting"
    BARE_CR = "bare_cr"
    # Read strictly the reply is `ok`, but read as a person reads it (every Unicode line
    # break a line end, invisible characters dropped) its verdicts differ.
    AMBIGUOUS = "ambiguous"
    # The reply may be cut short: its finish reason is not one the contract lists as a
    # completion (`length`, an unknown reason, none at all; app/contract/call.py).
    TRUNCATED = "truncated"
    EMPTY = "empty"
    PROVIDER_ERROR = "provider_error"
    # The provider declined to answer (a refusal finish reason such as `content_filter`,
    # app/contract/call.py, or a refusal field). Recorded as such and never re-asked: it is
    # not a format fault.
    REFUSED = "refused"


# Statuses a format retry may repair: the reply's shape was wrong, not its answer.
FORMAT_RETRY_STATUSES: frozenset[ParseStatus] = frozenset(
    {
        ParseStatus.MISSING,
        ParseStatus.INVALID,
        ParseStatus.CONFLICTING,
        ParseStatus.BARE_CR,
        ParseStatus.AMBIGUOUS,
        ParseStatus.EMPTY,
        ParseStatus.TRUNCATED,
    }
)


class Outcome(StrEnum):
    PASSED = "passed"
    FLAGGED = "flagged"
    NEEDS_REVIEW = "needs_review"


class Label(StrEnum):
    """What a pair is known to be, supplied by the client for calibration. Never shown to
    a prompt, an evidence check, the policy or a reviewer."""

    FAITHFUL = "faithful"
    MISMATCH = "mismatch"


LABELS: tuple[str, ...] = tuple(label.value for label in Label)


OUTCOMES: tuple[str, ...] = tuple(outcome.value for outcome in Outcome)


class Role(StrEnum):
    TRANSLATOR = "translator"
    JUDGE = "judge"


# The judge's name when there is one judge (FAITHSCREEN_JUDGE_*): what its reviews store as
# `judge_name`, so that a panel's judges and the single judge are read alike.
SINGLE_JUDGE = "judge"


class PanelRule(StrEnum):
    """How a panel's judges' standing MISMATCHes combine (FAITHSCREEN_PANEL_RULE)."""

    UNANIMOUS = "unanimous"  # a standing MISMATCH from any judge flags the pair
    MAJORITY = "majority"  # only one from more than half of them does


PANEL_RULES: tuple[str, ...] = tuple(rule.value for rule in PanelRule)


class ReplyFormat(StrEnum):
    """How a reply is asked for (FAITHSCREEN_<ROLE>_REPLY_FORMAT; docs/contract.md)."""

    TEXT = "text"  # the contract as free text
    GRAMMAR = "grammar"  # the same contract, the server decoding by its GBNF grammar
    TOOL = "tool"  # a forced tool call `submit_review`
    JSON = "json"  # a JSON object under a JSON-schema response format


class Purpose(StrEnum):
    """Why an LLM call was made."""

    REVIEW = "review"
    FORMAT_RETRY = "format_retry"
    CONFIRMATION = "confirmation"


class LeanStatus(StrEnum):
    """What a Lean server said of a pair's `header + formal` (app/lean): it elaborates
    (`ok`), it does not (`error`: a message of severity error), the check ran out of time
    (`timeout`), or no answer could be read (`unavailable`)."""

    OK = "ok"
    ERROR = "error"
    TIMEOUT = "timeout"
    UNAVAILABLE = "unavailable"


# A screening's `lean_status` when no Lean server was asked (FAITHSCREEN_LEAN_SERVER_URL unset).
LEAN_NOT_CHECKED = "not_checked"


class Severity(StrEnum):
    """How much an evidence finding weighs in the policy."""

    FLAG = "flag"  # the pair is flagged, whatever the reviews say
    REVIEW = "review"  # the pair can never pass; a person must look


class ScreeningStatus(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"


class Priority(StrEnum):
    """Which screenings' jobs are claimed first: every due interactive one before any batch
    one (docs/api.md, Priorities)."""

    INTERACTIVE = "interactive"  # a single screening, an MCP call: someone waits
    BATCH = "batch"  # a batch's items


class JobStatus(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    # Failed too often: kept, with its last error, and never claimed again.
    DEAD = "dead"


class QueueStatus(StrEnum):
    """Where a queue item stands, for the people who decide it."""

    OPEN = "open"
    # Held by `claimed_by` until `claim_expires_at`; a lapsed claim counts as open.
    CLAIMED = "claimed"
    # A double-review item with its first decision in: anyone but the first person may
    # claim it (a claim keeps this status, held by `claimed_by`).
    AWAITING_SECOND = "awaiting_second"
    # The two decisions of a double review disagree: only an admin's adjudication ends it.
    DISPUTED = "disputed"
    RESOLVED = "resolved"


class DecisionKind(StrEnum):
    """What one row of a queue item's decision trail records."""

    DECISION = "decision"
    REOPEN = "reopen"
    # The decider takes their own decision back (undo); `withdraws_id` names it.
    WITHDRAWAL = "withdrawal"
    # An admin settles a disputed double review.
    ADJUDICATION = "adjudication"


class DecisionValue(StrEnum):
    """What a person can decide about a pair."""

    FAITHFUL = "faithful"
    MISMATCH = "mismatch"
    # The person's doubt: recorded, and the item goes back to the queue unresolved.
    UNSURE = "unsure"


@dataclass(frozen=True, slots=True)
class Pair:
    """One informal statement and one formal Lean 4 statement (plus optional header)."""

    informal: str
    formal: str
    header: str = ""
