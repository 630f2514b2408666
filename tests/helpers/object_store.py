"""An S3-compatible object store for tests: moto's server in a child process on 127.0.0.1.

:func:`running_s3` starts ``python -m moto.server`` on a free port of the loopback address,
waits until it answers, and stops it on exit; :class:`S3Server` makes buckets and lists their
objects with boto3. Moto keeps everything in the child's memory: nothing reaches the disk.
Without moto (``pip install 'moto[server]'``) the fixtures' users skip.
"""

from __future__ import annotations

import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.helpers.mariadb import free_port

#: Credentials and region moto accepts (any would do); never those of a real account.
ACCESS_KEY_ID = "replica-test-key"
SECRET_ACCESS_KEY = "replica-test-secret-1b9d"
REGION = "us-east-1"
#: Seconds moto gets to start answering.
START_TIMEOUT = 60.0


def moto_available() -> bool:
    """Whether moto's server and boto3 can be imported."""
    try:
        import boto3  # noqa: F401
        import moto.server  # noqa: F401
    except ImportError:
        return False
    return True


@dataclass(frozen=True)
class S3Server:
    """A running moto server, by its endpoint URL."""

    endpoint: str

    def client(self) -> Any:
        import boto3

        return boto3.client(
            "s3",
            endpoint_url=self.endpoint,
            aws_access_key_id=ACCESS_KEY_ID,
            aws_secret_access_key=SECRET_ACCESS_KEY,
            region_name=REGION,
        )

    def create_bucket(self, name: str) -> None:
        self.client().create_bucket(Bucket=name)

    def keys(self, bucket: str, prefix: str = "") -> list[str]:
        """Every object's key in ``bucket`` under ``prefix``."""
        pages = (
            self.client().get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
        )
        return [item["Key"] for page in pages for item in page.get("Contents", [])]

    def catalog_properties(self) -> dict[str, str]:
        """The Iceberg catalog properties that reach this server (``[spark.iceberg]``)."""
        return {
            "s3.endpoint": self.endpoint,
            "s3.path-style-access": "true",
            "s3.access-key-id": ACCESS_KEY_ID,
            "s3.secret-access-key": SECRET_ACCESS_KEY,
            "client.region": REGION,
        }


def _answers(endpoint: str) -> bool:
    try:
        with urllib.request.urlopen(f"{endpoint}/moto-api/", timeout=2):  # noqa: S310
            return True
    except urllib.error.HTTPError:
        return True  # an answer, if not a 200
    except OSError:
        return False


@contextmanager
def running_s3(log_dir: Path) -> Iterator[S3Server]:
    """A moto server on 127.0.0.1 for the duration (its output in ``log_dir/moto.log``)."""
    port = free_port()
    endpoint = f"http://127.0.0.1:{port}"
    log_dir.mkdir(parents=True, exist_ok=True)
    with (log_dir / "moto.log").open("ab") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            deadline = time.monotonic() + START_TIMEOUT
            while not _answers(endpoint):
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"moto did not start on {endpoint}: see {log.name}")
                time.sleep(0.2)
            yield S3Server(endpoint)
        finally:
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
