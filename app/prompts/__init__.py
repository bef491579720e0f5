"""The prompts: versioned templates that turn a pair into chat messages for each role.

Pure: no database, no HTTP, no framework imports. Statements are untrusted and always
fenced as data (`fence`); the templates are the `.txt` files in `templates/`.
"""

from app.prompts.messages import (
    PROMPT_VERSION,
    Message,
    confirmation_messages,
    judge_messages,
    messages_sha256,
    prompt_version,
    review_messages,
    translator_messages,
)
from app.prompts.retry import format_retry_messages

__all__ = [
    "PROMPT_VERSION",
    "Message",
    "confirmation_messages",
    "format_retry_messages",
    "judge_messages",
    "messages_sha256",
    "prompt_version",
    "review_messages",
    "translator_messages",
]
