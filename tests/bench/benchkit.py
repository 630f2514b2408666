"""What the benchmark scripts share: the machine they ran on, a cache directory for generated
inputs, and the worker-count argument."""

from __future__ import annotations

import argparse
import os
import platform
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown cpu"


def load_average() -> str:
    try:
        return " ".join(f"{value:.2f}" for value in os.getloadavg())
    except OSError:
        return "unknown"


def machine_line() -> str:
    """``machine: nproc=2 python=3.11.7 (CPython) x86_64 <cpu>``: where figures come from."""
    return (
        f"machine: nproc={os.cpu_count()} python={platform.python_version()} "
        f"({platform.python_implementation()}) {platform.machine()} {cpu_model()}"
    )


@contextmanager
def cache_root(directory: str | None, prefix: str) -> Iterator[Path]:
    """``directory`` (created), or a temporary directory removed afterwards."""
    if directory is not None:
        path = Path(directory)
        path.mkdir(parents=True, exist_ok=True)
        yield path
        return
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        yield Path(tmp)


def worker_counts(text: str) -> tuple[int, ...]:
    """An argparse type: ``1,2,4,8``."""
    try:
        counts = tuple(int(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a list of worker counts: {text!r}") from None
    if not counts or min(counts) < 1:
        raise argparse.ArgumentTypeError("worker counts must be at least 1")
    return counts


def positive_int(text: str) -> int:
    """An argparse type: a count of at least 1 (``20_000`` and ``20,000`` too)."""
    try:
        value = int(text.replace("_", "").replace(",", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value
