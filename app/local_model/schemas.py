"""What a started local server is, and how it is started."""

from __future__ import annotations

from pydantic import BaseModel, Field

from app.vocabulary import Role

DEFAULT_PORT = 8091
DEFAULT_ALIAS = "gemma-3-270m"


class ServerOptions(BaseModel):
    port: int = Field(default=DEFAULT_PORT, ge=1, le=65535)
    alias: str = DEFAULT_ALIAS
    # The model's own window is 32k tokens; 8k holds every prompt of the shared pairs with
    # room for the reply, and makes an over-long prompt easy to show.
    context_tokens: int = Field(default=8192, ge=256)
    # Slots: the context is split between them, so each request gets context_tokens/parallel.
    parallel: int = Field(default=1, ge=1)
    threads: int = Field(default=2, ge=1)
    start_timeout_seconds: float = Field(default=120, gt=0)


# What `start` sets besides where the server is, so that a screening right after it takes
# seconds a call rather than minutes (with the defaults, 2,048 tokens re-asked at 4,096 and
# 8,192 and 16 calls queued at a one-slot server, one pair ran 15 min without finishing).
# A reply in the contract's shape fits in 48 tokens; the cap bounds the pretrained model's
# rambling, and one format re-ask doubles it, as for any provider.
REPLY_TOKENS = {"MAX_TOKENS": "48", "MAX_TOKENS_CEILING": "96"}
FORMAT_RETRIES = 1


class LocalServer(BaseModel):
    pid: int
    port: int
    model: str
    # One call at a time per slot: more would only queue at the server, each call's latency
    # then being time spent waiting behind the others.
    slots: int = Field(default=1, ge=1)
    # When the process started (clock ticks after boot, /proc/PID/stat field 22): with the
    # command line, what tells it from a later process given the same pid. None in a state
    # file written before it was kept: such a pid is never signalled.
    start_ticks: int | None = None

    @property
    def root_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        return f"{self.root_url}/v1"

    def environment(self) -> dict[str, str]:
        """The settings that point both roles at this server, and fit its pace."""
        lines: dict[str, str] = {}
        for role in (Role.TRANSLATOR, Role.JUDGE):
            prefix = f"FAITHSCREEN_{role.value.upper()}_"
            lines[prefix + "BASE_URL"] = self.base_url
            lines[prefix + "MODEL"] = self.model
            lines |= {prefix + name: value for name, value in REPLY_TOKENS.items()}
        lines["FAITHSCREEN_LLM_CONCURRENCY"] = str(self.slots)
        lines["FAITHSCREEN_FORMAT_RETRIES"] = str(FORMAT_RETRIES)
        return lines
