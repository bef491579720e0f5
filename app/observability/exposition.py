"""The Prometheus text exposition format (version 0.0.4), written by hand: pure, no I/O.

Sample(labels, value, suffix)        one line of a metric family
MetricFamily(name, kind, help, samples)
render(families) -> str             the whole scrape body, newline-terminated
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
MetricKind = Literal["counter", "gauge", "histogram", "untyped"]


@dataclass(frozen=True, slots=True)
class Sample:
    labels: Mapping[str, str]
    value: float
    # "_bucket", "_sum", "_count" for a histogram's lines; "" for the family's own name.
    suffix: str = ""


@dataclass(frozen=True, slots=True)
class MetricFamily:
    name: str
    kind: MetricKind
    help: str
    samples: list[Sample] = field(default_factory=list)


def escape_label_value(value: str) -> str:
    """Backslash, double quote and newline are the three characters the format escapes."""
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def escape_help(text: str) -> str:
    # HELP text escapes backslash and newline only (quotes stay as they are).
    return text.replace("\\", "\\\\").replace("\n", "\\n")


def format_value(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if float(value).is_integer() and abs(value) < 2**53:
        return str(int(value))
    return repr(float(value))


def format_labels(labels: Mapping[str, str]) -> str:
    if not labels:
        return ""
    inner = ",".join(f'{key}="{escape_label_value(val)}"' for key, val in labels.items())
    return "{" + inner + "}"


def render_family(family: MetricFamily) -> list[str]:
    lines = [
        f"# HELP {family.name} {escape_help(family.help)}",
        f"# TYPE {family.name} {family.kind}",
    ]
    for sample in family.samples:
        name = family.name + sample.suffix
        lines.append(f"{name}{format_labels(sample.labels)} {format_value(sample.value)}")
    return lines


def render(families: Iterable[MetricFamily]) -> str:
    lines = [line for family in families for line in render_family(family)]
    return "\n".join(lines) + "\n"
