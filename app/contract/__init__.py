"""The contract parser: how a verdict is read from an LLM reply, and from a whole call.

Pure: no database, no HTTP, no framework imports. The rules are in `parser`'s docstring.
"""

from app.contract.call import failed_call_reading, read_call
from app.contract.parser import PARSER_VERSION, parse_reply
from app.contract.reading import Reading

__all__ = ["PARSER_VERSION", "Reading", "failed_call_reading", "parse_reply", "read_call"]
