"""The REST load benchmark runs end to end (a few seconds, few clients) and verifies its adds."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_load_benchmark_smoke(tmp_path):
    out = tmp_path / "load.json"
    run = subprocess.run([sys.executable, str(REPO / "benchmarks" / "load_rest.py"), "--backend", "sqlite",
                          "--clients", "4", "--duration", "3", "--users", "2", "--json", str(out)],
                         capture_output=True, text=True, timeout=300, cwd=REPO)
    assert run.returncode == 0, run.stderr[-3000:]
    result = json.loads(out.read_text())
    assert result["errors"] == 0 and result["requests"] > 0
    assert result["latency"]["search"]["n"] > 0 and result["latency"]["add"]["n"] > 0
    v = result["verify"]
    assert v["acknowledged"] == v["processed"] and v["missing_from_memories"] == 0 and v["not_found_by_search"] == 0
    assert "p95 ms" in run.stdout
