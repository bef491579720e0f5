"""Configuration: one pydantic-settings class, read from FAITHSCREEN_* environment variables.

Built by the cached `get_settings()`, never at import time, so tests and the CLI can
change the environment first.
"""

from __future__ import annotations

import ipaddress
import os
import re
from functools import lru_cache
from typing import Any, Literal, Self

from pydantic import BaseModel, Field, SecretStr, field_validator, model_validator
from pydantic.fields import FieldInfo
from pydantic_core import PydanticCustomError
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from app.vocabulary import SINGLE_JUDGE, PanelRule, Role
from faithscreen_client.credentials import mask_url_credentials

DEFAULT_DATABASE_URL = "sqlite:///faithscreen.db"
# Where the migrations are, when not beside the package (the Docker image copies them
# there): read by app.db.migrate, outside these settings, so no command imports Alembic
# to learn the name.
MIGRATIONS_DIR_ENV = "FAITHSCREEN_MIGRATIONS_DIR"


class ProviderSettings(BaseModel):
    """One role's OpenAI-compatible endpoint: FAITHSCREEN_TRANSLATOR_* / FAITHSCREEN_JUDGE_*."""

    base_url: str | None = None
    model: str | None = None
    api_key: SecretStr | None = None
    max_tokens: int = Field(default=2048, ge=1)
    # A `length` finish is asked again with max_tokens doubled, up to this ceiling.
    max_tokens_ceiling: int = Field(default=16384, ge=1)
    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    # Read timeout per attempt; reasoning models may think for minutes.
    timeout_seconds: float = Field(default=300.0, gt=0)
    connect_timeout_seconds: float = Field(default=5.0, gt=0)
    # Transport-level retries (connection errors, timeouts, 408/409/429/5xx).
    max_retries: int = Field(default=3, ge=0, le=10)
    # This provider's budget (base URL + model), shared by every process on the database
    # (app/budgets; docs/operations.md): requests per minute, tokens per minute (prompt +
    # completion, estimated before a call and corrected from its `usage`) and calls in
    # flight at once. 0: no such limit. Every process should be given the same numbers.
    requests_per_minute: int = Field(default=0, ge=0)
    tokens_per_minute: int = Field(default=0, ge=0)
    max_in_flight: int = Field(default=0, ge=0)
    # The longest pause a Retry-After (or retry-after-ms) from this provider may impose; a
    # longer one is cut to this, so one answer cannot park every screening for days.
    max_retry_after_seconds: float = Field(default=300.0, ge=0, le=86400)
    # Bytes of one response body read from this provider; reading stops there and the call
    # fails "reply too large" (never passes). 1 MiB: four times a supplied reply's cap
    # (FAITHSCREEN_MAX_REPLY_BYTES), room for such a reply however JSON escapes it.
    max_response_bytes: int = Field(default=1024 * 1024, ge=1)
    # How the reply is asked for: "text", the contract as free text; "grammar", the same
    # contract with the server constraining decoding by its GBNF grammar (app/contract/
    # grammar.py), sent in `grammar_field`; "tool", a forced tool call `submit_review`;
    # "json", a JSON-schema response format (app/llm/constraint.py). Each is read by its
    # own strict reader (app/contract/formats.py; docs/contract.md).
    reply_format: Literal["text", "grammar", "tool", "json"] = "text"
    # The request field a grammar goes in: "grammar" (llama.cpp), "structured_outputs"
    # (vLLM 0.12 and later, as {"grammar": ...}), "guided_grammar" (older vLLM), "ebnf"
    # (SGLang). Only llama.cpp's has been tried against a real server here.
    grammar_field: Literal["grammar", "structured_outputs", "guided_grammar", "ebnf"] = "grammar"
    # False: this model's verdicts are not evidential (a small model that answers at chance).
    # Its replies are stored, read and shown as usual and its MISMATCH still flags, but its
    # FAITHFUL never lets a pair pass (`<role>_non_evidential`). Each review records it.
    evidential: bool = True

    def missing(self, role: Role) -> list[str]:
        """The environment variables that must still be set for this role to be usable."""
        prefix = f"FAITHSCREEN_{role.value.upper()}_"
        return [prefix + name for name in ("BASE_URL", "MODEL") if not getattr(self, name.lower())]


