"""One-way layers, checked on the source: which modules of mirix_py may import which.

Every module of mirix_py belongs to one group of the table below (its name, or the package it is
in). A module may import its own group and the groups of lower ranks; a group of the same rank
(sideways) or of a higher one (upward) is refused, at the top of a file, inside a function or
for type checking alike. Inside a group, no modules import one another in a circle.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "mirix_py"

# rank  group          modules (a package counts with everything in it; "" is mirix_py/__init__.py)
LAYERS = """
0       base           records text tools
1       secrets        secrets                            # the store's writer runs the guard
2       common         errors settings boundary           # an error's message is scrubbed of secrets
3       store          store                              # its migrations inside
3       llm            llm
4       agents         agents
4       ingest         ingest
4       upkeep         upkeep
5       engine         "" engine facade screens
6       client         client
6       compat         compat
6       eval           eval
7       integrations   integrations
8       server         server
9       cli            cli
"""


def layer_table() -> dict[str, tuple[int, str]]:
    """Module or package name (relative to mirix_py) -> (rank, group)."""
    table: dict[str, tuple[int, str]] = {}
    for line in LAYERS.strip().splitlines():
        rank, group, *names = line.split("#")[0].split()
        for name in names:
            table[name.strip('"')] = (int(rank), group)
    return table


def module_name(path: Path) -> str:
    """A module's dotted name in mirix_py: "store.db" for store/db.py, "store" for its __init__.py,
    "" for the package's own."""
    parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def layer_of(name: str, table: dict[str, tuple[int, str]]) -> tuple[int, str] | None:
    """The layer of a module: its own entry, else its package's (the longest that names it)."""
    parts = name.split(".") if name else []
    for i in range(len(parts), -1, -1):
        key = ".".join(parts[:i])
        if key in table and (i > 0 or not parts):
            return table[key]
    return None


def _is_module(name: str) -> bool:
    """Whether `name` ("mirix_py.store.db") is a module or package of mirix_py."""
    if name.split(".")[0] != "mirix_py":
        return False
    base = PACKAGE.joinpath(*name.split(".")[1:])
    return base.with_suffix(".py").exists() or (base / "__init__.py").exists()


def imported_modules(path: Path, package: str | None = None) -> set[str]:
    """Every module a file imports (at the top, inside functions, or for type checking). Relative
    imports are resolved against `package` (the file's own package); `from a import b` names `a.b`,
    and `a` too unless `b` is a module of mirix_py."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                if package is None:
                    continue
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join([*base, module] if module else base)
            if not module:
                continue
            submodules = [f"{module}.{alias.name}" for alias in node.names]
            names.update(submodules)
            if not all(_is_module(m) for m in submodules):
                names.add(module)
    return names


def mirix_imports(path: Path) -> set[str]:
    """The modules of mirix_py a file imports, each by its module name ("" for the package itself)."""
    own = module_name(path)
    package = "mirix_py" + (f".{own}" if own else "")
    if path.name != "__init__.py":
        package = package.rsplit(".", 1)[0]
    found: set[str] = set()
    for name in imported_modules(path, package):
        if name != "mirix_py" and not name.startswith("mirix_py."):
            continue
        if name != "mirix_py" and not _is_module(name):
            continue  # `from mirix_py.x import Name`: the module `mirix_py.x` is in the set too
        found.add(name.removeprefix("mirix_py").removeprefix("."))
    return found


def layer_violations() -> tuple[list[str], list[str]]:
    """(modules in no layer, imports of a sideways or higher group), as readable lines."""
    table = layer_table()
    unplaced: list[str] = []
    bad: list[str] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        name = module_name(path)
        own = layer_of(name, table)
        if own is None:
            unplaced.append(name)
            continue
        for target in sorted(mirix_imports(path)):
            theirs = layer_of(target, table)
            if theirs is None or theirs[1] == own[1] or theirs[0] < own[0]:
                continue
            way = "sideways" if theirs[0] == own[0] else "upward"
            bad.append(f"{name or 'mirix_py'} ({own[1]}) imports {target or 'mirix_py'} ({theirs[1]}): {way}")
    return unplaced, bad


def test_every_module_has_a_layer():
    assert layer_violations()[0] == []


def test_no_module_imports_sideways_or_upward():
    """The whole matrix: ingest never sees the engine, the integrations never the server, the store
    no flow, secrets nothing above the records."""
    assert layer_violations()[1] == []


def import_cycles() -> list[list[str]]:
    """Groups of modules that import one another round in a circle (strongly connected components)."""
    graph = {module_name(path): mirix_imports(path) for path in sorted(PACKAGE.rglob("*.py"))}
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        order[node] = low[node] = len(order)
        stack.append(node)
        for target in graph[node]:
            if target not in graph or target == node:
                continue
            if target not in order:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], order[target])
        if low[node] == order[node]:
            group = []
            while (top := stack.pop()) != node:
                group.append(top)
            if group:
                cycles.append(sorted([node, *group]))

    for node in graph:
        if node not in order:
            visit(node)
    return cycles


def test_no_modules_import_one_another_in_a_circle():
    """Inside a layer too: a cycle hidden by an import inside a function or for type checking counts."""
    assert import_cycles() == []


def test_the_checker_sees_every_kind_of_import(tmp_path):
    source = tmp_path / "m.py"
    source.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from mirix_py.engine import Mirix\n"
                      "def f():\n    from mirix_py.engine import Mirix\n    import mirix_py.server.app\n"
                      "from . import errors\nfrom .store import db\n")
    found = imported_modules(source, "mirix_py.ingest")
    assert {"mirix_py.engine", "mirix_py.engine.Mirix", "mirix_py.server.app", "mirix_py.ingest.errors",
            "mirix_py.ingest.store.db"} <= found


def test_a_module_takes_its_packages_layer():
    table = layer_table()
    assert layer_of("store.db", table) == layer_of("store", table) == (3, "store")
    assert layer_of("", table) == layer_of("engine", table)
    assert layer_of("secrets.guard", table) == (1, "secrets")


def offenders(package: str, forbidden: str) -> list[str]:
    found = []
    for path in sorted((PACKAGE / package).rglob("*.py")):
        bad = sorted(m for m in imported_modules(path) if m == forbidden or m.startswith(forbidden + "."))
        if bad:
            found.append(f"{path.relative_to(PACKAGE.parent)}: {', '.join(bad)}")
    return found


def test_each_route_module_is_one_router():
    from fastapi import APIRouter

    from mirix_py.server import routes

    modules = sorted(p.stem for p in (PACKAGE / "server" / "routes").glob("*.py") if p.stem != "__init__")
    assert len(routes.ROUTERS) == len(modules) == len(set(map(id, routes.ROUTERS)))
    for name in modules:
        module = __import__(f"mirix_py.server.routes.{name}", fromlist=["router"])
        assert isinstance(module.router, APIRouter) and module.router in routes.ROUTERS


def test_only_the_evaluation_uses_the_synthetic_screens():
    """mirix_synth (synthetic data for tests and benchmarks) is not part of the engine."""
    found = [o for package in ("agents", "boundary", "cli", "facade", "ingest", "integrations", "llm",
                                "screens", "server", "store", "text", "tools", "upkeep")
             for o in offenders(package, "mirix_synth")]
    found += [f"mirix_py/{p.name}" for p in PACKAGE.glob("*.py") if any(
        m.startswith("mirix_synth") for m in imported_modules(p))]
    assert found == []
