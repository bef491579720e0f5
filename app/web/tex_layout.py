"""Text-mode LaTeX in an informal statement laid out as HTML, and as one plain line. Pure.

PutnamBench and others write their statements as LaTeX documents: lists
(`\\begin{enumerate}`, `\\item[(a)]`), emphasis (`\\textbf`, `\\emph`, `{\\em ...}`), line
breaks (`\\\\`), ties (`~`), dashes and quotes. Shown as source between rendered formulas
they slow a reviewer down. This module turns the few common ones into fixed HTML tags,
from an allowlist; every other command, and every character of text, stays as written
(escaped). Labels and text are always escaped, bidi controls shown as markers
(app/page_text.py); the only markup written is the tags below and those markers, and the
formulas' HTML, which the caller has already written from its own allowlist.

The layout is all or nothing: a list item outside a list, an `\\end` that closes
something else, or an argument left open makes `layout` return None, and the caller shows
the statement as plain escaped text (the reviewer then reads the source, never a guess).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from app.page_text import escaped

# Commands whose `{argument}` is shown in a style, and the tag it is shown in.
STYLES = {
    "textbf": "strong",
    "emph": "em",
    "textit": "em",
    "textsl": "em",
    "underline": "u",
    "texttt": "code",
    "textrm": "span",
    "textsf": "span",
    "textup": "span",
    "textnormal": "span",
    "textsc": "span",
    "mbox": "span",
    "text": "span",
}
# Old-style switches at the start of a group: `{\em word}`.
SWITCHES = {"em": "em", "it": "em", "bf": "strong", "tt": "code", "sl": "em"}
LISTS = {"enumerate": "ol", "itemize": "ul", "description": "ul"}
# Text-mode commands that stand for a character.
SYMBOLS = {
    "ldots": "…",
    "dots": "…",
    "textendash": "–",
    "textemdash": "—",
    "S": "§",
    "P": "¶",
    "textbackslash": "\\",
    "newline": "\n",
    "quad": "\u2003",
    "qquad": "\u2003\u2003",
}
# Spacing and layout commands with nothing to show (they hide no character of the text).
IGNORED = frozenset({"noindent", "smallskip", "medskip", "bigskip", "par", "indent"})
_NAME = r"(?![a-zA-Z])"
TOKEN = re.compile(
    r"\\begin\{(?P<begin>[a-zA-Z]+\*?)\}[ \t]*\n?"
    r"|\\end\{(?P<end>[a-zA-Z]+\*?)\}[ \t]*\n?"
    r"|(?P<item>\\item" + _NAME + r"(?:[ \t]*\[(?P<label>[^\]\n$\\{}]{0,40})\])?[ \t]*)"
    r"|\\(?P<style>" + "|".join(STYLES) + r")" + _NAME + r"[ \t]*\{"
    r"|\{\\(?P<switch>" + "|".join(SWITCHES) + r")" + _NAME + r"[ \t]*"
    r"|(?P<br>\\\\(?:\[[0-9.]{1,6}(?:em|ex|pt|mm|cm)\])?[ \t]*\n?)"
    r"|\\(?P<symbol>" + "|".join(SYMBOLS) + r")" + _NAME + r"(?:\{\})?"
    r"|\\(?P<ignored>" + "|".join(IGNORED) + r")" + _NAME + r"[ \t]*"
    r"|\\(?P<escaped>[%&$#_{} ,;])"
    r"|(?P<brace>[{}])"
    r"|(?P<dash>---?)"
    r"|(?P<quote>``|'')"
    r"|(?<=\S)(?P<tie>~)(?=\S)"
)


PUNCTUATION = frozenset({"dash", "quote", "tie"})


class Unbalanced(Exception):
    """The statement's structure cannot be laid out as HTML without guessing."""


@dataclass(slots=True)
class Frame:
    """Something open: a list, an item, a styled argument, or a plain `{` group."""

    kind: str  # "list", "item", "style", "group"
    name: str = ""  # the environment, or the tag
    close_html: str = ""
    close_plain: str = ""
    items: int = 0  # a list's items so far, to number an enumerate's in plain text


@dataclass(slots=True)
class Layout:
    """What has been written so far, as HTML and as plain text side by side; `texts`
    says which pieces are text (the rest are tags and formulas)."""

    html: list[str] = field(default_factory=list)
    plain: list[str] = field(default_factory=list)
    texts: list[bool] = field(default_factory=list)
    stack: list[Frame] = field(default_factory=list)
    commands: int = 0
    quote_open: bool = False

    def text(self, text: str) -> None:
        if self.stack and self.stack[-1].kind == "list":
            if text.strip():
                raise Unbalanced("text between a list's items")
            return
        self._add(escaped(text), text, is_text=True)

    def tag(self, html: str, plain: str = "") -> None:
        self._add(html, plain, is_text=False)

    def _add(self, html: str, plain: str, *, is_text: bool) -> None:
        self.html.append(html)
        self.plain.append(plain)
        self.texts.append(is_text)

    def trim(self) -> None:
        """Drop the whitespace before a block's edge (the statement keeps its newlines)."""
        while self.texts and self.texts[-1] and not self.plain[-1].strip():
            self.html.pop(), self.plain.pop(), self.texts.pop()
        if self.texts and self.texts[-1]:
            self.html[-1], self.plain[-1] = self.html[-1].rstrip(), self.plain[-1].rstrip()

    def close(self, frame: Frame) -> None:
        if frame.kind in ("list", "item"):
            self.trim()
        self.tag(frame.close_html, frame.close_plain)


@dataclass(frozen=True, slots=True)
class Formula:
    """A formula already written as HTML by the caller, and its plain-text form."""

    html: str
    plain: str


