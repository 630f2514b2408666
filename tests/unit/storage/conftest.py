"""Fixtures of the storage tests: the engines under test and joined helper threads.

Every test that takes ``engine_factory`` (or ``engine``) runs once per engine in
``ENGINE_FIXTURES``. To run the behaviour suite on another engine (the Spark engine):

1. write a fixture that yields an ``EngineFactory`` building a fresh, empty engine per call
   (it may use other fixtures: a session-scoped SparkSession, ``tmp_path``) and that cleans up
   the engines it built when the test ends;
2. add its name to ``ENGINE_FIXTURES`` with the ``spark`` marker, e.g.
   ``pytest.param("spark_engine_factory", id="spark", marks=pytest.mark.spark)``.

Tests that only make sense on one engine take that engine's own fixture instead.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Generic, Protocol, TypeVar

import pytest

from spark_replica.applier_core.storage import ExecMode, InMemoryEngine, StorageEngine

T = TypeVar("T")

#: Seconds a test waits for a helper thread before calling it hung.
JOIN_TIMEOUT = 10.0


class EngineFactory(Protocol):
    """Builds a fresh engine with no databases."""

    def __call__(
        self, *, exec_mode: ExecMode = ExecMode.STRICT, lock_wait_timeout: float = JOIN_TIMEOUT
    ) -> StorageEngine: ...


@pytest.fixture
def memory_engine_factory() -> EngineFactory:
    def build(
        *, exec_mode: ExecMode = ExecMode.STRICT, lock_wait_timeout: float = JOIN_TIMEOUT
    ) -> StorageEngine:
        return InMemoryEngine(exec_mode=exec_mode, lock_wait_timeout=lock_wait_timeout)

    return build


ENGINE_FIXTURES = [pytest.param("memory_engine_factory", id="memory")]


@pytest.fixture(params=ENGINE_FIXTURES)
def engine_factory(request: pytest.FixtureRequest) -> EngineFactory:
    factory: EngineFactory = request.getfixturevalue(request.param)
    return factory


@pytest.fixture
def engine(engine_factory: EngineFactory) -> StorageEngine:
    return engine_factory()


class Task(Generic[T]):
    """A function running in its own thread; ``result`` joins it and returns or re-raises."""

    def __init__(self, target: Callable[[], T], name: str) -> None:
        self._target = target
        self._value: T | None = None
        self._error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, name=name)
        self.thread.start()

    def _run(self) -> None:
        try:
            self._value = self._target()
        except BaseException as error:  # handed to the test thread by result()
            self._error = error

    def join(self, timeout: float = JOIN_TIMEOUT) -> None:
        self.thread.join(timeout)
        assert not self.thread.is_alive(), f"{self.thread.name} is hung"

    def result(self, timeout: float = JOIN_TIMEOUT) -> T:
        self.join(timeout)
        if self._error is not None:
            raise self._error
        return self._value  # type: ignore[return-value]

    def error(self, timeout: float = JOIN_TIMEOUT) -> BaseException | None:
        """The exception the function raised (None when it returned)."""
        self.join(timeout)
        return self._error

    @property
    def done(self) -> bool:
        return not self.thread.is_alive()


class Spawn(Protocol):
    def __call__(self, target: Callable[[], T], name: str = ...) -> Task[T]: ...


@pytest.fixture
def spawn() -> Iterator[Spawn]:
    """Start helper threads; every one is joined when the test ends (hung ones fail it)."""
    tasks: list[Task[object]] = []

    def start(target: Callable[[], T], name: str = "storage-test") -> Task[T]:
        task = Task(target, f"{name}-{len(tasks)}")
        tasks.append(task)  # type: ignore[arg-type]
        return task

    yield start
    hung = []
    for task in tasks:
        task.thread.join(JOIN_TIMEOUT)
        if task.thread.is_alive():
            hung.append(task.thread.name)
    assert not hung, f"helper threads still running: {hung}"
