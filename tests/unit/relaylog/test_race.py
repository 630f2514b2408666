"""Readers racing the writer: never a partial event, nothing lost, nothing reordered (T80)."""

from __future__ import annotations

import random
import tempfile
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spark_replica.applier_core.binlog.constants import MAGIC, EventType
from spark_replica.applier_core.binlog.relaylog import RelayEvent, RelayLog, RelayLogReader
from spark_replica.applier_core.binlog.relaylog import writer as writer_module
from tests.unit.relaylog.conftest import CHANNEL, new_writer
from tests.unit.relaylog.fakes import HEADER, numbered, payload_index

WAIT = 10.0
READERS = 3


def _sizes(count: int, seed: int) -> list[int]:
    rng = random.Random(seed)
    # Mostly small events, some larger than the writer's 64 KiB buffer.
    return [rng.choice([rng.randint(23, 600), rng.randint(600, 5000), rng.randint(70_000, 90_000)])
            if i % 50 == 0 else rng.randint(23, 3000) for i in range(count)]  # fmt: skip


def _check_contiguous(events: list[RelayEvent]) -> None:
    """Within a file every event starts where the previous one ended."""
    previous: RelayEvent | None = None
    for event in events:
        if previous is None or previous.file != event.file:
            assert event.start == len(MAGIC)
        else:
            assert event.start == previous.end
        assert event.end - event.start == len(event.data)
        previous = event


class _TricklingFile:
    """Hands every write to the OS in small flushed pieces, so readers racing the writer find
    partially written events in the file (past the published end) as often as possible."""

    PIECE = 97

    def __init__(self, real: Any) -> None:
        self.real = real

    def write(self, data: bytes) -> int:
        for at in range(0, len(data), self.PIECE):
            self.real.write(data[at : at + self.PIECE])
            self.real.flush()
        return len(data)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)


@pytest.mark.parametrize("trickle", [False, True], ids=["buffered", "trickling"])
def test_three_readers_race_a_writer(
    relay_log: RelayLog, monkeypatch: pytest.MonkeyPatch, trickle: bool
) -> None:
    if trickle:
        real_open = open
        monkeypatch.setattr(
            writer_module,
            "open",
            lambda *args, **kwargs: _TricklingFile(real_open(*args, **kwargs)),
            raising=False,
        )
    sizes = _sizes(1500, seed=5721)
    expected = [numbered(i, size) for i, size in enumerate(sizes)]
    start = threading.Barrier(READERS + 1, timeout=WAIT)
    errors: list[BaseException] = []
    results: dict[int, list[RelayEvent]] = {}

    def write() -> None:
        try:
            with new_writer(relay_log, max_size=256 * 1024) as writer:
                start.wait()
                for i, event in enumerate(expected):
                    # Unflushed appends let the file grow past the published end.
                    writer.append(event, flush=i % 4 != 0)
                    if i % 97 == 0:
                        writer.flush()
        except BaseException as error:
            errors.append(error)

    def read(n: int) -> None:
        events: list[RelayEvent] = []
        results[n] = events
        try:
            with RelayLogReader(relay_log) as reader:
                start.wait()
                queries = 0
                while queries < len(expected):
                    event = reader.next_event(WAIT)
                    assert event is not None, f"reader {n} starved after {queries} events"
                    events.append(event)
                    queries += event.data[4] == EventType.QUERY
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=write, name=f"relay-writer-{CHANNEL}")]
    threads += [threading.Thread(target=read, args=(n,), name=f"relay-reader-{n}")
                for n in range(READERS)]  # fmt: skip
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(WAIT * 3)
    assert not any(thread.is_alive() for thread in threads)
    assert errors == []
    assert len(relay_log.files()) > 3
    for events in results.values():
        _check_contiguous(events)
        queries = [e.data for e in events if e.data[4] == EventType.QUERY]
        assert len(queries) == len(expected)
        assert queries == expected


operations = st.lists(
    st.one_of(
        st.tuples(st.just("append"), st.integers(23, 3000), st.booleans()),
        st.tuples(st.just("rotate")),
        st.tuples(st.just("flush")),
        st.tuples(st.just("reopen")),
    ),
    max_size=40,
)


@settings(max_examples=40, deadline=None)
@given(operations, st.integers(200, 5000))
def test_any_sequence_of_writes_reads_back(ops: list[tuple[object, ...]], max_size: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        log = RelayLog.for_channel(Path(tmp), CHANNEL)
        log.open()
        written: list[bytes] = []
        writer = new_writer(log, max_size=max_size)
        writer.open()
        reader = RelayLogReader(log)
        seen: list[RelayEvent] = []
        for op in ops:
            if op[0] == "append":
                size, flush = op[1], op[2]
                assert isinstance(size, int) and isinstance(flush, bool)
                written.append(numbered(len(written), size))
                writer.append(written[-1], flush=flush)
            elif op[0] == "rotate":
                writer.rotate()
            elif op[0] == "flush":
                writer.flush()
            else:
                writer.close()
                writer.open()
            seen.extend(reader)  # a reader in step with the writer
        writer.close()
        seen.extend(reader)
        reader.close()
        with RelayLogReader(log) as fresh:
            again = list(fresh)
        log.close()
    assert [e.data for e in seen] == [e.data for e in again]
    _check_contiguous(again)
    assert [e.data for e in again if e.data[4] == EventType.QUERY] == written
    assert [payload_index(e.data) for e in again if e.data[4] == EventType.QUERY] == list(
        range(len(written))
    )
    files: list[tuple[str, list[RelayEvent]]] = []
    for event in again:
        if not files or files[-1][0] != event.file:
            files.append((event.file, []))
        files[-1][1].append(event)
    for position, (_, events) in enumerate(files):
        assert b"".join(e.data for e in events[:2]) == HEADER
        if position < len(files) - 1:
            assert events[-1].data[4] == EventType.ROTATE
