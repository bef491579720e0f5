"""The report pages' one Jinja environment: the summary report and the calibration page
are templates (app/web/templates/report_*.html, beside the review pages' templates, which
have their own environment in app/web/pages.py), so no text reaches them unescaped by
accident. They are files to open offline, not served pages: report_page.html holds their
stylesheet and a Content-Security-Policy allowing neither a script nor any fetch.

Every `{{ }}` passes through `finalize`: a bidi control becomes its plain marker
(app/page_text.py), then the text is escaped with the standard library's `html.escape`,
quotes included, as these pages were escaped before they were templates (`&#x27;`, where
Jinja's own escaping writes `&#39;`), so a page's bytes did not change with the move. A
`Markup` (a chart, a macro's output) is only marked. Autoescaping stays on as well: a value
that bypassed `finalize` would still be escaped, never sent raw.

Pure: templates in, text out; nothing here reads a database or the network. The
templates are read from app/web's folder, a file path and no import: app/web imports
app/reports, never the other way.
"""

from __future__ import annotations

from html import escape
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined
from markupsafe import Markup

from app.page_text import unhidden

TEMPLATES = Path(__file__).resolve().parents[1] / "web" / "templates"


def _finalized(value: object) -> Markup:
    """What `{{ value }}` writes: marked, and escaped unless it is markup already."""
    if isinstance(value, Markup):
        return Markup(unhidden(str(value)))
    return Markup(escape(unhidden(str(value)), quote=True))


report_templates = Environment(
    loader=FileSystemLoader(TEMPLATES),
    autoescape=True,
    finalize=_finalized,
    undefined=StrictUndefined,
    # Block tags on lines of their own leave no blank line behind: the page reads as
    # one element a line, as before.
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=True,
)


def render_report(name: str, **context: Any) -> str:
    """The template `name` rendered, with every bidi control of the whole page marked (a
    chart's SVG included, whatever put it there)."""
    return unhidden(report_templates.get_template(name).render(**context))
