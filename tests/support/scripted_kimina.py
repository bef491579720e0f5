"""A scripted Kimina-compatible Lean server on a real loopback socket: it answers
`POST /api/check` with bodies recorded from Kimina's and the Lean REPL's own tests
(tests/data/kimina, README there), and `GET /api/openapi.json` with a version.

    with ScriptedKimina() as lean:
        lean.script("unknown_thing", [Recorded("unknown_identifier.json")])
        ...  # FAITHSCREEN_LEAN_SERVER_URL=lean.base_url

A check is answered by the first script whose marker occurs in the snippet's code and
that has steps left; with none, `default` answers (a clean sorry with its goal). Built on
the scripted OpenAI-compatible server's HTTP machinery (its steps: HttpError, RawBody,
Hang, Reset work here as there).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.support.scripted_openai import (
    HttpError,
    RawBody,
    RecordedRequest,
    ScriptedOpenAI,
    Step,
)

DATA = Path(__file__).parent.parent / "data" / "kimina"
VERSION = "2.0.0"  # kimina-lean-server's server/__version__.py at the recorded commit


def recorded(name: str) -> str:
    return (DATA / name).read_text(encoding="utf-8")


@dataclass(frozen=True)
class Recorded:
    """A recorded 200 body, its SNIPPET_ID replaced by the request's snippet id (and, for
    a hostile variant, `edit`'s first text by its second)."""

    name: str
    edit: tuple[str, str] | None = None

    def body(self, snippet_id: str) -> str:
        text = recorded(self.name)
        if self.edit is not None:
            assert self.edit[0] in text, self.edit
            text = text.replace(*self.edit)
        return text.replace("SNIPPET_ID", snippet_id)


KiminaStep = Recorded | Step


def too_busy() -> HttpError:
    """Kimina's 429 when no REPL is free (no Retry-After: Kimina sends none)."""
    return HttpError(429, recorded("no_repl_429.json"))


class ScriptedKimina(ScriptedOpenAI):
    def __init__(self, *, api_key: str | None = None, version: str | None = VERSION) -> None:
        super().__init__(default=self._default)
        self.api_key = api_key
        self.version = version
        self.fallback: KiminaStep = Recorded("sorry_goal.json")
        self._scripts: list[tuple[str, deque[KiminaStep]]] = []
        self.checks: list[RecordedRequest] = []

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def script_code(self, marker: str, steps: Iterable[KiminaStep]) -> None:
        with self._lock:
            self._scripts.append((marker, deque(steps)))

    def _select(self, request: RecordedRequest) -> tuple[Step, bool]:
        if request.method == "GET" and request.path == "/api/openapi.json":
            return self._openapi(), False
        if request.method != "POST" or request.path not in ("/api/check", "/api/check/"):
            return HttpError(404, '{"detail":"Not Found"}'), False
        with self._lock:
            self.checks.append(request)
            self._lock.notify_all()
        if self.api_key is not None and request.headers.get("authorization") != (
            f"Bearer {self.api_key}"
        ):
            return HttpError(401, recorded("invalid_key_401.json")), False
        step = self._next_step(request)
        # The fallback answers after `latency`, as the scripted provider's default does.
        return self._resolve(step or self.fallback, request), step is None

    def _next_step(self, request: RecordedRequest) -> KiminaStep | None:
        code = _snippet(request).get("code", "")
        with self._lock:
            for marker, steps in self._scripts:
                if steps and marker in code:
                    return steps.popleft()
        return None

    def _default(self, request: RecordedRequest) -> Step:
        return self._resolve(self.fallback, request)

    def _resolve(self, step: KiminaStep, request: RecordedRequest) -> Step:
        if isinstance(step, Recorded):
            snippet_id = str(_snippet(request).get("id", ""))
            return RawBody(step.body(snippet_id))
        return step

    def _openapi(self) -> Step:
        if self.version is None:
            return HttpError(404, '{"detail":"Not Found"}')
        return RawBody('{"openapi":"3.1.0","info":{"title":"Kimina Lean Server API",'
                       f'"version":"{self.version}"}},"paths":{{}}}}')  # fmt: skip

    def wait_for_checks(self, count: int, timeout: float = 120.0) -> list[RecordedRequest]:
        with self._lock:
            if not self._lock.wait_for(lambda: len(self.checks) >= count, timeout):
                raise TimeoutError(f"{len(self.checks)} of {count} checks in {timeout} s")
            return list(self.checks)


def _snippet(request: RecordedRequest) -> dict[str, Any]:
    body = request.json if isinstance(request.json, dict) else {}
    snippets = body.get("snippets")
    if isinstance(snippets, list) and snippets and isinstance(snippets[0], dict):
        return snippets[0]
    return {}