# A panel judge's name: FAITHSCREEN_JUDGE_<NAME>_MODEL must not read as a single judge's
# setting, so a name may not be a word one of those begins with (FAITHSCREEN_JUDGE_MAX_TOKENS).
JUDGE_NAME = re.compile(r"[a-z][a-z0-9_]{0,31}")
RESERVED_JUDGE_NAMES = frozenset(
    {
        "base",
        "model",
        "api",
        "max",
        "temperature",
        "timeout",
        "connect",
        "requests",
        "tokens",
        "evidential",
        "reply",
        "grammar",
    }
)
JUDGES_ENV = "FAITHSCREEN_JUDGES"
# The type of a refused panel setting: its message names the variable (cli/environment.py).
PANEL_ERROR = "panel_setting"


def judge_prefix(name: str) -> str:
    """FAITHSCREEN_JUDGE_<NAME>_: where a panel judge's settings are read."""
    return f"FAITHSCREEN_JUDGE_{name.upper()}_"


def judge_names_of(value: str) -> list[str]:
    """The names in FAITHSCREEN_JUDGES (comma-separated, blanks around a name dropped)."""
    return [name.strip() for name in value.split(",") if name.strip()]


class PanelSource(PydanticBaseSettingsSource):
    """Each judge named in FAITHSCREEN_JUDGES configured as the single judge is, under its
    upper-cased name (FAITHSCREEN_JUDGE_A_BASE_URL): a name no fixed field can carry."""

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False  # everything is read in __call__

    def __call__(self) -> dict[str, Any]:
        environ = {name.upper(): value for name, value in os.environ.items()}
        names = judge_names_of(environ.get(JUDGES_ENV, ""))
        panel = {name: _provider_values(environ, judge_prefix(name)) for name in names}
        return {"panel_providers": panel} if panel else {}


class LeanSettings(BaseModel):
    """An optional Kimina Lean Server (FAITHSCREEN_LEAN_*, docs/lean.md): unset, no pair is
    sent to Lean and every screening says `lean_status: not_checked`."""

    # The server's root, as kimina-client's api_url: checks go to {server_url}/api/check.
    server_url: str | None = None
    server_api_key: SecretStr | None = None
    # The `timeout` each check asks Kimina for (its REPL's limit per command).
    timeout_seconds: int = Field(default=60, ge=1, le=3600)
    # Checks in flight at once from one process (Kimina answers 429 when no REPL is free).
    max_in_flight: int = Field(default=4, ge=1, le=256)


