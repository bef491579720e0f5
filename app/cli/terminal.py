"""What the commands print, made inert: text from outside never steers the terminal.

A model name, a provider's error, a batch name, a key name, an external id or a file
name may hold escape sequences: `\\x1b]0;pwned\\x07` retitles the window, `\\x1b[2J` clears
the screen, and a bidirectional override (U+202E) shows text in another order than it
is. Every line a command prints goes through `echo` (or `shown`), which writes each
control character as a visible escape (`\\x1b`, `\\u202e`): C0 except newline and tab,
DEL, C1 and the bidirectional controls. Whether stdout is a terminal does not matter: a
log read later with `cat` or `less -R` is a terminal too. JSON is printed with
`echo_json` (app/json_lines.py escapes the same characters inside its strings).
"""

from __future__ import annotations

import re
from typing import Any

import typer

from app.evidence.bidi_controls import BIDI_CONTROLS
from app.json_lines import json_text

# C0 but tab and newline, DEL, C1, and the bidi controls the evidence check names.
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f" + "".join(BIDI_CONTROLS) + "]")


def _visible(found: re.Match[str]) -> str:
    code = ord(found[0])
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def shown(text: str) -> str:
    """`text` with every control character written as a visible escape (newline and tab
    kept: they lay out the tables and reports)."""
    return _CONTROLS.sub(_visible, text)


def echo(text: str = "", *, err: bool = False, nl: bool = True) -> None:
    """typer.echo, of `shown(text)`."""
    typer.echo(shown(text), err=err, nl=nl)


def echo_json(value: Any) -> None:
    typer.echo(json_text(value))
