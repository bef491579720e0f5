"""The reply-format study as one self-contained HTML page, through the Jinja template
app/web/templates/format_study.html (autoescaped: model names, statuses and messages from
the settings are text). Its own short stylesheet and the reports' Content-Security-Policy
(no script, nothing fetched); a bidi control anywhere is shown as its marker, as on every page."""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, select_autoescape

from app.calibration.formats import ATTEMPTS
from app.page_text import unhidden

TEMPLATES = Path(__file__).resolve().parents[1] / "web" / "templates"


@lru_cache(maxsize=1)
def _environment() -> Environment:
    return Environment(
        loader=FileSystemLoader(TEMPLATES),
        autoescape=select_autoescape(default=True, default_for_string=True),
        keep_trailing_newline=True,
    )


def study_page(study: Mapping[str, Any], *, title: str = "FaithScreen reply format study") -> str:
    template = _environment().get_template("format_study.html")
    page = template.render(study=study, title=title, attempts=ATTEMPTS)
    return unhidden(page)
