"""A process killed (SIGKILL) at a random moment while it applies batches leaves an index at
the batch it was applying, with exactly that batch's content, or at the one before with part
of the batch applied; ``align`` then brings it to the commit point recorded before that batch
exactly (CPT.0030: after a crash the replica resumes from a consistent point)."""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time
from pathlib import Path

import pytest

from spark_replica.applier_core.storage.key_index import LmdbKeyIndex
from tests.unit.storage.key_index.crash_child import SIZE
from tests.unit.storage.key_index.workload import model_after, writes_for

ROOT = Path(__file__).resolve().parents[4]


def _kill_while_applying(path: Path, target: int, delay: float | None) -> None:
    """Start the child, let it apply up to ``target``, kill it ``delay`` seconds into that
    batch's apply (None: in the middle of its write transaction)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}
    command = [sys.executable, "-m", "tests.unit.storage.key_index.crash_child", str(path)]
    if delay is None:
        command += ["--stop-inside", str(target)]
    child = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ROOT, env=env
    )
    assert child.stdin is not None and child.stdout is not None
    try:
        for line in child.stdout:
            if line == f"inside {target}\n" or (
                delay is not None and line == f"applying {target}\n"
            ):
                time.sleep(delay or 0)  # where in the apply the kill lands, not thread ordering
                child.kill()
                break
            if line.startswith("applied "):
                child.stdin.write("go\n")
                child.stdin.flush()
        else:
            pytest.fail(f"the child ended before batch {target}")
    finally:
        child.kill()
        child.wait(30)
        child.stdin.close()
        child.stdout.close()
    assert child.returncode == -9


@pytest.mark.parametrize("seed", range(4))
def test_a_killed_apply_leaves_the_batch_or_the_one_before(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    path = tmp_path / "index"
    recorded = 0
    outcomes = []
    for _ in range(3):
        target = recorded + rng.randint(1, 3)
        _kill_while_applying(path, target, rng.uniform(0, 0.01))
        with LmdbKeyIndex(path) as index:
            assert index.batch in (target - 1, target)
            outcomes.append(index.batch - target)
            if index.batch == target:
                assert model_after(target, size=SIZE).matches(index)
            index.align(target - 1)  # the commit point recorded before batch ``target``
            assert index.batch == target - 1
            assert model_after(target - 1, size=SIZE).matches(index)
        recorded = target - 1
    assert set(outcomes) <= {-1, 0}


def test_a_kill_between_the_write_transactions_of_a_batch_leaves_part_of_it(
    tmp_path: Path,
) -> None:
    path = tmp_path / "index"
    _kill_while_applying(path, 4, None)
    with LmdbKeyIndex(path) as index:
        assert index.batch == 3
        assert not model_after(3, size=SIZE).matches(index)  # part of batch 4 is in
        index.align(3)
        assert index.batch == 3
        assert model_after(3, size=SIZE).matches(index)
        index.apply(4, writes_for(4, size=SIZE))
        assert model_after(4, size=SIZE).matches(index)
