"""The benchmark scripts still run end to end (with tiny parameters)."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType

import pytest

BENCH_DIR = Path(__file__).resolve().parents[1] / "bench"


@contextmanager
def load_script(name: str) -> Iterator[ModuleType]:
    """The script imported as a module (registered while in use, as dataclasses need)."""
    module_name = f"_bench_{name}"
    spec = importlib.util.spec_from_file_location(module_name, BENCH_DIR / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.modules.pop(module_name, None)


def test_bench_directory_holds_no_tests() -> None:
    assert not list(BENCH_DIR.glob("test_*.py"))


def test_bench_frontend_runs(capsys: pytest.CaptureFixture[str]) -> None:
    with load_script("bench_frontend") as bench:
        code = bench.main(["--iterations", "5", "--connections", "3", "--statements", "3"])
        labels = [label for label, _ in bench.STATEMENTS]
    out = capsys.readouterr().out
    assert code == 0, out
    assert "machine: nproc=" in out
    for label in labels:
        assert label in out
    assert "errors        0" in out
    assert "statements/s" in out


def test_bench_frontend_rejects_bad_arguments() -> None:
    with load_script("bench_frontend") as bench, pytest.raises(SystemExit) as excinfo:
        bench.main(["--iterations", "0"])
    assert excinfo.value.code == 2
