"""Bodies of /v1/rescore (the diff is app.rescore.diff.Diff.as_json)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator

from app.api.calibration_schemas import SliceOut
from app.intake.requests import StorableText, UtcTime
from app.repositories.rescores import Scope


class RescoreRequest(BaseModel):
    """Exactly one of `batch_id`, `since` or `all: true`; `apply` writes the changes."""

    model_config = ConfigDict(extra="forbid")

    batch_id: StorableText | None = Field(default=None, max_length=36)
    since: UtcTime | None = Field(default=None, description="Created at or after (UTC).")
    all: bool = False
    apply: bool = False

    @model_validator(mode="after")
    def one_scope(self) -> RescoreRequest:
        chosen = [self.batch_id is not None, self.since is not None, self.all]
        if sum(chosen) != 1:
            raise ValueError("give exactly one scope: batch_id, since, or all: true")
        return self

    def scope(self) -> Scope:
        return Scope(batch_id=self.batch_id, since=self.since)


class VersionsOut(BaseModel):
    parser: str = Field(description="The contract parser (text and grammar replies).")
    policy: str
    evidence: str


class CalibrationMove(BaseModel):
    model_config = ConfigDict(extra="forbid")

    before: SliceOut
    after: SliceOut


class RescoreOut(BaseModel):
    # Every field of the diff is listed: one added to Diff.as_json alone fails, not vanishes.
    model_config = ConfigDict(extra="forbid")

    rescore_id: str | None = Field(description="The applied run; null for a dry run.")
    versions: VersionsOut = Field(description="What the run read and decided with.")
    readers: dict[str, int] = Field(
        default_factory=dict,
        description="Each reader the run read stored replies with (by the format each was "
        "asked in: contract-4 for text and grammar, tool-1, json-1) and how many it read. "
        "Empty in a run stored before it was recorded.",
    )
    considered: int
    unchanged: int = Field(description="Outcome and reasons stay (restamped included).")
    changed: int = Field(description="Outcome or reasons move.")
    restamped: int = Field(description="Outcome stays, decided again under new versions.")
    unversioned: int = Field(description="Differences with no new version: never applied.")
    incomplete: int = Field(description="The plan wanted a call never made: decided without.")
    skipped: dict[str, int] = Field(description="Nothing to replay, by cause.")
    transitions: dict[str, int] = Field(description="`from -> to` outcome moves.")
    by_transition: dict[str, dict[str, int]] = Field(
        description="Per move, the reasons it added (`+reason`) and removed (`-reason`)."
    )
    reasons_added: dict[str, int]
    reasons_removed: dict[str, int]
    readings: dict[str, int] = Field(description="`status/verdict -> status/verdict` moves.")
    applied: int = Field(description="Moved outcomes written (apply only).")
    restamps_applied: int = Field(description="Restamps written (apply only).")
    raced: int = Field(description="Changed by someone else meanwhile: left for a next run.")
    changed_ids: list[str] = Field(description="Changed screenings, at most 10,000.")
    changed_ids_truncated: bool
    calibration: CalibrationMove = Field(
        description="The labelled screenings in scope: matrix and rates under their "
        "outcome now (`before`) and as re-scored (`after`)."
    )
