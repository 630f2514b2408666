"""WL10500.LAYER.2: the scheduling and concurrency layers know nothing of databases or
replication. They import the standard library, themselves and (scheduling only) the
concurrency layer; nothing else."""

from __future__ import annotations

import sys

import pytest

from tests.unit.test_layering import ROOT, imports_of, module_name

CORE = "spark_replica.applier_core"
ALLOWED = {
    f"{CORE}.concurrency": (f"{CORE}.concurrency",),
    f"{CORE}.scheduler": (f"{CORE}.scheduler", f"{CORE}.concurrency"),
}


def _foreign_imports(layer: str) -> list[str]:
    allowed = ALLOWED[layer]
    directory = ROOT / layer.removeprefix("spark_replica.").replace(".", "/")
    found: list[str] = []
    paths = sorted(directory.rglob("*.py"))
    assert paths, f"no modules under {directory}"
    for path in paths:
        source = path.read_text(encoding="utf-8")
        for edge in imports_of(source, module_name(path), is_package=path.name == "__init__.py"):
            top = edge.imported.partition(".")[0]
            if top in sys.stdlib_module_names or top == "__future__":
                continue
            if any(edge.imported == a or edge.imported.startswith(a + ".") for a in allowed):
                continue
            found.append(f"{edge.module}:{edge.line} imports {edge.imported}")
    return found


@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_layer_imports_only_the_standard_library_and_lower_layers(layer: str) -> None:
    assert _foreign_imports(layer) == []
