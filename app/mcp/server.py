"""The MCP server's tools, on the official SDK's MCPServer. Every tool that needs the
service goes through `faithscreen_client.AsyncClient` (the API's own checks, keys and roles);
`read_reply` and `explain_reason` need none. How the client reaches the API is the
caller's `Connect`: a remote server (`faithscreen mcp --server`), the embedded app
(`faithscreen mcp`), or the serving app itself (/mcp, with the caller's key).

A tool that fails returns an `isError` result whose text is `<code>: <message>` (the
API's error code, or `validation_error` for a bad argument); never a stack trace.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Annotated, Any, NoReturn

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from app import __version__
from app.mcp import explain
from app.mcp.explain import ReasonMeaning, ReplyReading, UnknownReason, UnreadableReply
from app.mcp.results import ScreeningResult, screening_result
from app.vocabulary import ReplyFormat, Role
from faithscreen_client import AsyncClient, FaithScreenError

# How a tool call reaches the API: an AsyncClient for this call (its key may be the caller's).
Connect = Callable[[Context], AbstractAsyncContextManager[AsyncClient]]
MAX_WAIT_SECONDS = 300.0
WAIT_DOC = f"How long to wait for the outcome, 0 to {MAX_WAIT_SECONDS:g} seconds."
REPLIES_DOC = (
    "Replies already written (`translator`, and `judge` or a panel's `judges` by name): "
    "decided with no provider call (at once, or after the Lean check when a Lean server is "
    "set)."
)
IDEMPOTENCY_DOC = (
    "Your own key for this pair (up to 255 characters): calling again with the same key and "
    "the same arguments returns the screening made the first time (within the server's "
    "window) instead of screening again; other arguments under the key are refused. Keys "
    "are your API key's own: another key's same key never meets yours."
)
# As the API's `replies` (SuppliedReplies), which checks them.
Replies = dict[str, str | dict[str, str]]
INSTRUCTIONS = (
    "FaithScreen checks that a Lean 4 statement says what its informal statement says. "
    "Call screen_pair before handing a formal statement on: `passed` is evidence (never "
    "proof), `flagged` means fix the statement, `needs_review` means no verdict to act on. "
    "explain_reason explains each reason code; read_reply checks a reply's contract format."
)


def build_server(connect: Connect) -> MCPServer:
    server: MCPServer = MCPServer(
        name="faithscreen", version=__version__, instructions=INSTRUCTIONS
    )
    server.add_tool(_screen_pair(connect), name="screen_pair")
    server.add_tool(_get_screening(connect), name="get_screening")
    server.add_tool(read_reply, name="read_reply")
    server.add_tool(explain_reason, name="explain_reason")
    return server


def _screen_pair(connect: Connect) -> Callable[..., Any]:
    async def screen_pair(
        ctx: Context,
        informal: Annotated[str, Field(description="The informal statement.")],
        formal: Annotated[str, Field(description="The Lean 4 statement.")],
        header: Annotated[str | None, Field(description="Imports and `open` lines.")] = None,
        replies: Annotated[Replies | None, Field(description=REPLIES_DOC)] = None,
        wait_seconds: Annotated[float, Field(description=WAIT_DOC)] = 60.0,
        idempotency_key: Annotated[
            str | None, Field(min_length=1, max_length=255, description=IDEMPOTENCY_DOC)
        ] = None,
    ) -> ScreeningResult:
        """Screen one (informal, Lean 4) pair: outcome, reasons, each reviewer's verdict and
        parse status, the back-translation, evidence and a one-line summary."""
        if not 0 <= wait_seconds <= MAX_WAIT_SECONDS:
            _refuse("validation_error", f"wait_seconds: from 0 to {MAX_WAIT_SECONDS:g}")
        async with connect(ctx) as client:
            try:
                screening = await client.screen(
                    informal,
                    formal,
                    header=header,
                    replies=replies,
                    wait=False,
                    idempotency_key=idempotency_key,
                )
                if screening.status != "done" and wait_seconds > 0:
                    screening = await _waited(client, screening.id, wait_seconds)
            except FaithScreenError as error:
                _refuse(error.code, error.message)
        return screening_result(screening, wait_seconds)

    return screen_pair


def _get_screening(connect: Connect) -> Callable[..., Any]:
    async def get_screening(
        ctx: Context, id: Annotated[str, Field(description="A screening id from screen_pair.")]
    ) -> ScreeningResult:
        """A screening as screen_pair reports it: outcome, reasons, verdicts, evidence."""
        async with connect(ctx) as client:
            try:
                screening = await client.get_screening(id)
            except FaithScreenError as error:
                _refuse(error.code, error.message)
        return screening_result(screening)

    return get_screening


async def _waited(client: AsyncClient, screening_id: str, seconds: float) -> Any:
    try:
        return await client.wait_screening(screening_id, timeout=seconds)
    except FaithScreenError as error:
        if error.code != "wait_timeout":
            raise
        return await client.get_screening(screening_id)


def read_reply(
    text: Annotated[
        str,
        Field(
            description="A reply: for text and grammar its text (BACK-TRANSLATION:, "
            "VERDICT:, ISSUES:); for tool and json the provider's whole response body."
        ),
    ],
    reply_format: Annotated[
        ReplyFormat, Field(description="The format the reply was asked in.")
    ] = ReplyFormat.TEXT,
    role: Annotated[
        Role | None, Field(description="Whose fields a tool or json reply holds (required).")
    ] = None,
) -> ReplyReading:
    """Read a reply with the reader of its format (nothing stored): its verdict, parse
    status and fields. Only parse status `ok` makes the verdict the model's word."""
    try:
        return explain.read_reply(text, reply_format, role)
    except UnreadableReply as error:
        _refuse("unreadable_reply", str(error))


def explain_reason(
    code: Annotated[str, Field(description="A reason code, e.g. `judge_mismatch`.")],
) -> ReasonMeaning:
    """The documented meaning of a reason code, and the outcome it leads to."""
    try:
        return explain.explain_reason(code)
    except UnknownReason as error:
        _refuse("unknown_reason", str(error))


def _refuse(code: str, message: str) -> NoReturn:
    raise ToolError(f"{code}: {message}")
