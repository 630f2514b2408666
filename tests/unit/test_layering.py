"""Package layering (architecture §3, style §7 rule 1): forbidden imports and import cycles
fail the build.

Every module under ``src/spark_replica`` is parsed with ``ast``; absolute imports, relative
imports (resolved against the module's package) and ``importlib.import_module``/``__import__``
calls with a literal name are collected, including those under ``if TYPE_CHECKING:`` and
inside functions.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
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
    #: Modules below ``forbidden`` that may be imported all the same.
    except_for: tuple[str, ...] = ()


def _rules_for(scope: str, *forbidden: str) -> list[Rule]:
    return [Rule(scope, name) for name in forbidden]


#: The packages that apply replicated transactions, and what runs them.
APPLIERS = tuple(
    f"spark_replica.applier_core.{name}"
    for name in ("apply", "csa", "mta", "provider", "scheduler", "receiver", "channels")
)

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
    # The binlog codec stands alone: outside itself it knows only the error catalogue and GTIDs.
    Rule(
        "spark_replica.applier_core.binlog",
        "spark_replica",
        except_for=(
            "spark_replica.applier_core.binlog",
            "spark_replica.applier_core.errors",
            "spark_replica.applier_core.gtid",
        ),
    ),
    # The events are plain values: no codec (the rows family keeps its events with its codecs).
    Rule(
        "spark_replica.applier_core.binlog.events",
        "spark_replica",
        except_for=(
            "spark_replica.applier_core.binlog.events",
            "spark_replica.applier_core.binlog.constants",
            "spark_replica.applier_core.binlog.errors",
            "spark_replica.applier_core.binlog.status_vars",
            "spark_replica.applier_core.gtid",
        ),
    ),
    # The storage engines know no applier.
    *_rules_for("spark_replica.applier_core.storage", *APPLIERS),
    # Both appliers take transactions from the provider, which knows neither.
    Rule("spark_replica.applier_core.mta", "spark_replica.applier_core.csa"),
    *_rules_for(
        "spark_replica.applier_core.provider",
        "spark_replica.applier_core.csa",
        "spark_replica.applier_core.mta",
    ),
    # The tools (built-in source, workload generator, mysqltest runner, demo) are reached
    # through the CLI only.
    Rule(
        "spark_replica",
        "spark_replica.tools",
        allowed_under=(
            "spark_replica.tools",
            "spark_replica.server.cli",
            "spark_replica.server.cli_tools",
        ),
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
            target = _from_target(node, package)
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


def _from_target(node: ast.ImportFrom, package: str) -> str:
    """The module a ``from ... import`` statement imports from, made absolute."""
    if not node.level:
        return node.module or ""
    parts = package.split(".")
    base = ".".join(parts[: len(parts) - (node.level - 1)])
    return f"{base}.{node.module}" if node.module else base


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
            if _within(edge.imported, rule.forbidden) and not any(
                _within(edge.imported, allowed) for allowed in rule.except_for
            ):
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


def _sources() -> dict[str, tuple[str, bool]]:
    """Every module: its source and whether it is a package."""
    return {
        module_name(path): (path.read_text(encoding="utf-8"), path.name == "__init__.py")
        for path in _source_files()
    }


# -- import cycles -----------------------------------------------------------------------------


def _known(name: str, modules: Iterable[str]) -> str:
    """``name``, or its longest prefix that is a module of ``modules`` ("" if none is)."""
    known = set(modules)
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name


def resolved_imports(
    source: str, module: str, is_package: bool, modules: Iterable[str]
) -> set[str]:
    """The modules of ``modules`` that ``source`` imports: ``from pkg import name`` is the
    module ``pkg.name`` when there is one, else ``pkg``; ``import a.b`` is ``a.b`` or the
    longest prefix of it that is a module."""
    known = set(modules)
    package = module if is_package else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(_known(alias.name, known) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            target = _from_target(node, package)
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                found.add(sub if sub in known else _known(target, known))
    found.discard("")
    return found


def import_graph(scope: str, sources: Mapping[str, tuple[str, bool]]) -> dict[str, set[str]]:
    """The imports among the modules under ``scope``, module by module."""
    inside = [name for name in sources if _within(name, scope)]
    return {
        name: {
            imported
            for imported in resolved_imports(sources[name][0], name, sources[name][1], sources)
            if _within(imported, scope)
        }
        for name in inside
    }


def cycles(graph: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """The strongly connected components of ``graph`` that hold a cycle (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for successor in graph.get(node, ()):
            if successor not in index:
                visit(successor)
                low[node] = min(low[node], low[successor])
            elif successor in on_stack:
                low[node] = min(low[node], index[successor])
        if low[node] == index[node]:
            component: list[str] = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1 or node in graph.get(node, ()):
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


BINLOG = "spark_replica.applier_core.binlog"


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


def test_the_binlog_package_has_no_import_cycle() -> None:
    found = cycles(import_graph(BINLOG, _sources()))
    assert not found, "import cycles in binlog: " + "; ".join(
        " <-> ".join(component) for component in found
    )


# -- the checkers can fail ---------------------------------------------------------------------


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
        (
            "spark_replica.applier_core.binlog.file",
            False,
            "from spark_replica.applier_core.progress import Progress\n",
            "spark_replica.applier_core.binlog.file:1 imports spark_replica.applier_core.progress "
            "(forbidden in spark_replica.applier_core.binlog)",
        ),
        (
            "spark_replica.applier_core.binlog.events.query",
            False,
            "from ..codecs.query import decode_query_at\n",
            "spark_replica.applier_core.binlog.events.query:1 imports "
            "spark_replica.applier_core.binlog.codecs.query "
            "(forbidden in spark_replica.applier_core.binlog.events)",
        ),
        (
            "spark_replica.applier_core.binlog.events",
            True,
            "from spark_replica.applier_core.binlog.rows import RowsEvent\n",
            "spark_replica.applier_core.binlog.events:1 imports "
            "spark_replica.applier_core.binlog.rows "
            "(forbidden in spark_replica.applier_core.binlog.events)",
        ),
        (
            "spark_replica.applier_core.storage.memory",
            False,
            "from spark_replica.applier_core.apply.xa import xa_verb\n",
            "spark_replica.applier_core.storage.memory:1 imports "
            "spark_replica.applier_core.apply.xa (forbidden in spark_replica.applier_core.storage)",
        ),
        (
            "spark_replica.applier_core.storage.spark.engine",
            False,
            "def f():\n    from ...channels import lag\n",
            "spark_replica.applier_core.storage.spark.engine:2 imports "
            "spark_replica.applier_core.channels (forbidden in spark_replica.applier_core.storage)",
        ),
        (
            "spark_replica.applier_core.mta.coordinator",
            False,
            "from spark_replica.applier_core.csa import service\n",
            "spark_replica.applier_core.mta.coordinator:1 imports spark_replica.applier_core.csa "
            "(forbidden in spark_replica.applier_core.mta)",
        ),
        (
            "spark_replica.applier_core.provider.reader",
            False,
            "from ..mta.clock import Stamp\n",
            "spark_replica.applier_core.provider.reader:1 imports "
            "spark_replica.applier_core.mta.clock "
            "(forbidden in spark_replica.applier_core.provider)",
        ),
        (
            "spark_replica.applier_core.provider",
            True,
            "from spark_replica.applier_core.csa.job import Job\n",
            "spark_replica.applier_core.provider:1 imports spark_replica.applier_core.csa.job "
            "(forbidden in spark_replica.applier_core.provider)",
        ),
        (
            "spark_replica.server.app",
            False,
            "from spark_replica.tools.source import SourceServer\n",
            "spark_replica.server.app:1 imports spark_replica.tools.source "
            "(forbidden in spark_replica)",
        ),
        (
            "spark_replica.applier_core.receiver.thread",
            False,
            "from ...tools.generator import writer\n",
            "spark_replica.applier_core.receiver.thread:1 imports spark_replica.tools.generator "
            "(forbidden in spark_replica)",
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
        (
            "spark_replica.applier_core.binlog.codecs.gtid",
            "from spark_replica.applier_core.gtid import GtidSet\nimport zstandard\n",
        ),
        ("spark_replica.applier_core.binlog.errors", "from ..errors import ErrorCode\n"),
        (
            "spark_replica.applier_core.binlog.events.query",
            "from ..status_vars import QueryStatus\nfrom ..constants import HEADER_LEN\n",
        ),
        (
            "spark_replica.applier_core.storage.memory",
            "from spark_replica.applier_core import failpoints, progress\n",
        ),
        ("spark_replica.applier_core.mta.coordinator", "from ..provider import TransactionState\n"),
        ("spark_replica.applier_core.csa.service", "from ..provider import providers\n"),
        ("spark_replica.server.cli", "from spark_replica.tools import demo\n"),
        ("spark_replica.server.cli_tools", "from spark_replica.tools.generator import writer\n"),
        ("spark_replica.tools.demo", "from spark_replica.server import config\n"),
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


def test_import_graph_resolves_from_imports_to_submodules() -> None:
    modules = {"p", "p.sub", "p.q", "p.q.r", "p.m"}
    source = "from p import sub, name\nimport p.q.r.x\nfrom .q import r\nimport os\n"
    assert resolved_imports(source, "p.m", False, modules) == {"p.sub", "p", "p.q.r"}


def test_cycles_are_found() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a", "d"}, "e": set()}
    assert cycles(graph) == [["a", "b", "c"], ["d"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_a_codec_imported_by_an_event_makes_a_cycle() -> None:
    sources = _sources()
    header = f"{BINLOG}.events.header"
    source, is_package = sources[header]
    bad = source + "\nfrom spark_replica.applier_core.binlog.codecs.registry import decode_event\n"
    found = cycles(import_graph(BINLOG, {**sources, header: (bad, is_package)}))
    assert found
    assert any(
        header in component and f"{BINLOG}.codecs.registry" in component for component in found
    )
