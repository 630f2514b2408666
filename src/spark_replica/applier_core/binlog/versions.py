"""The version of the server that wrote a transaction, as the applier needs it to run
executable comments (``/*!NNNNN ... */``) the way that server did.

MySQL writes it in each Gtid event from 8.0.14 on (``original_server_version``: major *
10000 + minor * 100 + patch). A MariaDB source's GTID events carry none; the receiver puts
the version of the source's Format_description event in the Gtid events it converts
(``receiver.convert``), so MariaDB's 10.x to 19.x numbers tell a MariaDB source apart: no
MySQL version falls in that range (MySQL went from 9.x to 26.x).
"""

from __future__ import annotations

import re
from typing import NamedTuple


class SourceVersion(NamedTuple):
    """The version of the server that wrote a statement: ``number`` as MySQL writes it in
    Gtid events (major * 10000 + minor * 100 + patch) and whether it is MariaDB."""

    number: int
    mariadb: bool = False

    @classmethod
    def parse(cls, text: str) -> SourceVersion:
        """From a server version string (``8.4.3``, ``10.11.6-MariaDB-0+deb12u1-log``)."""
        found = re.match(r"(\d+)\.(\d+)\.(\d+)", text)
        if found is None:
            return UNKNOWN_VERSION
        major, minor, patch = (int(part) for part in found.groups())
        return cls(major * 10000 + minor * 100 + patch, "mariadb" in text.lower())

    @classmethod
    def of_gtid_event(cls, original_server_version: int) -> SourceVersion:
        """From a Gtid event's server version field. MySQL writes it from 8.0.14 on (0 means
        an older source); MariaDB sources carry their 10.x-19.x versions there once the
        receiver has converted their events (docs/receiver.md)."""
        number = original_server_version & 0x7FFFFFFF
        if number == 0 or number == 999999:  # not written, or MySQL's "undefined"
            return UNKNOWN_VERSION
        return cls(number, 100000 <= number < 200000)


#: A source that did not say its version: older than MySQL 8.0.14, the first to write it.
UNKNOWN_VERSION = SourceVersion(80013)
