"""The one JSON parser of request bodies: 64 levels of nesting and no more, whether the
brackets close or not, and brackets inside strings are text."""

from __future__ import annotations

import json

import pytest

from app.intake.json_text import MAX_JSON_DEPTH, MalformedJson, nests_too_deep, parse_json


def nested(depth: int) -> bytes:
    """`depth` levels, objects and lists in turn: {"a": [{"a": [...]}]}."""
    value: object = []
    for level in range(depth - 1):
        value = {"a": value} if level % 2 == 0 else [value]
    return json.dumps(value).encode()


def test_64_levels_parse_and_65_do_not() -> None:
    assert MAX_JSON_DEPTH == 64
    assert parse_json(nested(64)) == json.loads(nested(64))
    assert not nests_too_deep(nested(64))
    with pytest.raises(MalformedJson, match="deeper than 64 levels") as refused:
        parse_json(nested(65))
    assert (refused.value.status_code, refused.value.code) == (400, "malformed_json")
    assert nests_too_deep(nested(65))


@pytest.mark.parametrize("depth", [990, 100_000])
def test_a_depth_past_the_interpreters_stack_is_refused_not_raised(depth: int) -> None:
    for text in (b"[" * depth + b"]" * depth, b"[" * depth):
        with pytest.raises(MalformedJson, match="deeper than 64 levels"):
            parse_json(text)
    assert nests_too_deep(b"[" * depth + b"]" * depth) and nests_too_deep(b"[" * depth)


def test_brackets_in_strings_are_text() -> None:
    text = json.dumps({"informal": "[" * 500 + "{" * 500, "tags": ["]]]"]}).encode()
    assert parse_json(text)["informal"].startswith("[[[")
    assert not nests_too_deep(text)


def test_invalid_json_says_why_and_is_left_to_the_callers_parser_when_shallow() -> None:
    with pytest.raises(MalformedJson, match="Expecting"):
        parse_json(b'{"informal": ')
    with pytest.raises(MalformedJson):
        parse_json(b"\xff\xfe\x00")
    # Not JSON, but nothing nests deep in it: a line's own parser reports what is wrong.
    assert not nests_too_deep(b"[" * 40 + b"oops")
    assert not nests_too_deep(b"[" * 80 + b"oops" + b"]" * 10)
