"""``tests/bench/profile_split.py``: py-spy's samples put in the replica's stages."""

from __future__ import annotations

import pytest

from tests.helpers.scripts import bench_script

SRC = "/repo/src/spark_replica"


@pytest.mark.parametrize(
    ("thread", "frames", "expected"),
    [
        ("receiver-m1", [f"read (/{SRC}/applier_core/binlog/stream.py:10)"], "receive"),
        ("m1-worker-2", [f"run (/{SRC}/applier_core/csa/worker.py:5)",
                         f"decode_rows (/{SRC}/applier_core/binlog/rows/image.py:9)"], "decode"),
        ("m1-worker-2", [f"run (/{SRC}/applier_core/csa/worker.py:5)",
                         f"get (/{SRC}/applier_core/storage/key_index/lmdb_index.py:3)"],
         "key index"),
        ("m1-worker-1", [f"apply (/{SRC}/applier_core/apply/rows.py:7)"], "apply"),
        ("m1-worker-1", ["wait (/usr/lib/python3.11/threading.py:320)"], "apply"),
        ("m1-scheduler", ["wait (/usr/lib/python3.11/threading.py:320)"], "schedule"),
        ("m1-csa", [f"x (/{SRC}/applier_core/scheduler/graph.py:1)"], "schedule"),
        ("spark-engine-flusher", ["send (/venv/site-packages/py4j/clientserver.py:1)"],
         "flush to storage"),
        ("MainThread", ["select (/usr/lib/python3.11/selectors.py:468)"], "serve SQL"),
        ("asyncio_3", [f"q (/{SRC}/sql_handlers/dispatch.py:2)"], "serve SQL"),
        ("Thread-2 (serve_forever)", ["select (/usr/lib/python3.11/selectors.py:415)"], "other"),
    ],
)  # fmt: skip
def test_a_sample_goes_to_the_stage_of_its_innermost_named_frame_else_its_thread(
    thread: str, frames: list[str], expected: str
) -> None:
    with bench_script("profile_split") as profile:
        assert profile.stage(thread, frames) == expected


def test_raw_output_is_counted_per_stage_and_shared_out() -> None:
    raw = (
        f"thread (11): receiver-m1;run (/{SRC}/applier_core/receiver/thread.py:1) 30\n"
        f"thread (12): m1-worker-1;a (/{SRC}/applier_core/apply/rows.py:1) 50\n"
        "thread (13): MainThread;select (/usr/lib/python3.11/selectors.py:468) 20\n"
        "garbage line\n"
    )
    with bench_script("profile_split") as profile:
        samples = profile.split(raw)
        shares = profile.shares(samples)
    assert dict(samples) == {"receive": 30, "apply": 50, "serve SQL": 20}
    assert shares["apply"] == 0.5 and shares["decode"] == 0.0
    assert list(shares) == list(profile.STAGES)
