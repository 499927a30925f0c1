"""One-way layers, checked on the source: which packages of mirix_py may import which."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "mirix_py"


def imported_modules(path: Path) -> set[str]:
    """Every module a file imports (at the top, inside functions, or for type checking)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def offenders(package: str, forbidden: str) -> list[str]:
    found = []
    for path in sorted((PACKAGE / package).rglob("*.py")):
        bad = sorted(m for m in imported_modules(path) if m == forbidden or m.startswith(forbidden + "."))
        if bad:
            found.append(f"{path.relative_to(PACKAGE.parent)}: {', '.join(bad)}")
    return found


def test_the_checker_sees_imports_inside_functions(tmp_path):
    source = tmp_path / "m.py"
    source.write_text("def f():\n    from mirix_py.engine import Mirix\n    import mirix_py.server.app\n")
    assert {"mirix_py.engine", "mirix_py.engine.Mirix", "mirix_py.server.app"} <= imported_modules(source)


def test_ingest_does_not_import_the_engine():
    assert offenders("ingest", "mirix_py.engine") == []



def test_integrations_do_not_import_the_server():
    assert offenders("integrations", "mirix_py.server") == []


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
    found = [o for package in ("agents", "ingest", "integrations", "llm", "server", "store")
             for o in offenders(package, "mirix_synth")]
    found += [f"mirix_py/{p.name}" for p in PACKAGE.glob("*.py") if any(
        m.startswith("mirix_synth") for m in imported_modules(p))]
    assert found == []
