"""The lenient reading of a reply: the verdict lines a person (or `str.splitlines`) sees.

Pure. The strict reading (`parser.py`) decides what a reply says; this second reading only
tells whether someone could see other verdict lines in it than the strict one does
(contract rule 7). It reads the text

- NFKC-normalised (a fullwidth colon is `:`, fullwidth letters are ASCII letters),
- with every format character (Unicode category Cf: U+200B-U+200F, U+00AD, U+2060, U+FEFF,
  the bidi controls, ...) removed, since nobody sees them,
- with a line end at every line break `str.splitlines()` knows: LF, CR, VT, FF, FS, GS,
  RS, NEL (U+0085), U+2028 and U+2029,
- and with a verdict field a line that begins, after any whitespace, with `VERDICT`, any
  whitespace, then `:`.

The name still matches in ASCII letter case only, after normalising: `VERDıCT` (dotless
i) is no field here either, and look-alike letters from other scripts (Cyrillic `В` or
`Е`, Greek `Ε`) are not folded into Latin ones: NFKC does not map them, and neither do we.

NFKC of a whole reply costs several times the strict reading, so only the lines that can
be verdict lines are normalised: those whose first character after whitespace and format
characters is one NFKC turns into a `v` or `V`. That gives the same values as normalising
everything, because NFKC works within a line (a line break neither composes nor decomposes
with its neighbours) and never makes or removes a line break; the tests check both facts
and every character list below against all of Unicode.
"""

from __future__ import annotations

import re
import unicodedata

# The Unicode data the lists below and NFKC come from; a test fails when Python's differs,
# since a new Unicode version may read some reply differently (then bump PARSER_VERSION).
UNICODE_VERSION = "14.0.0"

# Every character str.splitlines() ends a line at (CRLF is one end).
LINE_BREAKS = "\n\x0b\x0c\r\x1c\x1d\x1e\x85\u2028\u2029"

# Every str.isspace() character that is not a line break.
INLINE_WHITESPACE = (
    "\t\x1f \xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u202f\u205f\u3000"
)

# Unicode category Cf, as the body of a character class.
FORMAT_CHARACTERS = (
    "\xad\u0600-\u0605\u061c\u06dd\u070f\u0890-\u0891\u08e2\u180e\u200b-\u200f"
    "\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd"
    "\U00013430-\U00013438\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001"
    "\U000e0020-\U000e007f"
)

# Every character whose NFKC form (format characters removed, leading whitespace
# stripped) begins with `v` or `V`, as the body of a character class: fullwidth and
# mathematical letters, Roman numerals, circled and squared letters, modifier letters.
VERDICT_INITIALS = (
    "Vv\u1d5b\u1d65\u2164-\u2167\u2174-\u2177\u24cb\u24e5\u2c7d\u33de\uff36\uff56"
    "\U0001d415\U0001d42f\U0001d449\U0001d463\U0001d47d\U0001d497\U0001d4b1\U0001d4cb"
    "\U0001d4e5\U0001d4ff\U0001d519\U0001d533\U0001d54d\U0001d567\U0001d581\U0001d59b"
    "\U0001d5b5\U0001d5cf\U0001d5e9\U0001d603\U0001d61d\U0001d637\U0001d651\U0001d66b"
    "\U0001d685\U0001d69f\U0001f145"
)

_FORMAT = re.compile("[" + FORMAT_CHARACTERS + "]")
_BREAK = "[" + re.escape(LINE_BREAKS) + "]"
_SPACE = "[" + re.escape(INLINE_WHITESPACE) + "]*+"
# A line break, then what may stand before a `v` (possessive: one pass over a long run),
# then a character that may become one. The text is read with a leading LF, so the first
# line is a line like the others.
_BEFORE_V = "[" + re.escape(INLINE_WHITESPACE) + FORMAT_CHARACTERS + "]*+"
_CANDIDATE = re.compile(_BREAK + _BEFORE_V + "[" + VERDICT_INITIALS + "]")
_LINE_END = re.compile(_BREAK)
# Applied to one normalised line. ASCII keeps IGNORECASE from folding `ı` into `i`.
_VERDICT_FIELD = re.compile(_SPACE + "verdict" + _SPACE + ":(.*)", re.IGNORECASE | re.ASCII | re.S)


def lenient_text(text: str) -> str:
    """Text as the lenient reading sees it: NFKC, with format characters removed. Its line
    breaks are the text's own, in the same places."""
    if text.isascii():  # NFKC leaves ASCII alone, and ASCII holds no format character
        return text
    return _FORMAT.sub("", unicodedata.normalize("NFKC", text))


def lenient_verdict_values(text: str) -> list[str]:
    """The value of every verdict line of the lenient reading, in order, stripped and
    lowercased as the strict reading does."""
    text = "\n" + text
    values: list[str] = []
    for candidate in _CANDIDATE.finditer(text):
        end = _LINE_END.search(text, candidate.end())
        line = text[candidate.start() + 1 : end.start() if end else len(text)]
        field = _VERDICT_FIELD.match(lenient_text(line))
        if field:
            values.append(field.group(1).strip().lower())
    return values
