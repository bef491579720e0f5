"""Bodies of the calibration endpoints. They validate what app/calibration builds and
forbid unknown keys, so a field added on one side alone fails instead of vanishing."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RateOut(Strict):
    """k of n, with the share and its 95% Wilson interval (all three null when n = 0)."""

    k: int
    n: int
    rate: float | None
    low: float | None
    high: float | None


class OutcomeCounts(Strict):
    passed: int
    flagged: int
    needs_review: int


class MatrixOut(Strict):
    faithful: OutcomeCounts = Field(description="Screenings labelled faithful, by outcome.")
    mismatch: OutcomeCounts = Field(description="Screenings labelled mismatch, by outcome.")


class RatesOut(Strict):
    false_pass: RateOut = Field(description="Mismatch passed, over mismatch.")
    false_alarm: RateOut = Field(description="Faithful not passed, over faithful.")
    false_flag: RateOut = Field(description="Faithful flagged, over faithful.")
    flag_precision: RateOut = Field(description="Mismatch among flagged.")
    pass_precision: RateOut = Field(
        description="Faithful among passed: what a pipeline keeping passed pairs relies on."
    )
    automation: RateOut = Field(description="Passed or flagged, over labelled.")


class SliceOut(Strict):
    labelled: int = Field(description="Labelled screenings that are done (the matrix's total).")
    matrix: MatrixOut
    rates: RatesOut


class ConfigOut(Strict):
    translator_model: str | None = Field(description="`supplied` for supplied replies.")
    judge_model: str | None
    prompt_version: str | None
    parser_version: str | None
    policy_version: str | None
    evidence_version: str | None
    confirmations: int
    count: int = Field(description="Labelled, done screenings decided under it.")


class CostOut(Strict):
    screenings: int
    calls_per_screening: float | None = Field(description="Stored calls, every attempt.")
    prompt_tokens_per_screening: float | None
    completion_tokens_per_screening: float | None
    latency_p50_ms: float | None = Field(
        description="Per call answered by a provider (supplied replies and calls never "
        "answered have no latency)."
    )
    latency_p95_ms: float | None


class JudgeOut(Strict):
    """One judge over the labelled pairs it judged: its own verdict (its first `ok` reply),
    never the pair's outcome."""

    models: list[str] = Field(description="The models it answered with (`supplied`).")
    pairs: int
    catches: RateOut = Field(description="Said MISMATCH, over the pairs labelled mismatch.")
    faithful: RateOut = Field(description="Said FAITHFUL, over the pairs labelled faithful.")
    unreadable: RateOut = Field(description="No `ok` reply, over every pair it judged.")
    calls_per_pair: float | None
    tokens_per_pair: float | None
    prompt_tokens_per_pair: float | None
    completion_tokens_per_pair: float | None


class CalibrationOut(SliceOut):
    """Over the batch's labelled screenings that are done, by their current outcome (after
    any applied re-scoring)."""

    batch_id: str
    unlabelled: int = Field(description="Screenings of the batch without a label.")
    pending: int = Field(description="Labelled screenings not done yet.")
    partial: bool = Field(description="True while some labelled screenings are not done.")
    by_tag: dict[str, SliceOut]
    by_kind: dict[str, SliceOut] = Field(
        description="By the formal statement's first declaration: `theorem` (theorem, "
        "lemma, example), `definition` (def, abbrev), `other`."
    )
    needs_review_reasons: dict[str, int] = Field(
        description="Reason code -> labelled needs_review screenings with it."
    )
    configs: list[ConfigOut] = Field(description="Most used first.")
    cost: CostOut
    by_judge: dict[str, JudgeOut] = Field(
        default_factory=dict,
        description="By judge name (`judge` for the single judge, each panel judge's own "
        "name): which judge earns its cost.",
    )
    by_lean_status: dict[str, SliceOut] = Field(
        default_factory=dict,
        description="By the screening's `lean_status` (`ok`, `error`, `timeout`, "
        "`unavailable`, `not_checked` without a Lean server): each "
        "status with labelled, done screenings.",
    )
    non_evidential: dict[str, int] = Field(
        default_factory=dict,
        description="`translator`, `judge` or `judge:<name>` -> labelled, done screenings in "
        "which its model was marked not evidential (FAITHSCREEN_*_EVIDENTIAL=false): its "
        "FAITHFUL never passes a pair. Empty when every model was evidence.",
    )


class Discordant(Strict):
    a_only: int = Field(description="Pairs where the error happens under A only.")
    b_only: int = Field(description="Pairs where the error happens under B only.")


class RatePairOut(Strict):
    a: RateOut
    b: RateOut
    difference: float | None = Field(description="b − a; null when there is no pair.")
    discordant: Discordant
    p_value: float = Field(
        description="Exact two-sided McNemar test on the discordant pairs (1.0 with none)."
    )


class ComparedRates(Strict):
    false_pass: RatePairOut = Field(description="Over the common mismatch pairs.")
    false_alarm: RatePairOut = Field(description="Over the common faithful pairs.")


class ComparisonOut(Strict):
    """Screenings of the same pair (informal, formal, header) labelled alike in both
    batches and done in both; a pair screened twice in one batch counts once (its first)."""

    a: str
    b: str
    common: int
    label_conflicts: int = Field(description="Pairs labelled differently: left out.")
    rates: ComparedRates
    prompt_versions: dict[str, list[str]] = Field(
        default_factory=dict,
        description="Batch id (`a`'s, `b`'s) -> the prompt versions its done, labelled "
        "screenings were asked under (`prompts-2`, `prompts-2+lean-goal-1` with the "
        "elaborated Lean goal: docs/lean.md); empty for supplied replies.",
    )
