"""ProviderText's escaping (app/db/types.py): any Python string, lone surrogates and U+0000
included, becomes text every backend stores, and reads back as it was; text that needs no
escaping is stored as it is, and text stored before reads as it was."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from app.db.types import CUT_MARK, ESCAPED, bounded_text, escape_text, unescape_text

# Any code point, with surrogates (st.characters() draws none) and the characters the
# escaping is about made common.
SURROGATES = st.integers(0xD800, 0xDFFF).map(chr)
ANY_TEXT = st.text(
    st.characters() | SURROGATES | st.sampled_from(["\x00", "\\", "0", "u", "d", ESCAPED])
)


@given(ANY_TEXT)
def test_any_text_reads_back_exactly_and_is_storable(value: str) -> None:
    stored = escape_text(value)
    assert unescape_text(stored) == value
    assert "\x00" not in stored
    stored.encode("utf-8")  # no lone surrogate left: raises otherwise


@given(st.text(st.characters(exclude_characters="\x00", exclude_categories=["Cs"])))
def test_text_that_needs_no_escaping_is_stored_as_it_is(value: str) -> None:
    if not value.startswith(ESCAPED):
        assert escape_text(value) == value


@given(ANY_TEXT)
def test_text_stored_before_reads_as_it_was_unless_it_is_an_escaped_form(old: str) -> None:
    """Old rows never held U+0000 (PostgreSQL) nor a lone surrogate (either backend); one
    is read differently only if it is exactly what escape_text writes for another value."""
    read = unescape_text(old)
    assert read == old or escape_text(read) == old


@given(ANY_TEXT, st.integers(min_value=32, max_value=200))
def test_a_bounded_text_fits_and_says_it_was_cut(value: str, length: int) -> None:
    stored = bounded_text(value, length)
    assert len(stored) <= length
    if stored != escape_text(value):
        assert unescape_text(stored).endswith(CUT_MARK.format(len(value)))
