"""A backlog drained with Seconds_Behind_Source sampled all along, for both appliers.

The transactions carry source commit times from an hour ago, one every ``STEP`` seconds, so
the transaction the lag is computed from can be told from its neighbours. Chosen
transactions are held at their first row change (the engine's ``hold_apply``): while one is
held it is the oldest not committed once everything before it has committed, and the lag
must be ``now - its commit time - clock difference``; released, the lag moves on to the next
held one; once everything is applied the applier has caught up.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import replace

from spark_replica.applier_core.channels.lag import seconds_behind_source
from spark_replica.applier_core.channels.status import StatusBoard
from spark_replica.tools.generator.simulate import GeneratedTransaction
from tests.unit.csa_apply.faults import RecordingEngine
from tests.unit.csa_apply.harness import ChannelRun
from tests.unit.mta.harness import wait_until

#: Seconds between the source commit times of consecutive transactions.
STEP = 30
#: How far off a sample may be: whole seconds are shown, and the sample and the clock
#: reading it is checked against are not taken at the same instant.
SLACK = 2


def stamped(transactions: Sequence[GeneratedTransaction]) -> list[GeneratedTransaction]:
    """``transactions`` as a source committed them: the first an hour ago, then one every
    ``STEP`` seconds (all in the past)."""
    first = int((time.time() - 3600) * 1e6)
    return [
        replace(trx, commit_time_us=first + index * STEP * 1_000_000)
        for index, trx in enumerate(transactions)
    ]


def seconds_behind(status: StatusBoard, *, receiver_connected: bool = False) -> int | None:
    """Seconds_Behind_Source as SHOW REPLICA STATUS shows it while the applier runs (by
    default, as on a channel whose relay log was copied in and has no receiver)."""
    return seconds_behind_source(
        status.snapshot(), applier_running=True, receiver_connected=receiver_connected
    )


def drain_with_holds(
    replica: ChannelRun,
    status: StatusBoard,
    engine: RecordingEngine,
    transactions: Sequence[GeneratedTransaction],
    held: Sequence[int],
    *,
    uuid: str,
    clock_diff: int,
) -> list[int | None]:
    """Start ``replica`` on the relay log of ``transactions`` (stamped), holding the
    transactions numbered ``held`` in turn; returns every sample taken. Checks the lag at
    each held transaction, every sample's plausibility, and the caught-up values."""
    committed = {trx.gno: trx.commit_time_us / 1e6 for trx in transactions}
    releases = {gno: threading.Event() for gno in held}
    engine.faults.hold_apply.update(releases)
    status.update(source_clock_diff=clock_diff)  # what the receiver measured at connect
    samples: list[int | None] = []

    def plausible(value: int | None) -> bool:
        """0 before the applier has taken a transaction; else between the ages of the
        newest and the oldest transaction, less the clock difference."""
        now = time.time() - clock_diff
        newest, oldest = now - max(committed.values()), now - min(committed.values())
        return value == 0 or (value is not None and newest - SLACK <= value <= oldest + SLACK)

    def sample(*, caught_up: bool = False) -> int | None:
        value = seconds_behind(status)
        samples.append(value)
        assert plausible(value) or (caught_up and value is None), (value, samples[-10:])
        return value

    replica.start()
    try:
        for gno in held:

            def at_held(gno: int = gno) -> bool:
                value = sample()
                expected = time.time() - committed[gno] - clock_diff
                return value is not None and abs(value - expected) <= SLACK

            assert wait_until(at_held), (gno, samples[-10:])
            assert not replica.executed.contains(uuid, "", gno)  # still held: the lag is its
            releases[gno].set()
        last = max(committed)
        assert replica.wait_for(f"{uuid}:1-{last}")
        # Caught up: NULL without a receiver; 0 with one connected.
        assert wait_until(lambda: sample(caught_up=True) is None), samples[-10:]
        assert seconds_behind(status, receiver_connected=True) == 0
    finally:
        for release in releases.values():
            release.set()
    return samples
