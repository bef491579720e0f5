"""The calibration page (pure: the calibration and comparison objects in, one page out):
known counts and rates, a rate without cases, the partial warning, the comparison only
when given, escaping of text from users and providers, and nothing fetched from anywhere.

The input is what the API serves: a CalibrationTally and a compare() folded from known
screenings, validated by the endpoints' own schemas."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ElementTree
from html import escape
from typing import Any

from app.api.calibration_schemas import CalibrationOut, ComparisonOut
from app.calibration.compare import Judged, compare
from app.calibration.html import RATES, calibration_page
from app.calibration.tally import CalibrationTally, Call, LabelledScreening

HOSTILE_MODEL = "<script>alert('model')</script>"
HOSTILE_REASON = "judge_<b>mismatch</b>"
HOSTILE_BATCH = '"><img src=x onerror=alert(1)>'
# Longer than a narrow window, in characters a tag may hold and with no place a browser
# would break it: shown whole, never cut.
LONG_TAG = "minif2f_valid." + "amc12a_2021_p7." * 8
# Outcomes of 12 mismatch and 10 faithful screenings under A, and of the same pairs under
# B. A passes mismatch 0-1 and does not pass faithful 0-2; B passes mismatch 1-5 and does
# not pass faithful 0.
A_MISMATCH = ["passed"] * 2 + ["flagged"] * 8 + ["needs_review"] * 2
A_FAITHFUL = ["flagged"] + ["needs_review"] * 2 + ["passed"] * 7
B_MISMATCH = ["flagged"] + ["passed"] * 5 + ["flagged"] * 6
B_FAITHFUL = ["flagged"] + ["passed"] * 9


def call(role: str, model: str) -> Call:
    return Call(
        role=role,
        model=model,
        prompt_version="prompts-1",
        parser_version="contract-1",
        supplied=False,
        http_status=200,
        prompt_tokens=300,
        completion_tokens=40,
        latency_ms=800,
    )


def screening(label: str, outcome: str | None, index: int) -> LabelledScreening:
    """Every screening tagged `algebra`, every third also LONG_TAG; the first two of each
    label are definitions, the others theorems (so the `other` kind has no case)."""
    tags = ("algebra", LONG_TAG) if index % 3 == 0 else ("algebra",)
    return LabelledScreening(
        label=label,
        outcome=outcome,
        reasons=(HOSTILE_REASON, "translator_unclear") if outcome == "needs_review" else (),
        tags=tags,
        kind="definition" if index < 2 else "theorem",
        confirmations=0,
        policy_version="policy-1",
        evidence_version="evidence-1",
        calls=(call("translator", HOSTILE_MODEL), call("judge", "judge-model")),
    )


def calibration_of(
    outcomes: dict[str, list[str]], *, pending: int = 0, batch_id: str = "batch-a"
) -> dict[str, Any]:
    tally = CalibrationTally(unlabelled=3)
    for label, shown in outcomes.items():
        for index, outcome in enumerate(shown):
            tally.add(screening(label, outcome, index))
    for _ in range(pending):
        tally.add(screening("faithful", None, 0))
    body = {"batch_id": batch_id, **tally.as_json()}
    return CalibrationOut.model_validate(body).model_dump()


def batch_a(pending: int = 0) -> dict[str, Any]:
    return calibration_of({"mismatch": A_MISMATCH, "faithful": A_FAITHFUL}, pending=pending)


def comparison_of(a: str = "batch-a", b: str = "batch-b") -> dict[str, Any]:
    def judged(mismatch: list[str], faithful: list[str], conflict: str) -> dict[object, Judged]:
        pairs: dict[object, Judged] = {
            ("m", i): Judged("mismatch", o) for i, o in enumerate(mismatch)
        }
        pairs |= {("f", i): Judged("faithful", o) for i, o in enumerate(faithful)}
        return pairs | {"conflict": Judged(conflict, "passed")}

    result = compare(
        judged(A_MISMATCH, A_FAITHFUL, "faithful"), judged(B_MISMATCH, B_FAITHFUL, "mismatch")
    )
    return ComparisonOut.model_validate({"a": a, "b": b, **result.as_json()}).model_dump()


def row_of(page: str, first_cell: str) -> str:
    """The table row whose first cell is `first_cell` (escaped as the page escapes it)."""
    found = re.findall(
        rf'<tr><t[hd](?: class="wrap")?>{re.escape(escape(first_cell))}</t[hd]>.*?</tr>', page
    )
    assert len(found) == 1, (first_cell, found)
    return found[0]


def charts_of(page: str) -> list[str]:
    return re.findall(r"<svg .*?</svg>", page, flags=re.DOTALL)


def test_the_matrix_counts_each_label_by_outcome_with_errors_marked() -> None:
    page = calibration_page(batch_a())
    assert row_of(page, "mismatch") == (
        '<tr><th>mismatch</th><td class="count error">2</td><td class="count">8</td>'
        '<td class="count">2</td><td class="count">12</td></tr>'
    )
    assert row_of(page, "faithful") == (
        '<tr><th>faithful</th><td class="count">7</td><td class="count error">1</td>'
        '<td class="count error">2</td><td class="count">10</td></tr>'
    )
    assert row_of(page, "total").endswith(
        '<td class="count">9</td><td class="count">9</td><td class="count">4</td>'
        '<td class="count">22</td></tr>'
    )


def test_every_rate_shows_its_counts_and_over_ten_cases_its_interval() -> None:
    calibration = batch_a()
    page = calibration_page(calibration)
    for key, (name, _) in RATES.items():
        rate = calibration["rates"][key]
        assert f"({rate['k']}/{rate['n']}" in row_of(page, name), key
    assert "<td>16.7% (2/12, 95% CI 4.7-44.8%)</td>" in row_of(page, "false pass")
    assert "<td>30.0% (3/10, 95% CI 10.8-60.3%)</td>" in row_of(page, "false alarm")
    assert "<td>10.0% (1/10, 95% CI 1.8-40.4%)</td>" in row_of(page, "false flag")
    assert "<td>n&lt;10 (8/9)</td>" in row_of(page, "flag precision")
    assert "<td>n&lt;10 (7/9)</td>" in row_of(page, "pass precision")
    assert "<td>81.8% (18/22, 95% CI 61.5-92.7%)</td>" in row_of(page, "automation")
    rates_chart = next(c for c in charts_of(page) if "<title>Rates with 95% intervals" in c)
    # A dot for each rate over 10 cases or more; the two over 9 get none.
    assert rates_chart.count('<g class="interval">') == 4
    assert ">n&lt;10 (8/9)</text>" in rates_chart and ">n&lt;10 (7/9)</text>" in rates_chart


def test_a_rate_without_cases_says_so_instead_of_a_dot() -> None:
    page = calibration_page(calibration_of({"mismatch": ["passed"] * 10 + ["needs_review"]}))
    for name in ("false alarm", "false flag", "flag precision"):
        assert "<td>no cases (0/0)</td>" in row_of(page, name), name
    assert "<td>90.9% (10/11, 95% CI 62.3-98.4%)</td>" in row_of(page, "false pass")
    rates_chart = next(c for c in charts_of(page) if "<title>Rates with 95% intervals" in c)
    assert rates_chart.count(">no cases</text>") == 3
    assert rates_chart.count(">0/0</text>") == 3
    # false pass, pass precision (10/10) and automation (10/11) have cases enough.
    assert rates_chart.count('<g class="interval">') == 3


def test_an_empty_calibration_still_renders() -> None:
    page = calibration_page(calibration_of({}))
    assert page.startswith("<!doctype html>") and page.rstrip().endswith("</html>")
    assert page.count("No labelled screening is done yet.") == 2
    assert "No tags." in page and "No labelled screening needs review." in page
    assert page.count(">no cases</text>") == len(RATES)
    assert "<svg" in page and '<g class="interval">' not in page


def test_slices_show_labelled_and_both_error_rates_for_each_tag_and_kind() -> None:
    page = calibration_page(batch_a())
    # Tagged every third: mismatch 0, 3, 6, 9 (0 passed) and faithful 0, 3, 6, 9 (0 flagged).
    assert row_of(page, LONG_TAG) == (
        f'<tr><td class="wrap">{LONG_TAG}</td><td class="count">8</td>'
        "<td>n&lt;10 (1/4)</td><td>n&lt;10 (1/4)</td></tr>"
    )
    assert "…" not in page
    assert row_of(page, "algebra") == (
        '<tr><td class="wrap">algebra</td><td class="count">22</td>'
        "<td>16.7% (2/12, 95% CI 4.7-44.8%)</td><td>30.0% (3/10, 95% CI 10.8-60.3%)</td></tr>"
    )
    assert row_of(page, "definition").startswith(
        '<tr><td class="wrap">definition</td><td class="count">4<'
    )
    assert row_of(page, "other") == (
        '<tr><td class="wrap">other</td><td class="count">0</td>'
        "<td>no cases (0/0)</td><td>no cases (0/0)</td></tr>"
    )


def test_reasons_configs_and_cost_are_listed() -> None:
    page = calibration_page(batch_a())
    assert row_of(page, "translator_unclear") == (
        '<tr><td class="wrap">translator_unclear</td><td class="count">4</td></tr>'
    )
    config = re.findall(r'<tr><td class="count">22</td>.*?</tr>', page)[0]
    assert config == (
        f'<tr><td class="count">22</td><td class="wrap">translator: {escape(HOSTILE_MODEL)}'
        "<br>judge: judge-model</td><td>"
        + ", ".join(
            f'<span class="version">{v}</span>'
            for v in ("prompts-1", "contract-1", "policy-1", "evidence-1")
        )
        + "</td>"
        '<td class="count">0</td></tr>'
    )
    assert '<td>calls per screening</td><td class="count">2.00</td>' in page
    assert '<td>prompt tokens per screening</td><td class="count">600</td>' in page
    assert '<td>latency p95 ms</td><td class="count">800</td>' in page


def test_the_partial_warning_shows_only_while_labelled_screenings_are_pending() -> None:
    page = calibration_page(batch_a(pending=2))
    assert '<p class="warning"><strong>Partial:</strong> 2 labelled screenings' in page
    assert "3 unlabelled (not counted); 2 labelled and pending" in page
    assert 'class="warning"' not in calibration_page(batch_a())


def test_the_comparison_shows_only_when_given() -> None:
    assert 'id="comparison"' not in calibration_page(batch_a())
    page = calibration_page(batch_a(), comparison_of())
    assert "<p>A: batch batch-a (this page's batch)<br>B: batch batch-b</p>" in page
    assert "22 pairs labelled alike and done in both batches; 1 labelled differently" in page
    compared = page[page.index('id="comparison"') : page.index('id="calibration"')]
    assert row_of(compared, "false pass").endswith(
        "<td>16.7% (2/12, 95% CI 4.7-44.8%)</td><td>41.7% (5/12, 95% CI 19.3-68.0%)</td>"
        "<td>+25.0 points (+3 of 12 pairs)</td>"
        '<td class="count">1</td><td class="count">4</td><td class="count">0.375</td></tr>'
    )
    assert row_of(compared, "false alarm").endswith(
        "<td>30.0% (3/10, 95% CI 10.8-60.3%)</td><td>10.0% (1/10, 95% CI 1.8-40.4%)</td>"
        "<td>-20.0 points (-2 of 10 pairs)</td>"
        '<td class="count">2</td><td class="count">0</td><td class="count">0.500</td></tr>'
    )
    # A and B side by side, each with its dot and interval, in one chart per rate.
    charts = charts_of(compared)
    assert len(charts) == 2 and all(c.count('<g class="interval">') == 2 for c in charts)


def test_a_comparison_under_ten_pairs_counts_its_difference_in_pairs() -> None:
    small = comparison_of()
    small["rates"]["false_alarm"] |= {
        "a": {"k": 3, "n": 4, "rate": 0.75, "low": 0.3, "high": 0.95},
        "b": {"k": 0, "n": 4, "rate": 0.0, "low": 0.0, "high": 0.49},
        "difference": -0.75,
    }
    page = calibration_page(batch_a(), small)
    compared = page[page.index('id="comparison"') : page.index('id="calibration"')]
    assert "<td>n&lt;10 (3/4)</td><td>n&lt;10 (0/4)</td><td>-3 of 4 pairs</td>" in compared


def test_text_from_users_and_providers_is_escaped() -> None:
    calibration = batch_a() | {"batch_id": HOSTILE_BATCH}
    # Tags cannot hold `<` through the API, but the page does not rely on it.
    calibration["by_tag"]["<script>tag</script>"] = calibration["by_tag"]["algebra"]
    comparison = comparison_of(a=HOSTILE_BATCH, b=HOSTILE_MODEL)
    page = calibration_page(calibration, comparison, title=f"Calibration {HOSTILE_MODEL}")
    assert "<script" not in page.lower() and "<img" not in page and "<b>" not in page
    assert "&lt;script&gt;alert(&#x27;model&#x27;)&lt;/script&gt;" in page
    assert "&quot;&gt;&lt;img src=x onerror=alert(1)&gt;" in page
    assert "judge_&lt;b&gt;mismatch&lt;/b&gt;" in page
    assert '<td class="wrap">&lt;script&gt;tag&lt;/script&gt;</td>' in page
    assert f"<title>Calibration {escape(HOSTILE_MODEL)}</title>" in page


def test_every_chart_is_well_formed_markup_and_nothing_is_fetched() -> None:
    page = calibration_page(batch_a(pending=1), comparison_of())
    charts = charts_of(page)
    # Outcomes by label, the rates, and A against B for false pass and false alarm.
    assert len(charts) == 4
    for chart in charts:
        ElementTree.fromstring(chart)  # raises on a tag left open or text not escaped
    assert not re.search(r"(?i)https?:|//[a-z]|<script|<link|<img|src=|href=|url\(|@import", page)
    assert "default-src 'none'" in page


def test_a_comparison_opens_the_page_before_the_calibration_it_details() -> None:
    page = calibration_page(batch_a(), comparison_of(), title="FaithScreen comparison")
    starts = [page.index(mark) for mark in ("<h1>", 'id="comparison"', 'id="calibration"')]
    assert starts == sorted(starts)
    # Every section of the calibration (the matrix first) follows the comparison.
    assert page.index('id="calibration"') < page.index("<th>mismatch</th>")


def test_the_batches_names_show_escaped_in_the_title_and_beside_their_ids() -> None:
    names = {"batch-a": HOSTILE_BATCH, "batch-b": "candidate"}
    title = f"FaithScreen comparison: candidate against {HOSTILE_BATCH}"
    page = calibration_page(batch_a(), comparison_of(), title=title, names=names)
    assert f"<title>{escape(title)}</title>" in page and f"<h1>{escape(title)}</h1>" in page
    hostile = escape(f'"{HOSTILE_BATCH}" (batch batch-a)')
    assert f"<p>A: {hostile} (this page's batch)<br>B: " in page
    assert "B: &quot;candidate&quot; (batch batch-b)</p>" in page
    assert HOSTILE_BATCH not in page
