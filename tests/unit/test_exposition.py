"""The hand-written Prometheus text format: HELP/TYPE lines, escaping, values, and a body
a parser reads back to exactly the samples that went in."""

from __future__ import annotations

import math
import re

import pytest

from app.observability.exposition import (
    MetricFamily,
    Sample,
    escape_label_value,
    format_value,
    render,
)

# name{labels} value, label values with \\, \" and \n escapes (the format's grammar).
_LINE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$")
_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(?:,|$)')


def _unescape(value: str) -> str:
    return re.sub(r"\\(.)", lambda m: {"n": "\n"}.get(m.group(1), m.group(1)), value)


def parse(body: str) -> list[tuple[str, dict[str, str], float]]:
    """A tiny parser: every sample line as (name, labels, value); comments checked apart."""
    samples = []
    for line in body.splitlines():
        if line.startswith("#"):
            assert re.match(r"^# (HELP|TYPE) [a-zA-Z_:][a-zA-Z0-9_:]* .+$", line), line
            continue
        match = _LINE.match(line)
        assert match, line
        name, labels, value = match.groups()
        pairs = _LABEL.findall(labels or "")
        assert "".join(f'{k}="{v}",' for k, v in pairs).rstrip(",") == (labels or ""), line
        samples.append((name, {k: _unescape(v) for k, v in pairs}, float(value)))
    return samples


def test_a_family_renders_help_type_and_one_line_per_sample() -> None:
    family = MetricFamily(
        "faithscreen_jobs",
        "gauge",
        "Jobs by status.",
        [Sample({"status": "queued"}, 3), Sample({"status": "done"}, 12)],
    )
    assert render([family]) == (
        "# HELP faithscreen_jobs Jobs by status.\n"
        "# TYPE faithscreen_jobs gauge\n"
        'faithscreen_jobs{status="queued"} 3\n'
        'faithscreen_jobs{status="done"} 12\n'
    )


def test_label_values_escape_backslash_quote_and_newline() -> None:
    assert escape_label_value('a\\b"c\nd') == 'a\\\\b\\"c\\nd'


def test_escaped_values_parse_back_to_the_original() -> None:
    tricky = 'model "x"\\v2\nnext, {le="1"}'
    body = render([MetricFamily("m", "gauge", "help", [Sample({"model": tricky, "r": "j"}, 1)])])
    assert parse(body) == [("m", {"model": tricky, "r": "j"}, 1.0)]


def test_help_text_escapes_newlines_so_it_stays_one_line() -> None:
    body = render([MetricFamily("m", "gauge", "two\nlines \\ here", [])])
    assert body.splitlines()[0] == "# HELP m two\\nlines \\\\ here"


def test_histogram_samples_carry_their_suffixes() -> None:
    samples = [
        Sample({"role": "judge", "le": "0.5"}, 1, "_bucket"),
        Sample({"role": "judge", "le": "+Inf"}, 2, "_bucket"),
        Sample({"role": "judge"}, 1.75, "_sum"),
        Sample({"role": "judge"}, 2, "_count"),
    ]
    body = render([MetricFamily("lat_seconds", "histogram", "Latency.", samples)])
    assert "# TYPE lat_seconds histogram\n" in body
    assert [name for name, _, _ in parse(body)] == [
        "lat_seconds_bucket",
        "lat_seconds_bucket",
        "lat_seconds_sum",
        "lat_seconds_count",
    ]
    assert parse(body)[2][2] == 1.75


@pytest.mark.parametrize(
    ("value", "text"),
    [(3, "3"), (3.0, "3"), (0.25, "0.25"), (math.inf, "+Inf"), (-math.inf, "-Inf"), (0, "0")],
)
def test_values_are_written_as_prometheus_reads_them(value: float, text: str) -> None:
    assert format_value(value) == text


def test_nan_is_written_as_nan() -> None:
    assert format_value(math.nan) == "NaN"


def test_a_sample_without_labels_has_no_braces() -> None:
    body = render([MetricFamily("age_seconds", "gauge", "Age.", [Sample({}, 4.5)])])
    assert body.endswith("\nage_seconds 4.5\n")
