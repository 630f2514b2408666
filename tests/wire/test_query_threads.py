"""SELECTs over the replicated tables run on threads of their own (``spark-query_N``, one per
turn of ``spark.max_queries``): replication statements answer while every turn's query
waits for Spark. (Sharing the loop's default threads, SHOW REPLICA STATUS waited about a
second under 200 clients, and not at all once more queries ran than the loop had threads.)"""

from __future__ import annotations

import dataclasses
import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

from spark_replica.server.app import BackgroundServer, ReplicaServer
from spark_replica.server.config import ServerConfig, SparkConfig
from spark_replica.sql_handlers.query.interfaces import PinnedTables
from tests.helpers.server import ROOT_PASSWORD, connect

WAIT = 30.0
#: More turns than asyncio gives the loop default threads.
TURNS = min(32, (os.cpu_count() or 1) + 4) + 2


class SlowQueries:
    """A query engine whose queries return their one row only once ``release`` is set (a
    Spark job that takes long); ``fetching`` counts the fetches waiting."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.fetching = threading.Semaphore(0)

    def run(self, build: Callable[[PinnedTables], str], tag: str) -> SlowQuery:
        return SlowQuery(self)

    def cancel(self, tag: str) -> None:
        self.release.set()


@dataclasses.dataclass(frozen=True)
class Column:
    name: str
    mysql_type: str
    precision: int = 0
    scale: int = 0
    binary: bool = False
    nullable: bool = True


class SlowQuery:
    def __init__(self, engine: SlowQueries) -> None:
        self._engine = engine
        self._done = False

    @property
    def fields(self) -> Sequence[Column]:
        return [Column("n", "LONGLONG")]

    def fetch(self, count: int) -> list[tuple[object, ...]]:
        if self._done:
            return []
        self._engine.fetching.release()
        assert self._engine.release.wait(WAIT)
        self._done = True
        return [(1,)]

    def close(self) -> None:
        pass


def test_replication_statements_answer_while_every_query_turn_waits_for_spark(
    tmp_path: Path,
) -> None:
    config = ServerConfig(
        bind="127.0.0.1",
        port=0,
        data_dir=tmp_path / "data",
        root_password=ROOT_PASSWORD,
        spark=SparkConfig(max_queries=TURNS),
    )
    replica = ReplicaServer(config, announce=lambda _: None)
    queries = SlowQueries()
    replica.context = dataclasses.replace(replica.open(), queries=queries)
    answers: list[object] = []
    with BackgroundServer(replica) as server:

        def select() -> None:
            with connect(server.port) as conn, conn.cursor() as cur:
                cur.execute("SELECT n FROM shop.slow")
                answers.append(cur.fetchall())

        clients = [threading.Thread(target=select, name=f"client-{n}") for n in range(TURNS)]
        try:
            for client in clients:
                client.start()
            for _ in range(TURNS):  # every turn's query is in Spark, on a thread
                assert queries.fetching.acquire(timeout=WAIT)
            with connect(server.port, read_timeout=WAIT) as conn, conn.cursor() as cur:
                cur.execute("SHOW REPLICA STATUS")
                assert cur.fetchall() == ()
                cur.execute("CHANGE REPLICATION SOURCE TO SOURCE_HOST='src' FOR CHANNEL 'c1'")
                cur.execute("SELECT Host FROM mysql.slave_master_info")
                assert cur.fetchall() == (("src",),)
            assert answers == []  # the queries still wait
        finally:
            queries.release.set()
            for client in clients:
                client.join(WAIT)
    assert answers == [((1,),)] * TURNS
    assert not [t.name for t in threading.enumerate() if t.name.startswith("spark-query")]
