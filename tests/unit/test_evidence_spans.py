"""Where findings are: token spans in the raw text, a finding's JSON, old stored evidence."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from app.api.schemas import EvidenceOut
from app.evidence import CHECK_FAILED, Check, Finding, run_checks
from app.evidence.finding import Detected, Span
from app.evidence.lean_source import blank_comments_and_strings, lean_tokens
from app.vocabulary import Pair, Severity

PIECES = ["theorem", "t", "(", ")", "x", ":=", "by", "simp", "/-", "-/", "--", '"', "\\", "é",
          "ℝ", "→", "\n", "\n  ", " ", "a.b", "1", "⁻¹"]  # fmt: skip
SOURCES = st.lists(st.sampled_from(PIECES), max_size=40).map("".join)


def spanned(source: str, place: tuple[int, int, int]) -> str:
    line, column, end_column = place
    return source.split("\n")[line - 1][column:end_column]


@settings(max_examples=400)
@given(SOURCES)
@example('theorem t /- a\n b -/ (x : ℝ) "s\ntr" := by\n  simp\nx')
@example('by)"')  # a tactic block dropped before an unterminated string that ends it
def test_every_token_span_covers_exactly_that_token(source: str) -> None:
    tokens = lean_tokens(source)
    for index, text in enumerate(tokens.texts):
        place = tokens.span(index, index)
        assert place is not None
        if text != '"':  # an unterminated string's closing quote is made up
            assert spanned(source, place) == text


def test_lines_and_columns_count_code_points_after_comments_and_strings() -> None:
    source = 'theorem t /- é\n -/ "a\nb" (n : ℕ := 5) : n = 5'
    tokens = lean_tokens(source)
    index = tokens.texts.index("n")
    assert tokens.span(index, index) == (3, 4, 5)
    assert tokens.span(index - 1, tokens.texts.index(")")) == (3, 3, 15)  # `(n : ℕ := 5)`


def test_a_span_over_lines_is_cut_at_the_end_of_its_first_line() -> None:
    source = "theorem t (n : ℕ\n  := 5) : n = 5"
    tokens = lean_tokens(source)
    start, end = tokens.texts.index("("), tokens.texts.index(")")
    assert tokens.span(start, end) == (1, 10, 16)


def test_blanking_keeps_every_character_in_place() -> None:
    source = 'a /- x\n/- y -/ -/ b -- c\n"s\\"t" d'
    blanked = blank_comments_and_strings(source)
    assert len(blanked) == len(source) and blanked.count("\n") == source.count("\n")
    assert blanked.split() == ["a", "b", '"', '"', "d"]


def test_a_finding_serializes_its_span_and_none_without_one() -> None:
    located = Finding.at("demo", Severity.REVIEW, Detected("m", Span("formal", 2, 4, 9)))
    assert located.as_json() == {
        "code": "demo", "message": "m", "severity": "review",
        "field": "formal", "line": 2, "column": 4, "end_column": 9,
    }  # fmt: skip
    plain = Check("demo", Severity.FLAG, "d", lambda pair: ["m"])(Pair("", ""))
    assert plain[0].as_json()["line"] is None and plain[0].field is None


def test_a_failed_check_has_no_location() -> None:
    def broken(pair: Pair) -> list[str]:
        raise RuntimeError("boom")

    (finding,) = run_checks(Pair("", ""), [Check("broken", Severity.REVIEW, "d", broken)])
    assert finding.code == CHECK_FAILED
    assert (finding.field, finding.line, finding.column, finding.end_column) == (None,) * 4


def test_evidence_stored_before_spans_reads_with_null_locations() -> None:
    old = EvidenceOut(**{"code": "truncating_division", "message": "m", "severity": "review"})
    assert (old.field, old.line, old.column, old.end_column) == (None, None, None, None)
    new = EvidenceOut(
        **Finding.at("c", Severity.FLAG, Detected("m", Span("formal", 1, 0, 3))).as_json()
    )
    assert (new.field, new.line, new.column, new.end_column) == ("formal", 1, 0, 3)
