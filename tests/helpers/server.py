"""Start a real replica server in-process on a free loopback port."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pymysql

from spark_replica.applier_core.channels.components import Components
from spark_replica.server.app import BackgroundServer, ComponentsFactory, ReplicaServer
from spark_replica.server.config import ServerConfig, UserConfig

ROOT_PASSWORD = "root-secret"
READER = UserConfig("reader", "reader-secret", "read_only")


@contextmanager
def running_server(
    data_dir: Path, components: Components | ComponentsFactory | None = None, **config: Any
) -> Iterator[BackgroundServer]:
    settings = ServerConfig(
        bind="127.0.0.1",
        port=0,
        data_dir=data_dir,
        root_password=ROOT_PASSWORD,
        users=(READER,),
        **config,
    )
    server = BackgroundServer(ReplicaServer(settings, components, announce=lambda _: None))
    with server:
        yield server


def connect(port: int, user: str = "root", password: str = ROOT_PASSWORD, **kwargs: Any) -> Any:
    return pymysql.connect(
        host="127.0.0.1", port=port, user=user, password=password, autocommit=True, **kwargs
    )
