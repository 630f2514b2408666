"""The process ``test_crash`` kills: applies the workload's batches to the index at argv[1],
saying ``applying N`` before each and ``applied N`` after, then waiting for ``go``. With
``--stop-inside N``, it says ``inside N`` in the middle of batch N's second write transaction
of row changes and waits there (the kill then certainly lands after part of the batch is
committed and before the rest)."""

from __future__ import annotations

import sys
from typing import Any

from spark_replica.applier_core.storage.key_index import LmdbKeyIndex
from tests.unit.storage.key_index.workload import writes_for

SIZE = 3000


def main(path: str, stop_inside: int | None) -> int:
    index = LmdbKeyIndex(path, sync=True)
    number = index.batch
    change = index._change
    calls = {"changes": 0}

    def stopping_change(*args: Any, **kwargs: Any) -> Any:
        result = change(*args, **kwargs)
        calls["changes"] += number == stop_inside
        if calls["changes"] == 2:
            print(f"inside {number}", flush=True)
            sys.stdin.readline()
        return result

    index._change = stopping_change  # type: ignore[method-assign]
    while True:
        number += 1
        writes = writes_for(number, size=SIZE)
        print(f"applying {number}", flush=True)
        index.apply(number, writes)
        print(f"applied {number}", flush=True)
        if sys.stdin.readline() != "go\n":
            index.close()
            return 0


if __name__ == "__main__":
    stop = sys.argv[3] if sys.argv[2:3] == ["--stop-inside"] else None
    sys.exit(main(sys.argv[1], None if stop is None else int(stop)))
