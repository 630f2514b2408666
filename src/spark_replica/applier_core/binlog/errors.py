"""The codec's one error type."""

from __future__ import annotations

from spark_replica.applier_core.errors import ErrorCode, ReplicaError, format_message


class BinlogError(Exception):
    """Raised when bytes are not a valid binary log event or file.

    ``file`` and ``position`` say where, when known; ``cause`` is the plain reason. The
    applier reports it as ER_REPLICA_RELAY_LOG_READ_FAILURE (13121): ``str(error)`` is the
    text after ``Relay log read failure: ``.
    """

    def __init__(self, cause: str, *, file: str = "", position: int | None = None) -> None:
        self.cause = cause
        self.file = file
        self.position = position
        super().__init__(self._text())

    def _text(self) -> str:
        where = []
        if self.file:
            where.append(f"file '{self.file}'")
        if self.position is not None:
            where.append(f"position {self.position}")
        return f"{self.cause} ({', '.join(where)})" if where else self.cause

    def at(self, file: str, position: int) -> BinlogError:
        """The same error, located; keeps a location already known."""
        return BinlogError(
            self.cause,
            file=self.file or file,
            position=self.position if self.position is not None else position,
        )


def read_failure(error: BinlogError, channel: str | None = None) -> ReplicaError:
    """ER_REPLICA_RELAY_LOG_READ_FAILURE (13121) for a relay log that cannot be read.

    With ``channel`` the text carries MySQL's applier prefix:
    ``Replica SQL for channel 'c1': Relay log read failure: ...``.
    """
    message = format_message(ErrorCode.REPLICA_RELAY_LOG_READ_FAILURE, str(error))
    if channel is not None:
        message = f"Replica SQL for channel '{channel}': {message}"
    return ReplicaError(ErrorCode.REPLICA_RELAY_LOG_READ_FAILURE, message)
