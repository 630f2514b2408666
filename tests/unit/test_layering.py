"""Package layering (architecture §3, style §7 rule 1): forbidden imports fail the build.

Every module under ``src/spark_replica`` is parsed with ``ast``; absolute imports, relative
imports (resolved against the module's package) and ``importlib.import_module``/``__import__``
calls with a literal name are collected, including those under ``if TYPE_CHECKING:``.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

import spark_replica

ROOT = Path(spark_replica.__file__).resolve().parent
PACKAGE = "spark_replica"


@dataclass(frozen=True, slots=True)
class Rule:
    """Modules under ``scope`` must not import ``forbidden`` (or anything below it)."""

    scope: str
    forbidden: str
    #: Sub-packages of ``scope`` that are exempt.
    allowed_under: tuple[str, ...] = ()


def _rules_for(scope: str, *forbidden: str) -> list[Rule]:
    return [Rule(scope, name) for name in forbidden]


RULES: list[Rule] = [
    *_rules_for(
        "spark_replica.applier_core",
        "mysql_mimic",
        "spark_replica.sql_handlers",
        "spark_replica.server",
        "spark_replica.metadata",
        "sqlalchemy",
    ),
    # The storage engines parse replicated DDL with sqlglot; the rest of the core does not.
    Rule(
        "spark_replica.applier_core",
        "sqlglot",
        allowed_under=("spark_replica.applier_core.storage",),
    ),
    *_rules_for(
        "spark_replica.metadata",
        "pyspark",
        "mysql_mimic",
        "spark_replica.sql_handlers",
        "spark_replica.server",
    ),
    *_rules_for("spark_replica.sql_handlers", "pyspark", "mysql_mimic", "spark_replica.server"),
    # pyspark lives only in the Spark storage engine.
    Rule(
        "spark_replica",
        "pyspark",
        allowed_under=("spark_replica.applier_core.storage.spark",),
    ),
    # The key index is a store of rows: it knows neither the engines nor the SQL they parse.
    *_rules_for(
        "spark_replica.applier_core.storage.key_index",
        "spark_replica.applier_core.storage.spark",
        "spark_replica.applier_core.storage.memory",
        "spark_replica.applier_core.storage.memory_tables",
        "spark_replica.applier_core.storage.store",
        "sqlglot",
    ),
    # The transactional store knows neither of its durability backends.
    *_rules_for(
        "spark_replica.applier_core.storage.store",
        "spark_replica.applier_core.storage.memory",
        "spark_replica.applier_core.storage.spark",
    ),
    # The native core is reached through the key index: its codecs (each falling back to
    # its Python form) and its LMDB environment. No Python LMDB binding is used.
    Rule(
        "spark_replica",
        "spark_replica_native",
        allowed_under=(
            "spark_replica.applier_core.storage.key_index.codec",
            "spark_replica.applier_core.storage.key_index.lmdb_index",
            "spark_replica.applier_core.storage.key_index.verify",
        ),
    ),
    Rule("spark_replica", "lmdb"),
]


@dataclass(frozen=True, slots=True)
class ImportEdge:
    module: str
    imported: str
    line: int


def _within(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def module_name(path: Path, root: Path = ROOT, package: str = PACKAGE) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join([package, *parts])


def imports_of(source: str, module: str, is_package: bool = False) -> list[ImportEdge]:
    """Every module ``source`` imports, with relative imports made absolute."""
    tree = ast.parse(source)
    package = module if is_package else module.rpartition(".")[0]
    edges: list[ImportEdge] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            edges += [ImportEdge(module, alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base_parts = parts[: len(parts) - (node.level - 1)]
                base = ".".join(base_parts)
                target = f"{base}.{node.module}" if node.module else base
            else:
                target = node.module or ""
            edges.append(ImportEdge(module, target, node.lineno))
            # ``from pkg import sub`` may import the sub-module ``pkg.sub``.
            edges += [
                ImportEdge(module, f"{target}.{alias.name}", node.lineno)
                for alias in node.names
                if alias.name != "*"
            ]
        elif isinstance(node, ast.Call) and _is_dynamic_import(node.func):
            if node.args and isinstance(node.args[0], ast.Constant):
                name = node.args[0].value
                if isinstance(name, str):
                    edges.append(ImportEdge(module, name, node.lineno))
    return edges


def _is_dynamic_import(func: ast.expr) -> bool:
    if isinstance(func, ast.Name):
        return func.id in ("__import__", "import_module")
    return (
        isinstance(func, ast.Attribute)
        and func.attr == "import_module"
        and isinstance(func.value, ast.Name)
        and func.value.id == "importlib"
    )


def violations(edges: list[ImportEdge], rules: list[Rule] = RULES) -> list[str]:
    found: list[str] = []
    for edge in edges:
        for rule in rules:
            if not _within(edge.module, rule.scope):
                continue
            if any(_within(edge.module, allowed) for allowed in rule.allowed_under):
                continue
            if _within(edge.imported, rule.forbidden):
                found.append(
                    f"{edge.module}:{edge.line} imports {edge.imported} (forbidden in {rule.scope})"
                )
    return sorted(set(found))


def _source_files() -> list[Path]:
    return sorted(ROOT.rglob("*.py"))


def all_edges() -> list[ImportEdge]:
    edges: list[ImportEdge] = []
    for path in _source_files():
        edges += imports_of(
            path.read_text(encoding="utf-8"),
            module_name(path),
            is_package=path.name == "__init__.py",
        )
    return edges


# -- the project itself -----------------------------------------------------------------------


def test_the_walk_sees_every_package() -> None:
    modules = {module_name(path) for path in _source_files()}
    for package in ("applier_core", "sql_handlers", "metadata", "server"):
        assert f"{PACKAGE}.{package}" in modules
    assert len(modules) > 20


def test_the_walk_finds_real_edges() -> None:
    """Guards the checker against silently seeing nothing."""
    edges = all_edges()
    assert any(
        e.module == "spark_replica.applier_core.gtid"
        and e.imported == "spark_replica.applier_core.errors"
        for e in edges
    )
    assert any(
        _within(e.module, "spark_replica.server") and e.imported == "mysql_mimic" for e in edges
    )


def test_no_forbidden_imports() -> None:
    assert violations(all_edges()) == []


# -- the checker can fail ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("module", "is_package", "source", "expected"),
    [
        (
            "spark_replica.applier_core.gtid",
            False,
            "import mysql_mimic\n",
            "spark_replica.applier_core.gtid:1 imports mysql_mimic "
            "(forbidden in spark_replica.applier_core)",
        ),
        (
            "spark_replica.applier_core.channels.manager",
            False,
            "x = 1\nfrom sqlalchemy.orm import Session\n",
            "spark_replica.applier_core.channels.manager:2 imports sqlalchemy.orm "
            "(forbidden in spark_replica.applier_core)",
        ),
        (
            "spark_replica.applier_core.channels.manager",
            False,
            "from ...metadata import store\n",
            "spark_replica.applier_core.channels.manager:1 imports spark_replica.metadata "
            "(forbidden in spark_replica.applier_core)",
        ),
        (
            "spark_replica.applier_core",
            True,
            "from ..sql_handlers.parser import grammar\n",
            "spark_replica.applier_core:1 imports spark_replica.sql_handlers.parser "
            "(forbidden in spark_replica.applier_core)",
        ),
        (
            "spark_replica.metadata.store",
            False,
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import pyspark.sql\n",
            "spark_replica.metadata.store:3 imports pyspark.sql "
            "(forbidden in spark_replica.metadata)",
        ),
        (
            "spark_replica.sql_handlers.dispatch",
            False,
            "from spark_replica import server\n",
            "spark_replica.sql_handlers.dispatch:1 imports spark_replica.server "
            "(forbidden in spark_replica.sql_handlers)",
        ),
        (
            "spark_replica.server.session",
            False,
            "import importlib\nm = importlib.import_module('pyspark')\n",
            "spark_replica.server.session:2 imports pyspark (forbidden in spark_replica)",
        ),
        (
            "spark_replica.applier_core.scheduler.clocks",
            False,
            "import sqlglot\n",
            "spark_replica.applier_core.scheduler.clocks:1 imports sqlglot "
            "(forbidden in spark_replica.applier_core)",
        ),
        (
            "spark_replica.applier_core.storage_tools",
            False,
            "import sqlglot\n",
            "spark_replica.applier_core.storage_tools:1 imports sqlglot "
            "(forbidden in spark_replica.applier_core)",
        ),
        (
            "spark_replica.applier_core.storage.ddl",
            False,
            "import sqlalchemy\n",
            "spark_replica.applier_core.storage.ddl:1 imports sqlalchemy "
            "(forbidden in spark_replica.applier_core)",
        ),
        (
            "spark_replica.applier_core.binlog.codecs.query",
            False,
            "from sqlglot import expressions as exp\n",
            "spark_replica.applier_core.binlog.codecs.query:1 imports sqlglot "
            "(forbidden in spark_replica.applier_core)",
        ),
        (
            "spark_replica.applier_core.storage.memory",
            False,
            "def f():\n    from pyspark.sql import SparkSession\n",
            "spark_replica.applier_core.storage.memory:2 imports pyspark.sql "
            "(forbidden in spark_replica)",
        ),
        (
            "spark_replica.applier_core.storage.key_index.lmdb_index",
            False,
            "from ..memory_tables import Table\n",
            "spark_replica.applier_core.storage.key_index.lmdb_index:1 imports "
            "spark_replica.applier_core.storage.memory_tables "
            "(forbidden in spark_replica.applier_core.storage.key_index)",
        ),
        (
            "spark_replica.applier_core.storage.key_index.codec",
            False,
            "import sqlglot\n",
            "spark_replica.applier_core.storage.key_index.codec:1 imports sqlglot "
            "(forbidden in spark_replica.applier_core.storage.key_index)",
        ),
        (
            "spark_replica.applier_core.storage.memory",
            False,
            "import lmdb\n",
            "spark_replica.applier_core.storage.memory:1 imports lmdb (forbidden in spark_replica)",
        ),
    ],
)
def test_checker_reports_a_forbidden_import(
    module: str, is_package: bool, source: str, expected: str
) -> None:
    assert expected in violations(imports_of(source, module, is_package))


@pytest.mark.parametrize(
    ("module", "source"),
    [
        ("spark_replica.applier_core.storage.spark.engine", "import pyspark.sql\n"),
        ("spark_replica.applier_core.storage.spark", "from pyspark.sql import SparkSession\n"),
        ("spark_replica.metadata.store", "from ..applier_core.channels import config\n"),
        ("spark_replica.sql_handlers.dispatch", "from spark_replica.metadata import store\n"),
        ("spark_replica.server.app", "import mysql_mimic\nimport sqlglot\n"),
        ("spark_replica.sql_handlers.virtual_query", "import sqlglot\n"),
        ("spark_replica.applier_core.gtid", "import servers_list\nimport sqlglotx\n"),
        ("spark_replica.applier_core.storage.ddl", "from sqlglot import expressions as exp\n"),
        ("spark_replica.applier_core.storage", "import sqlglot\n"),
        ("spark_replica.applier_core.storage.spark.ddl", "import sqlglot.tokens\n"),
        (
            "spark_replica.applier_core.storage.key_index.lmdb_index",
            "from spark_replica_native import Environment\n",
        ),
        (
            "spark_replica.applier_core.storage.key_index.codec",
            "from ..interface import Row\n",
        ),
    ],
)
def test_checker_allows_permitted_imports(module: str, source: str) -> None:
    assert violations(imports_of(source, module)) == []


def test_relative_imports_resolve_against_the_package() -> None:
    source = "from . import errors\nfrom .channels.config import X\nfrom .. import metadata\n"
    edges = imports_of(source, "spark_replica.applier_core.gtid")
    names = {edge.imported for edge in edges}
    assert "spark_replica.applier_core.errors" in names
    assert "spark_replica.applier_core.channels.config" in names
    assert "spark_replica.metadata" in names
    package_edges = imports_of("from . import gtid\n", "spark_replica.applier_core", True)
    assert {e.imported for e in package_edges} == {
        "spark_replica.applier_core",
        "spark_replica.applier_core.gtid",
    }
