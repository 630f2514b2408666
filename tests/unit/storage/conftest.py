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
from pathlib import Path
from typing import TYPE_CHECKING, Generic, Protocol, TypeVar

import pytest

from spark_replica.applier_core.storage import ExecMode, InMemoryEngine, StorageEngine
from spark_replica.metadata.store import MetadataStore

if TYPE_CHECKING:
    from spark_replica.applier_core.storage.spark.engine import SparkEngine

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


@pytest.fixture
def spark_engine_factory(spark: object, tmp_path: Path) -> Iterator[EngineFactory]:
    """Spark engines, each with its own warehouse and SQLite metadata store under
    ``tmp_path``; closed (flushed, flusher joined) when the test ends."""
    from spark_replica.applier_core.storage.spark.engine import SparkEngine
    from spark_replica.metadata.factory import open_store

    built: list[tuple[SparkEngine, MetadataStore]] = []

    def build(
        *, exec_mode: ExecMode = ExecMode.STRICT, lock_wait_timeout: float = JOIN_TIMEOUT
    ) -> StorageEngine:
        where = tmp_path / f"spark-{len(built)}"
        where.mkdir()
        store = open_store(f"sqlite:///{where / 'metadata.db'}")
        engine = SparkEngine(
            spark,
            str(where / "warehouse"),
            store,
            exec_mode=exec_mode,
            lock_wait_timeout=lock_wait_timeout,
            flush_interval=0.05,
        )
        built.append((engine, store))
        return engine

    yield build
    for engine, store in built:
        engine.close()
        try:
            assert_durable_content(engine)
        finally:
            store.close()


def assert_durable_content(engine: SparkEngine) -> None:
    """Every table as recorded in Spark holds exactly what the engine shows (a closed engine
    has flushed every commit)."""
    from spark_replica.applier_core.storage.spark.table_writes import iter_rows

    state = engine.durable_state()
    assert sorted(state.tables) == engine.tables()
    for ref, stored in state.tables.items():
        durable = iter_rows(engine.spark, engine.iceberg, stored)
        assert sorted(map(repr, durable)) == sorted(map(repr, engine.rows(ref))), ref


ENGINE_FIXTURES = [
    pytest.param("memory_engine_factory", id="memory"),
    pytest.param("spark_engine_factory", id="spark", marks=pytest.mark.spark),
]


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
