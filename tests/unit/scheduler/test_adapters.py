"""Dependency adapters: LWM delays (T52, T53, DA.LWM.*) and sequential windows (T55)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spark_replica.applier_core.scheduler import (
    LwmDependencyAdapter,
    SequentialClockAdapter,
    Solution,
)


def _delays(adapter: LwmDependencyAdapter, pairs: Sequence[tuple[int, int]]) -> list[int]:
    """Delays for (last_committed, sequence_number) pairs, task ids from 0."""
    return [adapter.solve(i, seq, lc).delay for i, (lc, seq) in enumerate(pairs)]


def test_t52_same_commit_parent_runs_together_and_a_dependent_waits() -> None:
    adapter = LwmDependencyAdapter()
    assert adapter.solve(0, 1, 0) == Solution(0, None)
    assert adapter.solve(1, 2, 0) == Solution(0, None)
    assert adapter.solve(2, 3, 0) == Solution(0, None)
    assert adapter.solve(3, 4, 3) == Solution(3, 2)  # after task 2 (sequence_number 3)


def test_t53_a_restart_raises_the_barrier_to_the_first_task_after_it() -> None:
    adapter = LwmDependencyAdapter()
    pairs = [(0, 1), (1, 2), (1, 3), (0, 1), (1, 2), (0, 3), (2, 4)]
    assert _delays(adapter, pairs) == [0, 1, 1, 3, 4, 3, 5]
    assert adapter.barrier == 3


def test_reset_starts_a_new_epoch_even_without_a_lower_sequence_number() -> None:
    adapter = LwmDependencyAdapter()
    _delays(adapter, [(0, 1), (1, 2)])
    adapter.reset()  # a Format_description event
    assert adapter.solve(2, 3, 2) == Solution(2, None)  # seq 2 is from the previous epoch
    assert adapter.solve(3, 4, 3) == Solution(3, 2)


def test_last_committed_older_than_anything_seen_means_the_barrier() -> None:
    adapter = LwmDependencyAdapter()
    adapter.solve(10, 50, 40)  # a stream joined in the middle
    assert adapter.solve(11, 51, 45) == Solution(0, None)
    assert adapter.solve(12, 52, 50) == Solution(11, 10)


def test_a_gap_in_sequence_numbers_depends_on_the_last_one_below() -> None:
    adapter = LwmDependencyAdapter()
    _delays(adapter, [(0, 1), (1, 2), (2, 5)])  # 3 and 4 were never seen
    assert adapter.solve(3, 6, 4) == Solution(2, 1)


def test_invalid_pairs_wait_for_everything_and_start_an_epoch() -> None:
    adapter = LwmDependencyAdapter()
    _delays(adapter, [(0, 1), (0, 2)])
    assert adapter.solve(2, 0, 0) == Solution(2, None)  # sequence_number 0 (SEQ_UNINIT)
    assert adapter.solve(3, 3, 2) == Solution(3, None)  # seq 2 belongs to the old epoch
    assert adapter.solve(4, 4, 4) == Solution(4, None)  # depends on itself
    assert adapter.solve(5, 5, 4) == Solution(5, None)  # barrier after the invalid pair


def test_task_ids_must_increase() -> None:
    adapter = LwmDependencyAdapter()
    adapter.solve(3, 1, 0)
    with pytest.raises(ValueError, match="increase"):
        adapter.solve(3, 2, 1)
    with pytest.raises(ValueError):
        LwmDependencyAdapter(history=0)


def test_forgotten_sequence_numbers_give_a_delay_that_is_never_too_early() -> None:
    adapter = LwmDependencyAdapter(history=2)
    _delays(adapter, [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5)])  # seq 1 forgotten
    solution = adapter.solve(5, 6, 1)
    assert solution.delay >= 1  # the true delay (task 0 + 1)
    assert solution.delay <= 5
    assert "barrier=0" in repr(adapter)


_STREAM = st.lists(
    st.tuples(st.integers(0, 20), st.booleans(), st.booleans()), min_size=1, max_size=80
)


def _source_stream(steps: Sequence[tuple[int, bool, bool]]) -> list[tuple[int, int, bool]]:
    """(last_committed, sequence_number, restart) as a source writes them: sequence numbers
    count from 1 and restart at 1; last_committed lags behind."""
    out: list[tuple[int, int, bool]] = []
    seq = 0
    for lag, restart, _ in steps:
        seq = 1 if restart or seq == 0 else seq + 1
        out.append((max(0, seq - 1 - lag), seq, restart))
    return out


def _model_delays(stream: Sequence[tuple[int, int, bool]]) -> list[int]:
    """The contract, read literally, with unbounded memory."""
    delays: list[int] = []
    barrier = 0
    epoch: dict[int, int] = {}
    previous = 0
    for task_id, (lc, seq, _) in enumerate(stream):
        if seq <= previous:
            barrier, epoch = task_id, {}
        previous = seq
        known = [s for s in epoch if s <= lc]
        delays.append(max(barrier, epoch[max(known)] + 1) if lc and known else barrier)
        epoch[seq] = task_id
    return delays


@settings(max_examples=300, deadline=None, database=None)
@given(_STREAM, st.integers(1, 8))
def test_lwm_adapter_matches_the_contract(
    steps: list[tuple[int, bool, bool]], history: int
) -> None:
    stream = _source_stream(steps)
    model = _model_delays(stream)
    full = LwmDependencyAdapter()
    assert [full.solve(i, seq, lc).delay for i, (lc, seq, _) in enumerate(stream)] == model
    short = LwmDependencyAdapter(history=history)
    for task_id, ((lc, seq, _), expected) in enumerate(zip(stream, model, strict=True)):
        delay = short.solve(task_id, seq, lc).delay
        assert expected <= delay <= task_id


def test_t55_sequential_windows() -> None:
    adapter = SequentialClockAdapter()
    pairs = [(1, 0), (2, 1), (3, 1), (4, 3)]  # (sequence_number, last_committed)
    assert [adapter.solve(i, s, lc).delay for i, (s, lc) in enumerate(pairs)] == [1, 2, 2, 3]
    assert adapter.solve(4, 5, 0) == Solution(4, None)


def test_sequential_window_never_holds_a_task_and_its_dependency() -> None:
    # Read literally, the seed puts (4, 2) into the window of seq 2 (ambiguity 43).
    adapter = SequentialClockAdapter()
    pairs = [(1, 0), (2, 1), (3, 1), (4, 2)]
    windows = [adapter.solve(i, s, lc).delay for i, (s, lc) in enumerate(pairs)]
    assert windows == [1, 2, 2, 3]


def test_sequential_windows_restart_on_reset_and_lower_sequence_numbers() -> None:
    adapter = SequentialClockAdapter()
    assert adapter.solve(0, 5, 1).delay == 1
    assert adapter.solve(1, 6, 1).delay == 1
    assert adapter.solve(2, 2, 1).delay == 2  # sequence restart
    adapter.reset()
    assert adapter.solve(3, 3, 1).delay == 3
    assert adapter.solve(4, 0, 0).delay == 4  # invalid: a window of its own
    assert "C=4" in repr(adapter)


@settings(max_examples=300, deadline=None, database=None)
@given(_STREAM)
def test_sequential_windows_put_every_dependency_in_an_earlier_window(
    steps: list[tuple[int, bool, bool]],
) -> None:
    stream = _source_stream(steps)
    adapter = SequentialClockAdapter()
    windows = [adapter.solve(i, seq, lc).delay for i, (lc, seq, _) in enumerate(stream)]
    assert windows == sorted(windows)
    epoch_start = 0
    for task_id, (lc, _seq, restart) in enumerate(stream):
        if restart or task_id == 0:
            epoch_start = task_id
            assert task_id == 0 or windows[task_id] > windows[task_id - 1]
        for earlier in range(epoch_start, task_id):
            if stream[earlier][1] <= lc:  # a transaction this one depends on
                assert windows[earlier] < windows[task_id]
