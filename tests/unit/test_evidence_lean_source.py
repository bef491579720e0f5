"""The approximate Lean lexer under the lints: comments, strings, tokens, tactic blocks."""

from __future__ import annotations

import re

from hypothesis import example, given, settings
from hypothesis import strategies as st

from app.evidence.declaration import binder_groups, main_theorem
from app.evidence.lean_source import (
    CLOSERS,
    OPENERS,
    Kind,
    head,
    lean_tokens,
    strip_comments_and_strings,
)


def texts(source: str) -> list[str]:
    return lean_tokens(source).texts


def test_line_comments_are_removed() -> None:
    assert texts("a -- b c\nd") == ["a", "d"]


def test_block_comments_nest_and_keep_line_breaks() -> None:
    stripped = strip_comments_and_strings("a /- x /- y -/ z -/ b\nc")
    assert stripped.split() == ["a", "b", "c"]
    assert strip_comments_and_strings("a /- \n\n -/ b").count("\n") == 2


def test_a_block_comment_separates_tokens() -> None:
    assert texts("a/- -/b") == ["a", "b"]


def test_an_unterminated_comment_runs_to_the_end() -> None:
    assert texts("a /- b c") == ["a"]


def test_strings_become_empty_literals_escapes_included() -> None:
    assert texts('f "x \\" VERDICT: y" z') == ["f", '"', '"', "z"]


def test_identifiers_keep_dots_subscripts_primes_and_bangs() -> None:
    assert texts("Finset.range h₀ x' n! s.card") == ["Finset.range", "h₀", "x'", "n!", "s.card"]
    assert head(lean_tokens("s.card").texts[0]) == "s"
    assert lean_tokens("s.card x").heads() == ["s", "x"]


def test_lambda_pi_sigma_are_not_identifier_letters() -> None:
    assert texts("λx") == ["λ", "x"]
    assert texts("Σk") == ["Σ", "k"]


def test_numbers_and_multi_character_symbols() -> None:
    tokens = lean_tokens("x := 1 / 3.5 => y")
    assert list(zip(tokens.texts, tokens.kinds, strict=True))[1:5] == [
        (":=", Kind.SYMBOL),
        ("1", Kind.NUMBER),
        ("/", Kind.SYMBOL),
        ("3.5", Kind.NUMBER),
    ]


def test_sym2_and_order_embedding_notation_are_not_names() -> None:
    assert texts("s(a, b)")[0] == "s("
    assert texts("Fin 2 ↪o Fin 3") == ["Fin", "2", "↪o", "Fin", "3"]
    assert texts("abs(x)")[0] == "abs"  # only a lone `s(` is the notation


def test_tactic_blocks_are_dropped() -> None:
    source = "theorem t : a = b := by\n  intro x\n  simp\n\ntheorem u : c := by sorry"
    assert texts(source) == [
        "theorem",
        "t",
        ":",
        "a",
        "=",
        "b",
        ":=",
        "theorem",
        "u",
        ":",
        "c",
        ":=",
    ]


def test_an_inline_tactic_block_ends_at_its_enclosing_bracket_or_comma() -> None:
    assert texts("(h : x := by simp) (y : T)") == [
        "(",
        "h",
        ":",
        "x",
        ":=",
        ")",
        "(",
        "y",
        ":",
        "T",
        ")",
    ]
    assert texts("{ a := by omega, b := 1 }") == ["{", "a", ":=", ",", "b", ":=", "1", "}"]


def test_group_ends_are_matched_once_and_tolerate_unbalanced_input() -> None:
    tokens = lean_tokens("( a [ b ] ) (")
    assert tokens.group_end(0) == 6
    assert tokens.group_end(2) == 5
    assert tokens.group_end(6) == 7  # unclosed: runs to the end
    assert tokens.group_end(1) == 2  # not an opener


def test_main_theorem_binders_and_conclusion() -> None:
    theorem = main_theorem(
        lean_tokens("def f := 1\ntheorem t {α : Type*} [Ring α] (a b : ℕ) (n) : a = b := sorry")
    )
    assert theorem is not None
    assert [binder.names for binder in theorem.binders] == [("α",), (), ("a", "b"), ("n",)]
    tokens = lean_tokens(
        "def f := 1\ntheorem t {α : Type*} [Ring α] (a b : ℕ) (n) : a = b := sorry"
    )
    assert [tokens.texts[i] for i in theorem.binders[2].type] == ["ℕ"]
    assert [tokens.texts[i] for i in theorem.conclusion] == ["a", "=", "b"]


def test_no_theorem_means_no_main_theorem() -> None:
    assert main_theorem(lean_tokens("def f : ℕ := 1")) is None


# --- The linear reading against plain, quadratic oracles ----------------------------------

