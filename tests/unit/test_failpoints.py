"""Failpoints: the ``SPARK_REPLICA_FAILPOINTS`` grammar, and an action at the n-th hit."""

from __future__ import annotations

import pytest

from spark_replica.applier_core import failpoints


def test_entries_name_an_action_and_the_hit_it_fires_at() -> None:
    assert failpoints.parse("a.b=kill@3, c=raise,") == {"a.b": ("kill", 3), "c": ("raise", 1)}
    assert failpoints.parse("") == {}


@pytest.mark.parametrize("text", ["a", "a=stop", "a=kill@x", "a=kill@"])
def test_a_malformed_entry_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="name=kill\\|raise\\[@n\\]"):
        failpoints.parse(text)


def test_the_action_runs_at_the_nth_hit_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(failpoints.ENVIRONMENT, "spark.x=raise@2")
    monkeypatch.setattr(failpoints, "_armed", None)
    monkeypatch.setattr(failpoints, "_hits", {})
    failpoints.hit("spark.x")
    failpoints.hit("spark.other")
    with pytest.raises(failpoints.FailpointError, match="failpoint spark.x \\(hit 2\\)"):
        failpoints.hit("spark.x")
    failpoints.hit("spark.x")  # the third passes


def test_unset_nothing_fires(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(failpoints.ENVIRONMENT, raising=False)
    monkeypatch.setattr(failpoints, "_armed", None)
    for _ in range(3):
        failpoints.hit("spark.table_committed")
