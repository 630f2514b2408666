#!/usr/bin/env python3
"""Fetch the jars the SparkSession loads (Iceberg's Spark runtime, JDBC drivers) from Maven
Central into the virtualenv, each checked against the repository's ``.sha1`` file and the
SHA-256 pinned in ``spark_replica.applier_core.storage.spark.jars``.

Run by ``make install`` with the virtualenv's Python: ``.venv/bin/python tools/fetch_jars.py``.
A jar already present with the right digest is kept; a wrong or partial one is fetched again.
Another repository (a mirror) is given by ``--repository`` or ``SPARK_REPLICA_MAVEN_REPOSITORY``.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import tempfile
import urllib.request
from pathlib import Path

from spark_replica.applier_core.storage.spark.jars import JARS, Jar, jar_dir

MAVEN_CENTRAL = "https://repo1.maven.org/maven2"
TIMEOUT = 120


def _get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=TIMEOUT) as response:  # noqa: S310 (https only)
        data: bytes = response.read()
    return data


def _expected_sha1(repository: str, jar: Jar) -> str:
    # A .sha1 file holds the digest, sometimes followed by the file's name.
    return _get(f"{repository}/{jar.path}.sha1").decode("ascii").split()[0].strip().lower()


def _digests(data: bytes) -> tuple[str, str]:
    """SHA-1 (what Maven Central publishes) and SHA-256 (what the project pins)."""
    return hashlib.sha1(data).hexdigest(), hashlib.sha256(data).hexdigest()  # noqa: S324


def fetch(jar: Jar, directory: Path, repository: str) -> Path:
    """``jar`` in ``directory``, fetched unless a copy with the published digest is there."""
    target = directory / jar.file_name
    expected = _expected_sha1(repository, jar)
    if target.is_file() and _digests(target.read_bytes()) == (expected, jar.sha256):
        return target
    data = _get(f"{repository}/{jar.path}")
    sha1, sha256 = _digests(data)
    if sha1 != expected:
        raise SystemExit(f"{jar.file_name}: SHA-1 {sha1}, the repository publishes {expected}")
    if sha256 != jar.sha256:
        raise SystemExit(f"{jar.file_name}: SHA-256 {sha256}, the project pins {jar.sha256}")
    with tempfile.NamedTemporaryFile(dir=directory, delete=False, suffix=".part") as part:
        part.write(data)
    os.chmod(part.name, 0o644)
    os.replace(part.name, target)
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, default=jar_dir(), help="target folder")
    parser.add_argument(
        "--repository",
        default=os.environ.get("SPARK_REPLICA_MAVEN_REPOSITORY", MAVEN_CENTRAL),
        help="Maven repository base URL",
    )
    args = parser.parse_args(argv)
    args.dir.mkdir(parents=True, exist_ok=True)
    wanted = {jar.file_name for jar in JARS}
    for jar in JARS:  # other versions of the same artifacts: two runtimes must not mix
        for stale in args.dir.glob(f"{jar.artifact}-*.jar"):
            if stale.name not in wanted:
                stale.unlink()
    for jar in JARS:
        path = fetch(jar, args.dir, args.repository.rstrip("/"))
        print(f"{path} ok", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
