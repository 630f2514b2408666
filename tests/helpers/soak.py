"""Short and long forms of the reliability tests.

A test marked ``soak`` runs in ``make test`` at its short size and in ``make soak``
(``SPARK_REPLICA_SOAK=1``) at its long one::

    @pytest.mark.soak
    def test_storm() -> None:
        for _ in range(soak_size(short=40, long=500)):
            ...
"""

from __future__ import annotations

import os

SOAK_VARIABLE = "SPARK_REPLICA_SOAK"


def soaking() -> bool:
    """Whether the long forms run (``SPARK_REPLICA_SOAK`` set to anything but empty or 0)."""
    return os.environ.get(SOAK_VARIABLE, "") not in ("", "0")


def soak_size(*, short: int, long: int) -> int:
    """``long`` under ``make soak``, ``short`` otherwise."""
    return long if soaking() else short
