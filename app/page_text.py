"""Text from outside on a page: escaped, and every bidirectional control shown as a marker.

A bidi control (app/evidence/bidi_controls.py) is invisible, yet it reorders the text
around it, so a page that sent one to the browser could show a reviewer another statement
than the one stored. No page does: each control is replaced by a marker that names it,
`⟨U+202E RLO⟩`, and the text around it is shown in the order it is stored. One table,
one marker, two forms:
- `escaped`, for an element's content (a statement on the review page): the marker in a
  `<mark class="bidi">` whose title gives the character's full name;
- `unhidden`, anywhere else (an attribute, an SVG label, a whole report page, Jinja's
  `finalize` for every `{{ }}`, whose context is unknown): the marker as plain text,
  which holds nothing HTML reads as markup, so it is safe before or after escaping and
  in any context.
Lives at the top of app/ because the review pages (app/web) and the report pages
(app/reports, app/calibration) both use it, and app/web imports app/reports.
"""

from __future__ import annotations

from markupsafe import Markup, escape

from app.evidence.bidi_controls import BIDI_CONTROLS, code_point_name


def marker(control: str) -> str:
    """`⟨U+202E RLO⟩`: what is shown in place of a bidi control."""
    return f"⟨U+{ord(control):04X} {BIDI_CONTROLS[control]}⟩"


_PLAIN = {ord(control): marker(control) for control in BIDI_CONTROLS}
_TAGGED = {
    ord(control): f'<mark class="bidi" title="{code_point_name(control)}">{marker(control)}</mark>'
    for control in BIDI_CONTROLS
}


def unhidden(text: str) -> str:
    """`text` with each bidi control replaced by its plain marker (nothing else changes)."""
    return text.translate(_PLAIN)


def escaped(text: str) -> str:
    """`text` escaped as Jinja escapes (quotes too), each bidi control a `<mark>`: for an
    element's content only. Plain `str`, as adding a `Markup` to a `str` would escape
    the `str`, tags and all."""
    return str(escape(text)).translate(_TAGGED)


def escaped_plain(text: str) -> str:
    """`text` escaped, each bidi control its plain marker: for an attribute's value, or
    text where a `<mark>` may not be an HTML element (inside MathML or SVG)."""
    return str(escape(unhidden(text)))


def finalized(value: object) -> object:
    """Jinja's `finalize`, run on every `{{ }}` before it is escaped: no control reaches
    the page, whatever the expression and wherever it stands; a `Markup` stays one."""
    if isinstance(value, Markup):
        return Markup(unhidden(str(value)))
    return unhidden(value) if isinstance(value, str) else value
