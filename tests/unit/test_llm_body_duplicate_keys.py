"""read_completion refuses a body with a key named twice in any JSON object (issue 32, item
3): Python's json keeps the last value, other readers the first, so such a body has no one
meaning. Two `choices`, the first MISMATCH and the last FAITHFUL, passed before."""

from __future__ import annotations

import json

import pytest

from app.llm.body import MalformedBody, read_completion
from tests.support.scripted_openai import contract_reply

MISMATCH = contract_reply("MISMATCH", issues="the conclusion is weaker")
FAITHFUL = contract_reply("FAITHFUL")


def choices(reply: str, finish: str = "stop") -> str:
    return json.dumps([{"index": 0, "message": {"role": "assistant", "content": reply},
                        "finish_reason": finish}])  # fmt: skip


TWO_CHOICES = (
    f'{{"id": "c1", "object": "chat.completion", "model": "m", "choices": {choices(MISMATCH)}, '
    f'"choices": {choices(FAITHFUL)}}}'
)
# Each puts a key twice somewhere else: on the path to the content, and off it.
DUPLICATED = {
    "message": '{"choices": [{"message": {"content": "a"}, "message": {"content": "b"}}]}',
    "content": '{"choices": [{"message": {"content": "VERDICT: MISMATCH", '
    '"content": "VERDICT: FAITHFUL"}, "finish_reason": "stop"}]}',
    "finish_reason": '{"choices": [{"message": {"content": "a"}, "finish_reason": "length", '
    '"finish_reason": "stop"}]}',
    "model": '{"model": "a", "model": "b", "choices": [{"message": {"content": "a"}}]}',
    "usage": '{"choices": [{"message": {"content": "a"}}], '
    '"usage": {"total_tokens": 1, "total_tokens": 2}}',
    # The same key after JSON unescaping ("\\u0063" is "c").
    "escaped": '{"choices": [{"message": {"content": "a"}}], "\\u0063hoices": []}',
}


def test_a_body_with_two_choices_is_malformed_not_the_last_one() -> None:
    assert json.loads(TWO_CHOICES)["choices"][0]["message"]["content"] == FAITHFUL
    with pytest.raises(MalformedBody, match="duplicate key 'choices'"):
        read_completion(TWO_CHOICES)


@pytest.mark.parametrize("body", DUPLICATED.values(), ids=DUPLICATED.keys())
def test_a_key_named_twice_anywhere_is_malformed(body: str) -> None:
    with pytest.raises(MalformedBody, match="duplicate key"):
        read_completion(body)


def test_a_long_duplicated_key_is_quoted_short() -> None:
    key = "k" * 10_000
    body = f'{{"choices": [{{"message": {{"content": "a"}}}}], "{key}": 1, "{key}": 2}}'
    with pytest.raises(MalformedBody) as raised:
        read_completion(body)
    assert len(str(raised.value)) < 200


def test_the_same_key_in_different_objects_is_fine() -> None:
    body = (
        '{"model": "m", "choices": [{"index": 0, "message": {"content": "a"}, '
        '"finish_reason": "stop"}, {"index": 1, "message": {"content": "b"}, '
        '"finish_reason": "stop"}], "usage": {"total_tokens": 3}}'
    )
    completion = read_completion(body)
    assert (completion.content, completion.finish_reason, completion.model) == ("a", "stop", "m")


def test_a_body_nested_deeper_than_the_stack_is_malformed_not_a_crash() -> None:
    # Before, json.loads raised RecursionError here, which escaped the client and ended the
    # screening `job_failed` (found by the fault-injection test's `deep_nesting` mode).
    deep = '{"choices": ' + "[" * 100_000 + "]" * 100_000 + "}"
    with pytest.raises(MalformedBody, match="nested too deeply"):
        read_completion(deep)