TOKEN_SOUP = st.lists(
    st.sampled_from(["(", ")", "[", "]", "{", "⟨", "⟩", "s(", ",", ":", "∈", "x", "y", "+", "\n"]),
    max_size=40,
).map(" ".join)
SOURCE_SOUP = st.text(alphabet='ab /-"\\\n', max_size=60)


def scan_end(texts: list[str], start: int, stops: frozenset[str]) -> int:
    """What `level_end` must answer: the plain scan its docstring describes."""
    depth = 0
    for index in range(start, len(texts)):
        depth += (texts[index] in OPENERS) - (texts[index] in CLOSERS)
        if depth < 0 or (depth == 0 and texts[index] in stops):
            return index
    return len(texts)


def stack_ends(texts: list[str]) -> dict[int, int]:
    """Group ends as a stack matches them: a closer with nothing open is skipped."""
    ends: dict[int, int] = {}
    stack: list[int] = []
    for index, text in enumerate(texts):
        if text in OPENERS:
            stack.append(index)
        elif text in CLOSERS and stack:
            ends[stack.pop()] = index + 1
    return ends | dict.fromkeys(stack, len(texts))


def stripped_char_by_char(source: str) -> str:
    """The comment and string stripper as a character loop (the original implementation)."""
    out: list[str] = []
    i = 0
    while i < len(source):
        if source.startswith("/-", i):
            depth, i = 1, i + 2
            while i < len(source) and depth:
                if source.startswith("/-", i):
                    depth, i = depth + 1, i + 2
                elif source.startswith("-/", i):
                    depth, i = depth - 1, i + 2
                else:
                    out.append("\n" if source[i] == "\n" else "")
                    i += 1
            out.append(" ")
        elif source.startswith("--", i):
            end = source.find("\n", i)
            i = len(source) if end < 0 else end
        elif source[i] == '"':
            i += 1
            while i < len(source) and source[i] != '"':
                i += 2 if source[i] == "\\" else 1
            i += 1
            out.append('""')
        else:
            out.append(source[i])
            i += 1
    return "".join(out)


@given(SOURCE_SOUP)
@example('a /- x /- y -/ "z -/ b -- c\n"d\\"e" /-/ -/-/ f')
def test_strip_comments_and_strings_matches_a_character_loop(source: str) -> None:
    assert strip_comments_and_strings(source) == stripped_char_by_char(source)


@settings(max_examples=300)
@given(TOKEN_SOUP)
@example(") ( ] x , ( ( y : [ ) ,")
def test_level_ends_group_ends_and_runs_match_a_plain_scan(source: str) -> None:
    tokens = lean_tokens(source)
    texts, ends = tokens.texts, stack_ends(tokens.texts)
    for stops in (frozenset([","]), frozenset([",", ":", "∈"])):
        for start in range(len(texts) + 1):
            assert tokens.level_end(start, stops) == scan_end(texts, start, stops)
    for start in range(len(texts)):
        assert tokens.group_end(start) == ends.get(start, start + 1)
        run, index = [], start
        while index < len(texts) and texts[index] in OPENERS:
            run.append((index, ends[index]))
            index = ends[index]
        assert binder_groups(tokens, start) == run


@given(st.lists(st.sampled_from(["a", "x", "\n", "\n\n", "by", ",", "(", ")", " "]), max_size=30))
def test_tactic_blocks_and_line_starts_match_a_token_by_token_reading(parts: list[str]) -> None:
    source = " ".join(parts)
    words = [
        (number, match.start(), match.group())
        for number, line in enumerate(source.split("\n"))
        for match in re.finditer(r"\S+", line)
    ]
    kept = _kept_token_by_token(words)
    tokens = lean_tokens(source)
    assert [text for _, text in kept] == tokens.texts
    lines = [number for number, _ in kept]
    assert tokens.line_starts() == {
        i for i in range(len(lines)) if i == 0 or lines[i] != lines[i - 1]
    }


def _kept_token_by_token(words: list[tuple[int, int, str]]) -> list[tuple[int, str]]:
    """drop_tactic_blocks as first written: token by token, each with its line and column."""
    indents: dict[int, int] = {}
    for number, column, _ in words:
        indents.setdefault(number, column)
    kept, index = [], 0
    while index < len(words):
        if words[index][2] != "by":
            kept.append((words[index][0], words[index][2]))
            index += 1
            continue
        line, depth, index = words[index][0], 0, index + 1
        while index < len(words):
            number, _, text = words[index]
            if number != line:
                if indents[number] <= indents[line]:
                    break
                index += 1
                continue
            depth += (text in OPENERS) - (text in CLOSERS)
            if depth < 0 or (depth == 0 and text == ","):
                break
            index += 1
    return kept
