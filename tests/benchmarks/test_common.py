"""benchmarks/_common.py: what every benchmark process pays before it measures anything."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def test_the_environment_record_names_versions_without_importing_torch():
    """Versions come from the packages' metadata: a benchmark that never embeds with torch does not
    import it (or sentence_transformers) to say which version is installed."""
    script = (f"import json, sys; sys.path.insert(0, {str(BENCHMARKS)!r}); import _common as C; C.quiet_logs(); "
              "info = C.environment(); "
              "print(json.dumps([info, [m in sys.modules for m in ('torch', 'sentence_transformers', 'transformers')]]))")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    info, imported = json.loads(out.stdout.strip().splitlines()[-1])
    assert imported == [False, False, False]
    from importlib.metadata import version

    assert info["torch"] == version("torch") and info["chromadb"] == version("chromadb")
    assert info["sentence_transformers"] == version("sentence-transformers")
