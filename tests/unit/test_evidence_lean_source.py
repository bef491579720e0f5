"""The approximate Lean lexer under the lints: comments, strings, tokens, tactic blocks."""

from __future__ import annotations

from app.evidence.declaration import main_theorem
from app.evidence.lean_source import Kind, lean_tokens, strip_comments_and_strings, tokenize


def texts(source: str) -> list[str]:
    return [token.text for token in lean_tokens(source).items]


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
    assert lean_tokens("s.card").items[0].head == "s"


def test_lambda_pi_sigma_are_not_identifier_letters() -> None:
    assert texts("λx") == ["λ", "x"]
    assert texts("Σk") == ["Σ", "k"]


def test_numbers_and_multi_character_symbols() -> None:
    tokens = tokenize("x := 1 / 3.5 => y")
    assert [(t.text, t.kind) for t in tokens][1:5] == [
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
    assert [t.text for t in theorem.binders[2].type] == ["ℕ"]
    assert [t.text for t in theorem.conclusion] == ["a", "=", "b"]


def test_no_theorem_means_no_main_theorem() -> None:
    assert main_theorem(lean_tokens("def f : ℕ := 1")) is None
