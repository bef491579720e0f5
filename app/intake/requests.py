"""The screening request as clients send it (REST, batches, CLI files)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationInfo,
    field_validator,
)
from pydantic_core import PydanticCustomError


def refuse_unstorable(text: str) -> str:
    """Refuse text that no database here can store: PostgreSQL rejects U+0000 in text, and
    a lone surrogate (JSON may escape half a pair, "\\ud800") is not UTF-8 anywhere. Both
    would otherwise surface later, as a 500."""
    if "\x00" in text:
        raise ValueError("must not contain the NUL character (U+0000)")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        raise ValueError("must be valid Unicode: a lone surrogate is not") from error
    return text


StorableText = Annotated[str, AfterValidator(refuse_unstorable)]


def in_utc(moment: datetime) -> datetime:
    """A client's time in UTC: with `Z` or an offset, or with none, which means UTC.

    Refuses a time the calendar cannot hold once in UTC: `0001-01-01T00:00:00+14:00` falls
    in year 0 there and `9999-12-31T23:59:59-14:00` in year 10000, so no query could use
    either (it would surface as a 500)."""
    if moment.tzinfo is None or moment.utcoffset() is None:
        return moment.replace(tzinfo=UTC)
    try:
        return moment.astimezone(UTC)
    except OverflowError as error:
        raise ValueError("must fall between 0001-01-01 and 9999-12-31 in UTC") from error


UtcTime = Annotated[datetime, AfterValidator(in_utc)]
# A statement must say something: empty or whitespace-only text is rejected (422).
Statement = Annotated[StorableText, StringConstraints(min_length=1, pattern=r"\S")]


# A tag slices calibration and reports: `source:minif2f`, `split/test`, `v2.1`.
TAG_ALPHABET = "A-Za-z0-9_.:/-"  # as a regular-expression character class body
MAX_TAG_LENGTH = 64
TAG_PATTERN = f"^[{TAG_ALPHABET}]{{1,{MAX_TAG_LENGTH}}}$"
MAX_TAGS = 16
Tag = Annotated[str, StringConstraints(pattern=TAG_PATTERN)]


class Options(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    confirmations: int | None = Field(
        default=None,
        ge=0,
        le=5,
        description=(
            "Re-reviews of a mismatch before it stands (default FAITHSCREEN_CONFIRMATIONS)."
        ),
    )
    panel_rule: Literal["unanimous", "majority"] | None = Field(
        default=None,
        description=(
            "How a judge panel's MISMATCHes combine (default FAITHSCREEN_PANEL_RULE); only "
            "with a panel (FAITHSCREEN_JUDGES)."
        ),
    )
    priority: Literal["interactive", "batch"] | None = Field(
        default=None,
        description=(
            "Which work is claimed first: every due interactive screening before any batch "
            "one. Default: interactive for a single screening, batch for a batch's items. "
            "Any key may choose batch; only an admin key may make a batch's items interactive."
        ),
    )


class SuppliedReplies(BaseModel):
    """Replies the client already has: parsed and decided as if a provider had sent them."""

    model_config = ConfigDict(extra="forbid", strict=True)

    translator: StorableText = Field(description="The translator's reply, verbatim.")
    # Before `judge`: its validator reads whether these were given.
    judges: dict[str, StorableText] | None = Field(
        default=None,
        description="With a judge panel (FAITHSCREEN_JUDGES): each judge's reply, by name.",
    )
    judge: StorableText | None = Field(
        default=None,
        validate_default=True,
        description="The judge's reply, verbatim (without a judge panel).",
    )

    @field_validator("judge")
    @classmethod
    def _one_judge_or_a_panel(cls, value: str | None, info: ValidationInfo) -> str | None:
        # Which of the two a server takes depends on its panel (checked at intake); one of
        # them must be there.
        # (`judges` is left out of `info.data` when it failed: that error is enough.)
        if value is None and "judges" in info.data and info.data["judges"] is None:
            raise PydanticCustomError("missing", "Field required")
        return value


class ScreeningRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    informal: Statement = Field(description="The informal statement.")
    formal: Statement = Field(description="The Lean 4 statement.")
    header: StorableText = Field(default="", description="Imports, `open` and `set_option` lines.")
    external_id: StorableText | None = Field(
        default=None, max_length=512, description="The client's own id for this pair."
    )
    options: Options = Field(default_factory=Options)
    replies: SuppliedReplies | None = Field(
        default=None, description="Supply both replies to screen with no LLM call."
    )
    # Validated as its value (strict mode takes no string for an enum), stored as such.
    label: Literal["faithful", "mismatch"] | None = Field(
        default=None,
        description="What the pair is known to be, for calibration. Stored with the "
        "screening; never shown to a model, the evidence checks, the policy or a reviewer.",
    )
    tags: list[Tag] = Field(
        default_factory=list,
        max_length=MAX_TAGS,
        description=f"At most {MAX_TAGS} tags, each 1-64 letters, digits and `_.:/-`, "
        "to slice calibration and reports by.",
    )


def plain_message(error: Mapping[str, Any]) -> str:
    """A refused field's message, for every intake path (REST, batches, pairs files, the
    review page): what to send instead, where pydantic's wording names its internals ("at
    least 1 item after validation" of a string, "match pattern '\\S'", a schema's class
    name). The error's `type` stays pydantic's code, for programs."""
    kind, context = error.get("type"), error.get("ctx") or {}
    if kind in ("too_short", "string_too_short") and context.get("min_length") == 1:
        return "must not be empty"
    if kind == "string_pattern_mismatch" and context.get("pattern") == r"\S":
        return "must contain a character other than white space"
    if kind == "model_type":
        return "must be one JSON object"
    if kind == "too_long" and "max_length" in context:  # "Value should have at most 512 items"
        unit = "items" if context.get("field_type") == "List" else "characters"
        return f"must be at most {context['max_length']} {unit}, not {context['actual_length']}"
    return str(error.get("msg", ""))
