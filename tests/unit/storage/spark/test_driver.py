"""How the engine tells that the Spark driver JVM it launched is gone, and what it says."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from spark_replica.applier_core.storage.spark.driver import driver_gone


def session(status: int | None, *, child: bool = True) -> SimpleNamespace:
    process = SimpleNamespace(pid=4321, poll=lambda: status) if child else None
    gateway = SimpleNamespace(proc=process)
    return SimpleNamespace(sparkContext=SimpleNamespace(_gateway=gateway))


@pytest.mark.parametrize(
    ("status", "how"),
    [
        (-9, "was killed by SIGKILL"),
        (1, "exited with status 1"),
        (-200, "was killed by signal 200"),
    ],
)
def test_an_exited_driver_is_named_with_how_it_ended(status: int, how: str) -> None:
    gone = driver_gone(session(status))
    assert gone is not None
    assert f"the Spark driver JVM (process 4321) {how}: nothing more can be made" in str(gone)


def test_a_running_driver_or_one_of_another_process_is_not_gone() -> None:
    assert driver_gone(session(None)) is None
    assert driver_gone(session(1, child=False)) is None
