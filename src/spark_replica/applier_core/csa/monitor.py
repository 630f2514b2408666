"""The applier channel monitor (DES.ACM.0010, WL10500.ACM.1, UNBLOCK.1).

The service samples the channel's progress (transactions committed, the LWM and commit-order
clocks, the transactions in flight) at every turn of its loop; the monitor compares samples one
refresh interval apart. When nothing moved over a whole interval while work is in flight, the
channel is stalled and the monitor asks for a scheduler unblock, at most ``allowed`` times per
stall (the budget grows with the sessions in flight, as MySQL's does). Any progress ends the
stall and restores the budget. Pure: no threads, no clocks of its own.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass

#: MySQL's default refresh interval, in seconds.
REFRESH_INTERVAL = 10.0


@dataclass(slots=True)
class ChannelMonitor:
    """Decides when a stalled channel gets an unblock."""

    allowed: int
    """Unblocks per stall."""
    interval: float = REFRESH_INTERVAL
    unblocks: int = 0
    """Unblocks asked for, in all."""
    stall_unblocks: int = 0
    """Unblocks asked for in the current stall."""
    _sample: Hashable = None
    _since: float | None = None

    def check(self, now: float, progress: Hashable, busy: bool) -> bool:
        """Record a sample taken at ``now`` (seconds); True when an unblock is due.

        ``progress`` is anything that changes whenever the applier progresses; ``busy`` says
        whether transactions are in flight (an idle channel is not stalled).
        """
        if not busy or progress != self._sample or self._since is None:
            if progress != self._sample or not busy:
                self.stall_unblocks = 0
            self._sample, self._since = progress, now
            return False
        if now - self._since < self.interval or self.stall_unblocks >= self.allowed:
            return False
        self._since = now  # the next unblock waits for another quiet interval
        self.stall_unblocks += 1
        self.unblocks += 1
        return True
