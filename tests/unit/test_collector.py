"""The server's garbage collector thresholds (``server/collector.py``), observed in a fresh
process that keeps a growing heap of containers alive, as the replica does until a flush."""

from __future__ import annotations

import contextlib
import gc
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

_PROGRAM = textwrap.dedent(
    """
    import gc, json, sys
    from spark_replica.server.collector import collect_less_often

    if sys.argv[1] == "tuned":
        collect_less_often()
    collections = [0, 0, 0]

    def count(phase, info):
        if phase == "stop":
            collections[info["generation"]] += 1

    gc.callbacks.append(count)
    held = [[{"key": (n, [n])} for n in range(50_000)] for _ in range(16)]
    print(json.dumps({"collections": collections, "threshold": gc.get_threshold()}))
    """
)


def _collections(mode: str) -> dict[str, list[int]]:
    done = subprocess.run(
        [sys.executable, "-c", _PROGRAM, mode], check=True, capture_output=True, text=True
    )
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def test_a_growing_heap_of_live_containers_is_walked_far_less_often() -> None:
    default, tuned = _collections("default"), _collections("tuned")
    assert tuned["threshold"] == [50_000, 10, 10]
    # Default thresholds: thousands of young collections and whole-heap walks as it grows.
    assert default["collections"][0] > 2_000
    assert default["collections"][2] >= 5
    assert tuned["collections"][0] < default["collections"][0] / 20
    assert tuned["collections"][2] <= 1


def test_serve_tunes_the_collector_before_the_server_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from spark_replica.server import cli

    seen: dict[str, object] = {}

    def run_server(config: object) -> int:
        seen["threshold"] = gc.get_threshold()
        return 0

    monkeypatch.setattr(cli, "_run_server", run_server)
    monkeypatch.setattr(cli, "spark_started_early", lambda config: contextlib.nullcontext())
    monkeypatch.setattr(cli, "limit_malloc_arenas", lambda: True)  # not in the test process
    before = gc.get_threshold()
    try:
        assert cli.main(["serve", "--data-dir", str(tmp_path), "--engine", "memory"]) == 0
    finally:
        gc.set_threshold(*before)
    assert seen["threshold"] == (50_000, 10, 10)
