"""An MCP server for agents that write Lean and should check their statements before
handing them on (the official MCP Python SDK).

Tools (app/mcp/server.py):
    screen_pair(informal, formal, header?, replies?, wait_seconds=60, at most 300)
        -> id, status, outcome, reasons, each role's verdict and parse status,
           back-translation, issues, evidence, and a one-line summary to act on
    get_screening(id)       the same for a stored screening
    read_reply(text)        verdict, parse status and fields, by the contract parser;
                            nothing stored
    explain_reason(code)    the documented meaning of a reason code (app.policy.reasons)

Transports: stdio (`faithscreen mcp`, app/mcp/stdio.py) and streamable HTTP at /mcp on
`faithscreen serve` (app/mcp/http.py), with the API's bearer keys (submitter or above).
A failing tool answers `isError` with `<code>: <message>`, never a stack trace.
"""
