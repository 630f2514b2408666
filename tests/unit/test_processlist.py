"""SHOW PROCESSLIST's rows from the connections and the channels' status (the wire test
drives it through a server): Time counts from the last change of a thread's state."""

from __future__ import annotations

import time

from spark_replica.applier_core.channels.status import StatusBoard
from spark_replica.sql_handlers.processlist import ClientThread, client_rows


def test_a_state_change_restarts_its_time() -> None:
    board = StatusBoard()
    board.update(sql_state_text="Waiting for transactions from the relay log")
    first = board.snapshot().sql_state_since
    assert first > 0
    board.update(sql_state_text="Waiting for transactions from the relay log")  # unchanged
    assert board.snapshot().sql_state_since == first
    board.update(sql_state_text="")
    assert board.snapshot().sql_state_since >= first
    assert board.snapshot().io_state_since == 0.0  # the receiver never had a state


def test_client_rows_cut_the_statement_unless_full() -> None:
    now = time.monotonic()
    running = ClientThread(7, "bi", "10.0.0.9:5123", "shop", "SELECT " + "x" * 200, now - 3.5)
    idle = ClientThread(8, "root", "127.0.0.1:4000", None, None, now - 61)
    rows = client_rows([running, idle], full=False, now=now)
    assert rows == [
        (7, "bi", "10.0.0.9:5123", "shop", "Query", 3, "executing", ("SELECT " + "x" * 200)[:100]),
        (8, "root", "127.0.0.1:4000", None, "Sleep", 61, "", None),
    ]
    assert client_rows([running], full=True, now=now)[0][7] == "SELECT " + "x" * 200
