"""Importing a benchmark script (``tests/bench/*.py``) as a module, for its smoke test."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType

BENCH = Path(__file__).resolve().parents[1] / "bench"


@contextmanager
def bench_script(name: str) -> Iterator[ModuleType]:
    """``tests/bench/<name>.py`` imported as a module, registered in ``sys.modules`` while in
    use (dataclasses look their module up)."""
    module_name = f"_{name}_script"
    spec = importlib.util.spec_from_file_location(module_name, BENCH / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.modules.pop(module_name, None)
