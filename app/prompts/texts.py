"""The prompt templates: plain-text files in `templates/`, shipped as package data."""

from __future__ import annotations

from functools import cache
from importlib.resources import files


@cache
def template(name: str) -> str:
    """One template's text, without the file's final newline."""
    path = files("app.prompts") / "templates" / name
    return path.read_text(encoding="utf-8").removesuffix("\n")
