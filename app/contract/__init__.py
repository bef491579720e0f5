"""The contract parser: how a verdict is read from an LLM reply, and from a whole call.

Pure: no database, no HTTP, no framework imports. The rules are in `parser`'s docstring;
how a call's finish reason comes first, in `call`'s.
"""

from app.contract.call import failed_call_reading, read_call, read_supplied
from app.contract.parser import PARSER_VERSION, parse_reply
from app.contract.reading import Reading

__all__ = [
    "PARSER_VERSION",
    "Reading",
    "failed_call_reading",
    "parse_reply",
    "read_call",
    "read_supplied",
]
