"""Generated documentation stays in step with the code it is generated from."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
GENERATOR = ROOT / "tools" / "gen_errors_doc.py"
ERRORS_DOC = ROOT / "docs" / "errors.md"


@pytest.fixture(scope="module")
def generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_errors_doc", GENERATOR)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, module)
    spec.loader.exec_module(module)
    return module


def test_errors_doc_matches_the_catalogue(generator: ModuleType) -> None:
    expected = generator.render()
    actual = ERRORS_DOC.read_text(encoding="utf-8")
    assert actual == expected, "docs/errors.md is out of date: run python tools/gen_errors_doc.py"


def test_every_catalogue_entry_is_documented(generator: ModuleType) -> None:
    from spark_replica.applier_core.errors import CATALOGUE

    text = ERRORS_DOC.read_text(encoding="utf-8")
    for code in CATALOGUE:
        assert f"| {int(code)} | `ER_{code.name}` |" in text


def test_check_mode_passes_on_the_committed_file(generator: ModuleType) -> None:
    assert generator.main(["--check"]) == 0


def test_pipes_and_backticks_are_escaped_in_table_cells(generator: ModuleType) -> None:
    assert generator.code_span("a|b") == "`a\\|b`"
    assert generator.code_span("x `y` z") == "`` x `y` z ``"
