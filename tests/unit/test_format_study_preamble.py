"""The format study's preamble (app/calibration/formats.py): text before a reply's first
contract field line, found where the contract parser finds field lines."""

from __future__ import annotations

import pytest

from app.calibration.formats import has_preamble


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("VERDICT: FAITHFUL\nISSUES: none\n", False),
        ("  \n\t VERDICT: FAITHFUL\n", False),  # blank lines and indentation are no preamble
        ("Sure! Here is my review.\nVERDICT: MISMATCH\n", True),
        ("Review:\r\nback-translation: x\r\nverdict: faithful\r\n", True),  # any letter case
        ("The VERDICT: FAITHFUL is inside a line\nISSUES: none", True),  # not a field line
        ("**VERDICT:** FAITHFUL\n", None),  # markup: no field line at all
        ("I think they agree.", None),
        ("", None),
        (None, None),
    ],
)
def test_preamble_is_text_before_the_first_field_line(
    reply: str | None, expected: bool | None
) -> None:
    assert has_preamble(reply) is expected