def layout(pieces: Sequence[str | Formula], *, latex: bool) -> tuple[str, str, int] | None:
    """The statement as HTML, as plain text, and how many commands were laid out; None
    when its structure does not hold. `latex` says the text is LaTeX at all: only then do
    `~`, `--` and quotes count as LaTeX's."""
    out = Layout()
    try:
        for piece in pieces:
            if isinstance(piece, Formula):
                _formula(out, piece)
            else:
                _plain_text(out, piece, latex)
        if any(frame.kind != "group" for frame in out.stack):
            raise Unbalanced("left open")
    except Unbalanced:
        return None
    return "".join(out.html), "".join(out.plain), out.commands


def _formula(out: Layout, formula: Formula) -> None:
    if out.stack and out.stack[-1].kind == "list":
        raise Unbalanced("a formula between a list's items")
    out.tag(formula.html, formula.plain)


def _plain_text(out: Layout, text: str, latex: bool) -> None:
    at = 0
    for match in TOKEN.finditer(text):
        if match.start() > at:
            out.text(text[at : match.start()])
        at = match.end()
        _token(out, match, latex)
    if at < len(text):
        out.text(text[at:])


def _token(out: Layout, match: re.Match[str], latex: bool) -> None:
    kind, value = next((k, v) for k, v in match.groupdict().items() if v is not None)
    if not latex and kind in PUNCTUATION:
        out.text(value)  # `~`, `--` and quotes in a statement that is no LaTeX at all
        return
    _HANDLERS[kind](out, value, match)


def _begin(out: Layout, name: str, match: re.Match[str]) -> None:
    tag = LISTS.get(name)
    if tag is None:
        out.text(match.group(0))  # another environment: shown as written
        return
    _counted(out)
    out.trim()
    out.tag(f'<{tag} class="tex-list {name}">', " ")
    out.stack.append(Frame("list", name, f"</{tag}>", " "))


def _end(out: Layout, name: str, match: re.Match[str]) -> None:
    if name not in LISTS:
        out.text(match.group(0))
        return
    _counted(out)
    if out.stack and out.stack[-1].kind == "item":
        out.close(out.stack.pop())
    if not out.stack or out.stack[-1].kind != "list" or out.stack[-1].name != name:
        raise Unbalanced(f"\\end{{{name}}} closes nothing open")
    out.close(out.stack.pop())


def _item(out: Layout, _value: str, match: re.Match[str]) -> None:
    _counted(out)
    if out.stack and out.stack[-1].kind == "item":
        out.close(out.stack.pop())
    if not out.stack or out.stack[-1].kind != "list":
        raise Unbalanced("\\item outside a list")
    if match.group("label") is None:
        out.stack[-1].items += 1
        marker = f"{out.stack[-1].items}." if out.stack[-1].name == "enumerate" else "•"
        out.tag("<li>", f" {marker} ")
    else:
        label = match.group("label")
        shown = escaped(label)
        out.tag(f'<li class="labelled"><span class="item-label">{shown}</span> ', f" {label} ")
    out.stack.append(Frame("item", "", "</li>", " "))


def _style(out: Layout, name: str, _match: re.Match[str]) -> None:
    _counted(out)
    tag = STYLES[name]
    out.tag(f'<{tag} class="tex-{name}">')
    out.stack.append(Frame("style", tag, f"</{tag}>"))


def _switch(out: Layout, name: str, _match: re.Match[str]) -> None:
    _counted(out)
    tag = SWITCHES[name]
    out.tag(f"<{tag}>")
    out.stack.append(Frame("style", tag, f"</{tag}>"))


def _brace(out: Layout, brace: str, _match: re.Match[str]) -> None:
    """`{` opens a group shown as written; `}` closes the innermost group or argument,
    and one that closes nothing open is shown as written."""
    if brace == "{":
        out.text("{")
        out.stack.append(Frame("group", "", "}", "}"))
        return
    braced = [frame for frame in out.stack if frame.kind in ("group", "style")]
    if not braced:
        out.text("}")
        return
    if out.stack[-1] is not braced[-1]:
        raise Unbalanced("a `}` that closes across a list")
    frame = out.stack.pop()
    out.tag(frame.close_html, frame.close_plain) if frame.kind == "style" else out.text("}")


def _line_break(out: Layout, _value: str, _match: re.Match[str]) -> None:
    _counted(out)
    out.tag("<br>", " ")


def _symbol(out: Layout, name: str, _match: re.Match[str]) -> None:
    _counted(out)
    out.text(SYMBOLS[name])


def _ignored(out: Layout, _name: str, _match: re.Match[str]) -> None:
    _counted(out)


def _escaped_character(out: Layout, character: str, _match: re.Match[str]) -> None:
    _counted(out)
    out.text({",": "\u2009", ";": " "}.get(character, character))


def _dash(out: Layout, dash: str, _match: re.Match[str]) -> None:
    out.text("—" if dash == "---" else "–")


def _quote(out: Layout, quote: str, _match: re.Match[str]) -> None:
    # `''` closes only a quote `` opened: alone it is more likely a double prime (f'').
    if quote == "``":
        out.quote_open = True
        out.text("“")
    elif out.quote_open:
        out.quote_open = False
        out.text("”")
    else:
        out.text(quote)


def _tie(out: Layout, _value: str, _match: re.Match[str]) -> None:
    out.text("\u00a0")


def _counted(out: Layout) -> None:
    out.commands += 1


_HANDLERS = {
    "begin": _begin,
    "end": _end,
    "item": _item,
    "br": _line_break,
    "style": _style,
    "switch": _switch,
    "symbol": _symbol,
    "ignored": _ignored,
    "escaped": _escaped_character,
    "brace": _brace,
    "dash": _dash,
    "quote": _quote,
    "tie": _tie,
}
