"""The client-load report: latency figures by kind, and apart for the statements sent after
the opening burst (every client starts at once, so their first statements queue together)."""

from __future__ import annotations

from tests.helpers.client_load import LoadReport


def _report() -> LoadReport:
    report = LoadReport(clients=3, seconds=10.0)
    report.latencies = {"show": [1.0, 1.2, 0.010, 0.020], "select": [2.0, 0.5]}
    report.sent = {"show": [0.0, 0.1, 6.0, 8.0], "select": [0.0, 5.0]}
    return report


def test_figures_of_every_statement_and_of_those_after_the_opening() -> None:
    report = _report()
    assert report.figures("show") == {
        "statements": 4, "per_second": 0.4, "p50_ms": 20.0, "p99_ms": 1200.0, "max_ms": 1200.0,
    }  # fmt: skip
    after = report.figures("show", after=5.0)
    assert (after["statements"], after["p50_ms"], after["max_ms"]) == (2, 10.0, 20.0)
    assert after["per_second"] == 2 / 5.0  # over the 5 s after the opening
    assert report.figures(after=5.0)["statements"] == 3  # the select sent at 5.0 counts
    assert report.figures("missing", after=5.0)["statements"] == 0


def test_lines_and_summary_use_the_same_cut() -> None:
    report = _report()
    summary = report.summary(after=5.0)
    assert summary["by_kind"]["show"]["statements"] == 2
    assert summary["all"]["statements"] == 3
    lines = report.lines(after=5.0)
    assert lines[0].startswith("select") and lines[-1].startswith("all")
    assert "p50     10.0 ms" in lines[1]
