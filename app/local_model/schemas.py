"""What a started local server is, and how it is started."""

from __future__ import annotations

from pydantic import BaseModel, Field

from app.contract.grammar import worst_case_tokens
from app.vocabulary import Role

DEFAULT_PORT = 8091
DEFAULT_ALIAS = "smollm2-135m-instruct"


class ServerOptions(BaseModel):
    port: int = Field(default=DEFAULT_PORT, ge=1, le=65535)
    alias: str = DEFAULT_ALIAS
    # The model's own window is 8k tokens; it holds every prompt of the shared pairs with
    # room for the reply, and makes an over-long prompt easy to show.
    context_tokens: int = Field(default=8192, ge=256)
    # Slots: the context is split between them, so each request gets context_tokens/parallel.
    parallel: int = Field(default=1, ge=1)
    threads: int = Field(default=2, ge=1)
    start_timeout_seconds: float = Field(default=120, gt=0)


# What `start` sets besides where the server is. Both roles reply under the contract's
# grammar (app/contract/grammar.py): the model hardly ever writes the contract freely, and
# under the grammar always (docs/local-model.md has the counts). The caps are the
# grammar's worst case, so no reply can be cut (a cap re-asked with more would only wait
# for the same reply again); one format re-ask, as the grammar leaves little to re-ask for.
REPLY_FORMAT = "grammar"
FORMAT_RETRIES = 1
# The model answers at chance (issue 36: FAITHFUL to 6 of 17 mismatches, once readable): its
# verdicts are stored and shown, its MISMATCH flags, but its FAITHFUL never passes a pair.
EVIDENTIAL = "false"
NOT_EVIDENTIAL_WHY = (
    "both roles are marked FAITHSCREEN_*_EVIDENTIAL=false: a 135M model's verdicts are at "
    "chance, so its FAITHFUL never passes a pair (those go to needs_review); its MISMATCH "
    "still flags. Point a role at a model you have measured to screen for real"
)


def reply_caps(role: Role) -> dict[str, str]:
    """MAX_TOKENS and its ceiling for `role`: the most tokens a reply in its grammar takes."""
    cap = str(worst_case_tokens(role))
    return {"MAX_TOKENS": cap, "MAX_TOKENS_CEILING": cap}


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
            lines |= {prefix + name: value for name, value in reply_caps(role).items()}
            lines[prefix + "REPLY_FORMAT"] = REPLY_FORMAT
            lines[prefix + "EVIDENTIAL"] = EVIDENTIAL
        lines["FAITHSCREEN_LLM_CONCURRENCY"] = str(self.slots)
        lines["FAITHSCREEN_FORMAT_RETRIES"] = str(FORMAT_RETRIES)
        return lines
