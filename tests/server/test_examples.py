"""examples/rest_quickstart.py runs as shipped: it serves, keys, adds, searches, chats, edits."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_rest_quickstart_example(tmp_path):
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "ANONYMIZED_TELEMETRY": "False",
           "HOME": str(tmp_path), "TMPDIR": str(tmp_path)}
    for k in ("MIRIX_DATABASE_URL", "MIRIX_CHROMA_URL", "MIRIX_LLM_PROVIDER", "MIRIX_LLM_MODEL", "MIRIX_DATA_DIR"):
        env.pop(k, None)
    run = subprocess.run([sys.executable, str(REPO / "examples" / "rest_quickstart.py")], capture_output=True,
                         text=True, timeout=300, env=env, cwd=REPO)
    assert run.returncode == 0, run.stderr[-3000:]
    out = run.stdout
    assert "serving on http://127.0.0.1:" in out and "add accepted: pending" in out
    assert "add with wait: processed" in out and "Tom" in out
    assert "history: ['insert', 'update']" in out
