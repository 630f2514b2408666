"""The driver JVM maps the class archive ``make install`` records (restart to serving in
at most 15 s: Spark's start is most of it), and leaves a choice of the user's alone."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from spark_replica.applier_core.storage.spark.class_archive import (
    DRIVER_JAVA_OPTIONS,
    archive_path,
    recording_options,
    with_archive,
)
from spark_replica.applier_core.storage.spark.session import spark_options


@pytest.fixture
def archive(tmp_path: Path) -> Path:
    path = archive_path(tmp_path)
    path.write_bytes(b"an archive")
    return path


def test_the_archive_is_added_to_the_driver_options_given(archive: Path) -> None:
    assert with_archive({}, archive)[DRIVER_JAVA_OPTIONS] == f"-XX:SharedArchiveFile={archive}"
    given = {DRIVER_JAVA_OPTIONS: "-XX:+UseSerialGC", "spark.master": "local[1]"}
    assert with_archive(given, archive) == {
        DRIVER_JAVA_OPTIONS: f"-XX:+UseSerialGC -XX:SharedArchiveFile={archive}",
        "spark.master": "local[1]",
    }
    assert spark_options({}, jars=[], archive=archive)[DRIVER_JAVA_OPTIONS].endswith(
        f"-XX:SharedArchiveFile={archive}"
    )


def test_without_the_archive_the_options_stay_as_given(tmp_path: Path) -> None:
    missing = archive_path(tmp_path)
    assert with_archive({}, missing) == {}
    assert DRIVER_JAVA_OPTIONS not in spark_options({}, jars=[], archive=missing)


@pytest.mark.parametrize(
    "own",
    ["-XX:SharedArchiveFile=/opt/mine.jsa", "-Xshare:off", "-XX:ArchiveClassesAtExit=/tmp/x"],
)
def test_a_choice_of_the_users_about_archives_stands(archive: Path, own: str) -> None:
    given = {DRIVER_JAVA_OPTIONS: f"-Xss512k {own}"}
    assert with_archive(given, archive) == given


def test_recording_writes_the_archive_named_and_quietly(tmp_path: Path) -> None:
    options = recording_options(tmp_path / "new.jsa")[DRIVER_JAVA_OPTIONS].split()
    assert f"-XX:ArchiveClassesAtExit={tmp_path / 'new.jsa'}" in options
    assert "-Xlog:cds*=off" in options


@pytest.mark.spark
def test_the_session_s_jvm_maps_the_installed_archive(spark: Any) -> None:
    installed = archive_path()
    if not installed.is_file():
        pytest.skip("no class archive installed (make install records it)")
    arguments = spark.sparkContext._jvm.java.lang.management.ManagementFactory.getRuntimeMXBean()
    assert f"-XX:SharedArchiveFile={installed}" in list(arguments.getInputArguments())
    pid = spark.sparkContext._gateway.proc.pid
    maps = Path(f"/proc/{pid}/maps").read_text()
    assert str(installed) in maps, "the JVM was given the archive but did not map it"


@pytest.mark.spark
def test_the_driver_jvm_runs_with_two_malloc_arenas(spark: Any) -> None:
    """``get_spark`` launches the driver JVM with ``MALLOC_ARENA_MAX=2`` (its native memory
    does not fragment over one arena per thread) unless the environment sets it."""
    pid = spark.sparkContext._gateway.proc.pid
    environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    given = os.environ.get("MALLOC_ARENA_MAX", "2")
    assert f"MALLOC_ARENA_MAX={given}".encode() in environ
