"""TeX in an informal statement shown as MathML, rendered on the server. Pure.

The statement is split into plain text and TeX between `$...$`, `$$...$$`, `\\(...\\)` or
`\\[...\\]`; each TeX part goes through latex2mathml and what comes out is parsed and
written again from an allowlist of MathML elements and attributes. latex2mathml copies
`\\text{...}` through unescaped and turns `\\href` and `\\style` into attributes, so its
output is never put on the page as it stands. Whatever the allowlist cannot vouch for, and
whatever could hide part of the statement from the person reading it (`\\phantom`, colours,
negative or huge spaces, tiny sizes), shows as the raw TeX instead: fail closed, the
reviewer always reads every character. So does TeX holding a bidirectional control, which
would reorder the formula unseen; every control is shown as a marker (app/page_text.py).

The scan is one pass: each delimiter is looked for once (a missing closer is remembered),
so a statement of unmatched `$` costs linear time; a TeX part longer than MAX_TEX_CHARS,
or past the MAX_PARTS-th, stays raw, which bounds the converter's work per page.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass

from latex2mathml.converter import convert
from latex2mathml.symbols_parser import convert_symbol
from markupsafe import Markup

from app.evidence.bidi_controls import BIDI_CONTROL
from app.page_text import escaped, escaped_plain
from app.web.tex_layout import Formula, layout

MAX_TEX_CHARS = 2_000
MAX_PARTS = 200
MAX_DEPTH = 60
MATHML_NS = "{http://www.w3.org/1998/Math/MathML}"
# (opener, closer, display): `$$` is looked for before `$`.
DELIMITERS = (("$$", "$$", True), ("\\[", "\\]", True), ("\\(", "\\)", False), ("$", "$", False))
# Written as words (SIM905 is for short lists): the allowlists read better than 60 lines.
ELEMENTS = frozenset(
    "math mrow mi mn mo ms mtext mspace msub msup msubsup mfrac msqrt mroot munder mover "  # noqa: SIM905
    "munderover mtable mtr mtd mstyle menclose mmultiscripts mprescripts none".split()
)
# A small non-negative length (at most 9.9999em), alone or as a list (row spacings).
_LENGTH = re.compile(r"(?:(?:\d(?:\.\d{1,4})?|\.\d{1,4})(?:em|ex)?\s*){1,8}")
_WORDS = re.compile(r"[a-z0-9 .\-]{1,40}")
_LENGTH_ATTRIBUTES = frozenset(
    "width lspace rspace minsize maxsize linethickness columnspacing rowspacing".split()  # noqa: SIM905
)
_WORD_ATTRIBUTES = frozenset(
    "display stretchy fence form separator accent accentunder movablelimits largeop symmetric "  # noqa: SIM905
    "columnalign rowalign columnlines rowlines frame notation displaystyle mathvariant".split()
)
# scriptlevel above 2 shrinks text below what can be read.
_SCRIPT_LEVELS = frozenset({"0", "1", "2"})


@dataclass(frozen=True, slots=True)
class Part:
    """Plain text, or TeX (without its delimiters) with how it was written."""

    text: str
    tex: bool = False
    display: bool = False
    source: str = ""


@dataclass(frozen=True, slots=True)
class Rendered:
    """The statement as HTML, and how many TeX parts became MathML."""

    html: Markup
    converted: int
    # How many text-mode commands (lists, emphasis, breaks) were laid out as HTML.
    formatted: int


def parts(text: str) -> list[Part]:
    """The statement split into plain text and TeX parts; joining their sources (plain
    text is its own source) gives the text back."""
    found: list[Part] = []
    missing: set[str] = set()
    plain_from, index = 0, 0
    while index < len(text):
        match = _delimited_at(text, index, missing)
        if match is None:
            index += 2 if text[index] == "\\" else 1
            continue
        end, part = match
        if plain_from < index:
            found.append(Part(text[plain_from:index]))
        found.append(part)
        plain_from = index = end
    if plain_from < len(text):
        found.append(Part(text[plain_from:]))
    return found


def _delimited_at(text: str, index: int, missing: set[str]) -> tuple[int, Part] | None:
    """The TeX part opening at `index` and where it ends, or None."""
    for opener, closer, display in DELIMITERS:
        if not text.startswith(opener, index):
            continue
        if closer in missing:
            return None
        start = index + len(opener)
        end = _closing(text, closer, start)
        if end < 0:
            missing.add(closer)
            return None
        body = text[start:end]
        # `$ 5 and $ 10` over lines, or `$$` alone, is not mathematics.
        if not body.strip() or (opener == "$" and "\n" in body):
            return None
        stop = end + len(closer)
        return stop, Part(body, tex=True, display=display, source=text[index:stop])
    return None


def _closing(text: str, closer: str, start: int) -> int:
    """Where `closer` first stands from `start`, a `\\$` (an escaped dollar) not counting."""
    end = text.find(closer, start)
    while end > 0 and closer[0] == "$" and text[end - 1] == "\\":
        end = text.find(closer, end + 1)
    return end


def render(text: str) -> Rendered:
    """The statement as HTML: plain text escaped, TeX as MathML where it can be trusted,
    and the common text-mode commands laid out (app/web/tex_layout.py)."""
    pieces: list[str | Formula] = []
    converted = tried = 0
    for part in parts(text):
        mathml = None
        if part.tex and tried < MAX_PARTS:
            tried += 1
            mathml = _mathml(part)
        if not part.tex:
            pieces.append(part.text)
        elif mathml is None:
            # Shown as written: the text-mode layout never reads inside it.
            pieces.append(Formula(escaped(part.source), part.source))
        else:
            converted += 1
            span = f'<span class="tex" title="{escaped_plain(part.source)}">{mathml}</span>'
            pieces.append(Formula(span, part.source))
    laid = layout(pieces, latex=_is_latex(text, pieces))
    if laid is None:
        html = "".join(p.html if isinstance(p, Formula) else escaped(p) for p in pieces)
        return Rendered(Markup(html), converted, 0)
    return Rendered(Markup(laid[0]), converted, laid[2])


def plain_text(text: str) -> str:
    """The statement as one would read it aloud from the rendered page, in plain text: the
    text-mode commands laid out, each formula's TeX shortened to Unicode where a symbol
    has one (for the queue's one-line preview). A formula `tex_plain` cannot shorten whole
    stays as written, delimiters and all: raw TeX or a readable rendering, never a mix."""
    pieces: list[str | Formula] = [
        Formula("", _plain_or_raw(part)) if part.tex else part.text for part in parts(text)
    ]
    laid = layout(pieces, latex=_is_latex(text, pieces))
    return text if laid is None else laid[1]


def _plain_or_raw(part: Part) -> str:
    shortened = tex_plain(part.text)
    return part.source if shortened is None else shortened


def _is_latex(text: str, pieces: list[str | Formula]) -> bool:
    return "\\" in text or any(isinstance(piece, Formula) for piece in pieces)


_FRACTION = re.compile(r"\\[dt]?frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}")
_BINOMIAL = re.compile(r"\\[dt]?binom\s*\{([^{}]*)\}\s*\{([^{}]*)\}")
# A sub- or superscript: a braced group without braces inside, or one character.
_SCRIPT = re.compile(r"([_^])(?:\{([^{}]*)\}|([A-Za-z0-9]))")
_SUBSCRIPTS = dict(
    zip("0123456789+-=()aehijklmnoprstuvx", "₀₁₂₃₄₅₆₇₈₉₊₋₌₍₎ₐₑₕᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓ", strict=True)
)
_SUPERSCRIPTS = dict(
    zip(
        "0123456789+-=()abcdefghijklmnoprstuvwxyzT",
        "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖʳˢᵗᵘᵛʷˣʸᶻᵀ",
        strict=True,
    )
)
# Named functions (`\\exp`, `\\gcd`): their name is what the reader sees.
_FUNCTIONS = frozenset(
    "sin cos tan cot sec csc arcsin arccos arctan sinh cosh tanh log ln lg exp lim liminf "  # noqa: SIM905
    "limsup max min sup inf gcd lcm det deg dim ker arg hom Pr mod bmod pmod".split()
)
# Punctuation commands: what the reader sees of them.
_ESCAPES = {"\\": " ", "&": "&", "%": "%", "_": "_", "#": "#", "$": "$", "|": "‖"}
_ROOT = re.compile(r"\\sqrt\s*\{([^{}]*)\}")
_FONT = re.compile(
    r"\\(?:mathbb|mathbf|mathrm|mathit|mathcal|mathsf|operatorname|text|textrm|textbf|textit)\s*\{([^{}]*)\}"
)
_COMMAND = re.compile(r"\\([a-zA-Z]+|.)")
_DOUBLE_STRUCK = {"N": "ℕ", "Z": "ℤ", "Q": "ℚ", "R": "ℝ", "C": "ℂ"}
_SPACING = frozenset("left right big Big bigg Bigg displaystyle , ; ! : quad qquad".split())  # noqa: SIM905


def tex_plain(tex: str) -> str | None:
    """A formula's TeX in plain text: `\\frac{a}{b}` as a/b, `\\binom{n}{k}` as C(n, k),
    scripts as Unicode sub- and superscripts (else `^(...)`), commands as the symbol
    latex2mathml has for them. None when something is left it cannot lay out (a command
    without a symbol, a group it does not know): the caller shows the TeX as written
    rather than a mangled mix. Lossy: for a preview, never for reading."""
    previous = None
    while previous != tex:  # innermost first, so nested fractions come out whole
        previous = tex
        tex = _FRACTION.sub(lambda m: f"{_grouped(m[1])}/{_grouped(m[2])}", tex)
        tex = _BINOMIAL.sub(lambda m: f"C({m[1].strip()}, {m[2].strip()})", tex)
        tex = _ROOT.sub(lambda m: f"√{_grouped(m[1])}", tex)
        tex = _FONT.sub(lambda m: _DOUBLE_STRUCK.get(m[1], m[1]) if "mathbb" in m[0] else m[1], tex)
        tex = _SCRIPT.sub(_script, tex)
    # `\\{` is a brace the reader sees; a bare one only groups.
    tex = tex.replace("\\{", "\ufff9").replace("\\}", "\ufffa")
    unknown: list[str] = []
    tex = _COMMAND.sub(lambda m: _command_plain(m, unknown), tex)
    if unknown or "{" in tex or "}" in tex:
        return None
    return " ".join(tex.replace("\ufff9", "{").replace("\ufffa", "}").split())


def _script(match: re.Match[str]) -> str:
    """`_{k=1}` as ₖ₌₁ and `^{n+1}` as ⁿ⁺¹ where every character has one, else `_(k=1)`."""
    mark, body = match[1], match[2] if match[2] is not None else match[3]
    table = _SUBSCRIPTS if mark == "_" else _SUPERSCRIPTS
    body = body.strip()
    if body and all(c in table for c in body.replace(" ", "")):
        return "".join(table[c] for c in body.replace(" ", ""))
    # Grouped even when alphanumeric: `^2q` would read as a square times q.
    return f"{mark}{body}" if len(body) == 1 else f"{mark}({body})"


def _grouped(text: str) -> str:
    return text if len(text) <= 1 or text.isalnum() else f"({text})"


def _command_plain(match: re.Match[str], unknown: list[str]) -> str:
    """The command's plain text; a command without one is added to `unknown`."""
    name = match[1]
    if name in _SPACING:
        return " " if name in (",", ";", "quad", "qquad", ":") else ""
    if not name.isalpha():
        return _ESCAPES.get(name, name)
    if name in _FUNCTIONS:
        return name
    try:
        code = convert_symbol(f"\\{name}")
    except Exception:
        code = None
    if code and re.fullmatch(r"[0-9A-Fa-f]{4,5}", code):
        return chr(int(code, 16))
    unknown.append(name)
    return name


def _mathml(part: Part) -> str | None:
    # A bidi control would reorder the formula unseen: the TeX is shown, its controls marked.
    if len(part.text) > MAX_TEX_CHARS or BIDI_CONTROL.search(part.text):
        return None
    try:
        output = convert(part.text, display="block" if part.display else "inline")
        return written(_full_size_binomials(ET.fromstring(output)))
    except Exception:
        return None


def _full_size_binomials(root: ET.Element) -> ET.Element:
    """A binomial (an `mfrac` without a rule) set in display style: inline, MathML would
    set its two entries at script size, too small to read beside the text, while
    latex2mathml sizes its parentheses for full-size entries."""
    for fraction in root.iter(f"{MATHML_NS}mfrac"):
        if fraction.get("linethickness", "").strip() in ("0", "0em", "0px", "0pt"):
            fraction.set("displaystyle", "true")
    return root


def written(root: ET.Element) -> str | None:
    """The tree as HTML from the allowlist, or None when it holds anything else."""
    out: list[str] = []
    for token in _walk(root):
        if token is None:
            return None
        out.append(token)
    return "".join(out)


def _walk(root: ET.Element) -> Iterator[str | None]:
    """Tags and escaped text in document order; None for something not allowed."""
    stack: list[tuple[ET.Element, int, bool]] = [(root, 0, False)]
    while stack:
        element, depth, closing = stack.pop()
        name = element.tag.removeprefix(MATHML_NS)
        if closing:
            # The root's tail lies outside the formula: nothing of it belongs here.
            tail = element.tail if depth > 0 else None
            yield f"</{name}>" + escaped_plain(tail or "")
            continue
        if name not in ELEMENTS or depth > MAX_DEPTH:
            yield None
            return
        # Plain markers: inside MathML a `<mark>` is not an HTML element everywhere.
        yield f"<{name}{_attributes(element)}>" + escaped_plain(element.text or "")
        stack.append((element, depth, True))
        stack.extend((child, depth + 1, False) for child in reversed(list(element)))


def _attributes(element: ET.Element) -> str:
    kept = [
        f' {name}="{escaped_plain(value)}"'
        for name, value in sorted(element.attrib.items())
        if _allowed(name, value.strip())
    ]
    return "".join(kept)


def _allowed(name: str, value: str) -> bool:
    if name in _LENGTH_ATTRIBUTES:
        return _LENGTH.fullmatch(value) is not None
    if name == "scriptlevel":
        return value in _SCRIPT_LEVELS
    return name in _WORD_ATTRIBUTES and _WORDS.fullmatch(value) is not None
