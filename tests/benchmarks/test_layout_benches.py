"""Tiny runs of the layout benchmarks (the figures mean nothing; that they run and write their JSON
does): benchmarks/layouts.py with the REST load on the three layouts, and benchmarks/tenant_recall.py
on the pgvector server. Real servers, as scripts/test.sh starts them."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _run(script: str, *args: str, cwd: Path) -> str:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "ANONYMIZED_TELEMETRY": "False"}
    run = subprocess.run([sys.executable, str(REPO / "benchmarks" / script), *args], capture_output=True, text=True,
                         timeout=600, cwd=cwd, env=env)
    assert run.returncode == 0, f"{script} exited {run.returncode}:\n{run.stderr[-3000:]}"
    return run.stdout


@pytest.fixture
def servers(pg_schema_url, pgvector_schema_url, chroma_url):
    """The three servers' base URLs (the schema fixtures only prove the servers are there)."""
    return {k: os.environ[k] for k in ("MIRIX_TEST_PG_URL", "MIRIX_TEST_PGVECTOR_URL", "MIRIX_TEST_CHROMA_URL")}


def test_layouts_tiny(tmp_path, servers):
    out = tmp_path / "layouts.json"
    # the REST load (benchmarks/load_rest.py) on each layout: its adds acknowledged, processed and found
    stdout = _run("layouts.py", "--sizes", "150", "--queries", "3", "--warmup", "1", "--other-users", "2",
                  "--adds", "2", "--rest-duration", "2", "--rest-clients", "4", "--cache-dir", str(tmp_path / "cache"),
                  "--out", str(out), cwd=tmp_path)
    assert "hybrid p95" in stdout and stdout.count("p95 ms") == 3  # and load_rest's table for each layout
    result = json.loads(out.read_text())
    (size,) = result["sizes"]
    assert {k: v["vectors"] for k, v in size["layouts"].items()} == {
        "sqlite": "chroma-embedded", "postgres": "chroma-server", "pgvector": "pgvector"}
    for layout in size["layouts"].values():
        assert layout["insert_per_second"] > 0
        assert all(layout["latency"][m]["n"] == 3 and math.isfinite(layout["latency"][m]["p95_ms"])
                   for m in ("hybrid", "embedding", "bm25"))
    pgvector = size["layouts"]["pgvector"]
    assert pgvector["vector_recall"]["queries"] == 3 and 0.0 <= pgvector["vector_recall"]["recall_at_10"] <= 1.0
    assert "Scan" in pgvector["vector_plan"] and "analyze_seconds" in size["layouts"]["postgres"]
    assert all(a["doctor_clean"] for a in result["add"].values())
    assert set(result["rest"]) == {"sqlite", "postgres", "pgvector"}
    for rest in result["rest"].values():
        v = rest["verify"]
        assert rest["errors"] == 0 and rest["requests"] > 0
        assert rest["latency"]["search"]["n"] > 0 and rest["latency"]["add"]["n"] > 0
        assert v["acknowledged"] == v["processed"] and v["missing_from_memories"] == 0 and v["not_found_by_search"] == 0


def test_tenant_recall_tiny(tmp_path, servers):
    out = tmp_path / "tenants.json"
    _run("tenant_recall.py", "--url", servers["MIRIX_TEST_PGVECTOR_URL"], "--size", "3000", "--queries", "5",
         "--out", str(out), cwd=tmp_path)
    result = json.loads(out.read_text())
    assert result["tenants"]["big"] == 600 and result["tenants"]["mid"] == 150
    exact = result["strategies"]["exact (index scans off)"]
    assert all(exact[c]["recall_at_10"] == 1.0 for c in ("big", "mid", "small"))
    chosen = result["strategies"]["iterative relaxed, ef 100"]
    assert all(0.0 <= chosen[c]["recall_at_10"] <= 1.0 for c in ("big", "mid", "small"))


def test_rest_load_with_searches_on_the_replica_tiny(tmp_path, servers, pgvector_replica):
    """benchmarks/load_rest.py on pgvector with its searches on the streaming replica: every add
    acknowledged is processed on the primary and found by a search on the replica."""
    out = tmp_path / "load.json"
    _run("load_rest.py", "--backend", "pgvector", "--read-url", os.environ["MIRIX_TEST_PGVECTOR_REPLICA_URL"],
         "--duration", "2", "--clients", "4", "--users", "2", "--json", str(out), cwd=tmp_path)
    result = json.loads(out.read_text())
    v = result["verify"]
    assert result["searches_read"] == "replica" and result["errors"] == 0 and result["latency"]["search"]["n"] > 0
    assert result["read_your_writes"] is True and 0 <= result["searches_kept_on_primary"] <= result["requests"]
    assert v["acknowledged"] == v["processed"] > 0 and v["missing_from_memories"] == 0 and v["not_found_by_search"] == 0