def _provider_values(environ: dict[str, str], prefix: str) -> dict[str, str]:
    fields = ProviderSettings.model_fields
    return {f: environ[prefix + f.upper()] for f in fields if prefix + f.upper() in environ}


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="FAITHSCREEN_",
        env_nested_delimiter="_",
        env_nested_max_split=1,
        extra="ignore",
    )

    database_url: str = DEFAULT_DATABASE_URL
    translator: ProviderSettings = ProviderSettings()
    judge: ProviderSettings = ProviderSettings()
    # ---- Judge panels ----
    # "a,b,c": a panel of named judges, each configured under FAITHSCREEN_JUDGE_<NAME>_*;
    # empty: the one judge of FAITHSCREEN_JUDGE_*.
    judges: str = ""
    # How the panel's standing MISMATCHes combine: any flags ("unanimous"), or only those
    # of more than half of the judges ("majority"); per request `options.panel_rule`.
    panel_rule: Literal["unanimous", "majority"] = "unanimous"
    # Filled from FAITHSCREEN_JUDGE_<NAME>_* by PanelSource, one entry per named judge.
    panel_providers: dict[str, ProviderSettings] = Field(default_factory=dict)
    # ---- Lean (FAITHSCREEN_LEAN_SERVER_URL, ...): see LeanSettings ----
    lean: LeanSettings = LeanSettings()
    confirmations: int = Field(default=0, ge=0, le=5)
    format_retries: int = Field(default=2, ge=0, le=5)
    # In-flight calls per provider per process (each process's own cap; the deployment's
    # shared one is FAITHSCREEN_<ROLE>_MAX_IN_FLIGHT).
    llm_concurrency: int = Field(default=16, ge=1, le=1024)
    max_statement_bytes: int = Field(default=64 * 1024, ge=1)
    # UTF-8 bytes of each supplied reply (`replies.translator`, `replies.judge`); more: 413.
    max_reply_bytes: int = Field(default=256 * 1024, ge=1)
    # Items one POST /v1/batches may carry; a longer batch is refused (413) as a whole.
    max_batch_items: int = Field(default=10_000, ge=1)
    # Bytes one POST /v1/batches body may hold; reading stops there and the batch is
    # refused (413): a runaway body must not fill the API's memory.
    max_batch_bytes: int = Field(default=64 * 1024 * 1024, ge=1)
    # Bytes any other request body may hold, counted as it is read (413 past it). Room for
    # the largest valid single request: three statements at FAITHSCREEN_MAX_STATEMENT_BYTES,
    # even with every character JSON-escaped, and both supplied replies.
    max_request_bytes: int = Field(default=4 * 1024 * 1024, ge=1)
    # A request's headers and body must arrive within this many seconds of its first byte
    # (of the connection opening, for its first request), however slowly the bytes trickle
    # in; past it the connection is answered 408 and closed.
    client_timeout_seconds: float = Field(default=30.0, gt=0)
    # ---- Priorities, caps and idempotency (docs/api.md, "Priorities and caps") ----
    # Screenings one key may have waiting or running (queued or running jobs), all
    # priorities together; past it intake answers 429 `key_outstanding_cap`. 0: no cap.
    key_max_outstanding: int = Field(default=100_000, ge=0)
    # Of those, interactive ones (claimed before any batch work); past it 429
    # `key_interactive_cap`. 0: no cap.
    key_max_outstanding_interactive: int = Field(default=1_000, ge=0)
    # How long a single screening's Idempotency-Key is kept: a repeat within this many
    # seconds gets the first screening; after it, the key makes a new one.
    screening_idempotency_seconds: float = Field(default=86_400.0, gt=0)
    job_lease_seconds: float = Field(default=60.0, gt=0)
    # Done jobs older than this many days are removed by the workers (0: kept for ever).
    job_retention_days: float = Field(default=7.0, ge=0)
    # PostgreSQL connections each process holds (pool) and may open beyond it (overflow):
    # docs/operations.md, Connections, has the arithmetic against max_connections.
    database_pool_size: int = Field(default=10, ge=1)
    database_max_overflow: int = Field(default=20, ge=0)
    # `faithscreen worker` serves its own process metrics on this port (0: not served),
    # without a key: bound to FAITHSCREEN_WORKER_METRICS_HOST (loopback by default).
    worker_metrics_port: int = Field(default=0, ge=0, le=65535)
    worker_metrics_host: str = "127.0.0.1"
    # Screenings one worker process runs at once (0: twice FAITHSCREEN_LLM_CONCURRENCY, so
    # both roles' calls can keep every provider slot busy).
    worker_capacity: int = Field(default=0, ge=0)
    # How long `serve` waits on SIGTERM for running screenings before releasing them.
    shutdown_grace_seconds: float = Field(default=10.0, ge=0)
    # ---- Human review ----
    # API keys on every /v1 endpoint. "off" makes every request an admin named "anonymous";
    # `serve` refuses it unless it binds to a loopback address.
    auth: Literal["on", "off"] = "on"
    # The share of passed and flagged outcomes sampled into the review queue as audits
    # (every needs_review is queued): how the false-pass rate gets measured.
    audit_rate: float = Field(default=0.02, ge=0.0, le=1.0)
    # How long a reviewer's claim on a queue item lasts before another may take it.
    review_claim_seconds: float = Field(default=1800.0, gt=0)
    # Which queue items a person decides without seeing the models (outcome, reasons,
    # evidence, reviews, rulings) until the item is resolved: "audit" (the sampled passed
    # and flagged screenings), "all", or "off". Admins always see everything.
    review_blind: Literal["audit", "all", "off"] = "audit"
    # How long the person who decided may withdraw the decision (POST /v1/queue/{id}/undo).
    review_undo_seconds: float = Field(default=120.0, ge=0)
    # The share of queue items sampled to need two decisions by different people; 0 keeps a
    # team of one from ever being stuck (0.1 is a good start for a team).
    review_double_rate: float = Field(default=0.0, ge=0.0, le=1.0)
    # ---- Operations ----
    # "json": one JSON object per log line (time, level, logger, message, ids) for collectors.
    log_format: Literal["text", "json"] = "text"
    # ---- Review pages behind a proxy ----
    # The review pages' cookies carry Secure: "auto" on a request that came over https (as
    # uvicorn sees it, trusting X-Forwarded-Proto only from FAITHSCREEN_FORWARDED_ALLOW_IPS),
    # "always" on every response (for a TLS proxy `serve` cannot tell from a client).
    cookie_secure: Literal["auto", "always"] = "auto"
    # The proxies whose X-Forwarded-Proto and X-Forwarded-For `serve` believes: addresses or
    # networks, comma-separated, or "*" for any (uvicorn's forwarded_allow_ips and default).
    forwarded_allow_ips: str = "127.0.0.1,::1"
    # How long a sign-in to the review pages lasts; signing out or revoking the key ends it.
    review_session_seconds: float = Field(default=12 * 3600.0, gt=0)

    @field_validator("forwarded_allow_ips")
    @classmethod
    def _addresses_or_networks(cls, value: str) -> str:
        # uvicorn silently treats a mistyped entry as a name no client has: refuse it here.
        entries = [entry.strip() for entry in value.split(",")]
        if entries == ["*"]:
            return value
        for entry in entries:
            try:
                ipaddress.ip_network(entry, strict=False)
            except ValueError:
                raise ValueError(f"{entry!r} is not an IP address or network (or '*')") from None
        return value

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        panel = PanelSource(settings_cls)
        return init_settings, env_settings, panel, dotenv_settings, file_secret_settings

    @model_validator(mode="after")
    def _panel_complete(self) -> Self:
        names = judge_names_of(self.judges)
        for name in names:
            if not JUDGE_NAME.fullmatch(name) or name in RESERVED_JUDGE_NAMES:
                raise _panel_error(
                    f"{JUDGES_ENV}={self.judges!r} is not accepted: judge {name!r} must match "
                    f"[a-z][a-z0-9_]{{0,31}} and not be one of "
                    f"{', '.join(sorted(RESERVED_JUDGE_NAMES))}"
                )
        if len(set(names)) != len(names):
            raise _panel_error(
                f"{JUDGES_ENV}={self.judges!r} is not accepted: a judge is named twice"
            )
        for name in names:
            provider = self.panel_providers.get(name, ProviderSettings())
            for field in ("base_url", "model"):
                if not getattr(provider, field):
                    variable = judge_prefix(name) + field.upper()
                    raise _panel_error(
                        f"{variable} is not set: judge {name!r} of {JUDGES_ENV} needs a base URL "
                        "and a model"
                    )
        return self

    @property
    def panel(self) -> tuple[str, ...]:
        """The panel's judge names in FAITHSCREEN_JUDGES order; () with a single judge."""
        return tuple(judge_names_of(self.judges))

    def judge_names(self) -> tuple[str, ...]:
        """The judges a new screening is screened by: the panel, or the single judge."""
        return self.panel or (SINGLE_JUDGE,)

    def judge_provider(self, name: str) -> ProviderSettings:
        """A judge's provider: the panel's judge of that name, or FAITHSCREEN_JUDGE_*."""
        if self.panel:
            return self.panel_providers.get(name, ProviderSettings())
        return self.judge

    @property
    def default_panel_rule(self) -> PanelRule:
        return PanelRule(self.panel_rule)

    def provider(self, role: Role) -> ProviderSettings:
        return self.translator if role is Role.TRANSLATOR else self.judge

    def missing_providers(self) -> list[str]:
        # A panel's judges are complete, or the settings were refused.
        roles = [Role.TRANSLATOR] if self.panel else list(Role)
        return [name for role in roles for name in self.provider(role).missing(role)]

    @property
    def effective_worker_capacity(self) -> int:
        """FAITHSCREEN_WORKER_CAPACITY, or twice FAITHSCREEN_LLM_CONCURRENCY when it is 0."""
        return self.worker_capacity or 2 * self.llm_concurrency

    def masked(self) -> dict[str, Any]:
        """The effective configuration with every secret masked, for `faithscreen config`:
        derived defaults as the values they stand for (worker_capacity 0 shows as 32)."""
        data = self.model_dump(mode="json")
        data["worker_capacity"] = self.effective_worker_capacity
        data["database_url"] = mask_url_credentials(self.database_url)
        for role in Role:
            provider = self.provider(role)
            data[role.value]["api_key"] = "**********" if provider.api_key else None
            if provider.base_url:
                data[role.value]["base_url"] = mask_url_credentials(provider.base_url)
        if self.lean.server_url:
            data["lean"]["server_url"] = mask_url_credentials(self.lean.server_url)
        for name, provider in self.panel_providers.items():
            shown = data["panel_providers"][name]
            shown["api_key"] = "**********" if provider.api_key else None
            if provider.base_url:
                shown["base_url"] = mask_url_credentials(provider.base_url)
        return data


def _panel_error(message: str) -> PydanticCustomError:
    return PydanticCustomError(PANEL_ERROR, message.replace("{", "{{").replace("}", "}}"))


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return Settings()
