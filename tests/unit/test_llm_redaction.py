"""redact(): the configured keys in every spelling a body quotes them in, Bearer values and
sk- tokens become [redacted]; ordinary text is left as it was."""

from __future__ import annotations

import json
from urllib.parse import quote

import pytest

from app.llm.redaction import REDACTED, redact

KEY = 'k3y/with+odd"chars'


@pytest.mark.parametrize(
    "spelling", [KEY, quote(KEY, safe=""), json.dumps(KEY)[1:-1]], ids=["raw", "url", "json"]
)
def test_a_configured_key_is_redacted_however_the_body_spells_it(spelling: str) -> None:
    assert redact(f"got {spelling} here", [KEY]) == f"got {REDACTED} here"


@pytest.mark.parametrize(
    ("text", "redacted"),
    [
        ("Authorization: Bearer abc", f"Authorization: Bearer {REDACTED}"),
        ("authorization: bearer eyJ.x-y_z/=+", f"authorization: bearer {REDACTED}"),
        ('"sk-proj-AbCdEf0123456789ghIJ"', f'"{REDACTED}"'),
        ("key sk-ant-api03-0123456789abcdef.", f"key {REDACTED}."),
    ],
)
def test_bearer_values_and_sk_tokens_are_redacted(text: str, redacted: str) -> None:
    assert redact(text, []) == redacted


@pytest.mark.parametrize(
    "text",
    [
        "max_tokens must be at most 4096",
        "a task-specific risk-sk-free note",  # sk- inside a word
        "sk-short",  # too short to be a key
    ],
)
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert redact(text, ["", "unused-secret"]) == text


def test_any_word_after_bearer_goes_the_safe_side() -> None:
    # A token can look like a word: prose that says "Bearer" loses the word after it.
    assert redact("the Bearer of bad news", []) == f"the Bearer {REDACTED} bad news"


def test_redacting_twice_changes_nothing() -> None:
    once = redact(f"Bearer abc {KEY} sk-proj-AbCdEf0123456789ghIJ", [KEY])
    assert redact(once, [KEY]) == once
