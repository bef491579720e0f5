"""The FAITHSCREEN_* environment as a command sees it.

A value the settings refuse becomes one line per variable, naming it and what it takes
(`FAITHSCREEN_CONFIRMATIONS='abc' is not accepted: it takes a whole number from 0 to 5`),
never a traceback. A FAITHSCREEN_* name that nothing reads is ignored by the settings, so
a typo would pass unseen: it is warned about, with the closest name that is read.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping
from typing import Any, Literal, TypeGuard, get_args, get_origin

from annotated_types import Ge, Gt, Le, Lt
from pydantic import BaseModel, SecretStr, ValidationError
from pydantic.fields import FieldInfo
from pydantic_settings import SettingsError

from app.settings import (
    JUDGES_ENV,
    MIGRATIONS_DIR_ENV,
    PANEL_ERROR,
    ProviderSettings,
    Settings,
    judge_names_of,
    judge_prefix,
)

PREFIX = "FAITHSCREEN_"
# The test suite's own variables (FAITHSCREEN_TEST_POSTGRES_URL): no setting, no typo.
TEST_PREFIX = "FAITHSCREEN_TEST_"
# The key `submit` and `eval --server` send: a client's variable, not a server setting.
API_KEY_ENV = "FAITHSCREEN_API_KEY"
READ_OUTSIDE_SETTINGS = frozenset({API_KEY_ENV, MIGRATIONS_DIR_ENV})
SINGLE_JUDGE_PREFIX = "FAITHSCREEN_JUDGE_"
_KINDS = {bool: "true or false", int: "a whole number", float: "a number"}


def known_variables(environ: Mapping[str, str] | None = None) -> set[str]:
    """Every FAITHSCREEN_* name something reads: each setting, each field of a setting
    group (FAITHSCREEN_TRANSLATOR_MODEL) and the group itself (a JSON object), and each
    field of every judge `environ` names in FAITHSCREEN_JUDGES (FAITHSCREEN_JUDGE_A_MODEL)."""
    names = set(READ_OUTSIDE_SETTINGS)
    for judge in _panel_of(environ or {}):
        names.update(judge_prefix(judge) + sub.upper() for sub in ProviderSettings.model_fields)
    for name, field in Settings.model_fields.items():
        variable = PREFIX + name.upper()
        names.add(variable)
        group = _group(field)
        if group is not None:
            names.update(f"{variable}_{sub.upper()}" for sub in group.model_fields)
    return names


def unknown_variable_warnings(environ: Mapping[str, str]) -> list[str]:
    """A warning per FAITHSCREEN_* name that nothing reads, with the closest known one.
    Names are compared upper-cased, as the settings read them."""
    known = sorted(known_variables(environ))
    warnings = []
    for name in sorted(environ):
        upper = name.upper()
        if not upper.startswith(PREFIX) or upper.startswith(TEST_PREFIX) or upper in known:
            continue
        close = difflib.get_close_matches(upper, known, n=1)
        hint = f"; did you mean {close[0]}?" if close else ""
        warnings.append(f"{name} is not a FaithScreen setting and is ignored{hint}")
    return warnings


def ignored_judge_warning(environ: Mapping[str, str]) -> str | None:
    """With a panel, the single judge's FAITHSCREEN_JUDGE_* settings are not read: one
    warning naming those that are set, None when none is."""
    if not _panel_of(environ):
        return None
    single = {SINGLE_JUDGE_PREFIX + sub.upper() for sub in ProviderSettings.model_fields}
    ignored = sorted(name for name in environ if name.upper() in single)
    if not ignored:
        return None
    return (
        f"{', '.join(ignored)} {'is' if len(ignored) == 1 else 'are'} ignored: with "
        f"{JUDGES_ENV} set, each judge is configured under its name (FAITHSCREEN_JUDGE_<NAME>_*)"
    )


def _panel_of(environ: Mapping[str, str]) -> list[str]:
    value = next((v for k, v in environ.items() if k.upper() == JUDGES_ENV), "")
    return judge_names_of(value)


def bad_setting_lines(error: ValidationError | SettingsError) -> list[str]:
    """One line per refused variable: its name, the value given (never a secret's) and
    what it takes."""
    if isinstance(error, SettingsError):
        return [_unparsable_group(str(error))]
    lines: dict[tuple[str, ...], str] = {}
    for problem in error.errors(include_url=False):
        where = tuple(str(part) for part in problem["loc"])
        lines.setdefault(where, _refused(where, problem))
    return list(lines.values())


def is_settings_error(error: BaseException) -> TypeGuard[ValidationError | SettingsError]:
    """Raised while reading the settings, rather than by a command's own validation."""
    if isinstance(error, SettingsError):
        return True
    return isinstance(error, ValidationError) and error.title == Settings.__name__


def accepted(field: FieldInfo) -> str:
    """What a setting takes, in words: `a whole number from 0 to 5`, `one of on, off`."""
    annotation = field.annotation
    if get_origin(annotation) is Literal:
        return "one of " + ", ".join(str(choice) for choice in get_args(annotation))
    kind = _KINDS.get(annotation, "text") if isinstance(annotation, type) else "text"
    return kind + _bounds(field.metadata)


def _bounds(metadata: Iterable[object]) -> str:
    low = next((f"{m.ge:g}" for m in metadata if isinstance(m, Ge)), None)
    high = next((f"{m.le:g}" for m in metadata if isinstance(m, Le)), None)
    above = next((f"above {m.gt:g}" for m in metadata if isinstance(m, Gt)), None)
    below = next((f"below {m.lt:g}" for m in metadata if isinstance(m, Lt)), None)
    if low is not None and high is not None:
        return f" from {low} to {high}"
    parts = [
        *([f"of at least {low}"] if low is not None else []),
        *([above] if above else []),
        *([f"at most {high}"] if high is not None else []),
        *([below] if below else []),
    ]
    return " " + " and ".join(parts) if parts else ""


def _refused(where: tuple[str, ...], problem: Mapping[str, Any]) -> str:
    if problem["type"] == PANEL_ERROR:  # its message names the variable already
        return str(problem["msg"])
    variable = PREFIX + "_".join(where).upper()
    field = _field_at(where)
    if where[:1] == ("panel_providers",) and len(where) == 3:
        variable = judge_prefix(where[1]) + where[2].upper()
        field = ProviderSettings.model_fields.get(where[2])
    if field is None:
        return f"{variable} is not accepted: {problem['msg']}"
    given = problem.get("input")
    shown = f"={given!r}" if isinstance(given, str) and not _secret(field) else ""
    return f"{variable}{shown} is not accepted: it takes {accepted(field)}"


def _unparsable_group(message: str) -> str:
    # pydantic-settings words it `error parsing value for field "translator" from source ...`
    found = re.search(r'field "([^"]+)"', message)
    variable = PREFIX + (found[1].upper() if found else "*")
    return (
        f"{variable} is not accepted: it takes a JSON object of its settings "
        f"(or set them one by one, as {variable}_MODEL)"
    )


def _field_at(where: tuple[str, ...]) -> FieldInfo | None:
    field = Settings.model_fields.get(where[0]) if where else None
    for part in where[1:]:
        group = _group(field) if field is not None else None
        field = group.model_fields.get(part) if group is not None else None
    return field


def _group(field: FieldInfo) -> type[BaseModel] | None:
    annotation = field.annotation
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    return None


def _secret(field: FieldInfo) -> bool:
    return SecretStr in (field.annotation, *get_args(field.annotation))
