"""Offline use needs no model library: `import mirix_py`, add, search, chat and the CLI's engine
work in a process where every `autogen_*` import fails."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def test_offline_use_works_with_autogen_unimportable(tmp_path):
    script = textwrap.dedent(f"""
        import sys

        class NoAutogen:
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0].startswith("autogen"):
                    raise ImportError(f"{{name}} is blocked for this test")
                return None

        sys.meta_path.insert(0, NoAutogen())
        from mirix_py import Mirix

        with Mirix({str(tmp_path / 'mem')!r}, embedder=None) as mx:
            result = mx.add("My brother Tom is a pilot.", user_id="ada")
            assert result.status.value == "processed" and result.mode == "offline", result
            assert mx.search("pilot", user_id="ada"), "no hit"
            answer = mx.chat("what does Tom do?", user_id="ada")
            assert answer.mode == "offline" and answer.memory_ids
        assert not [m for m in sys.modules if m.startswith("autogen")]
        print("OK")
    """)
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0 and run.stdout.strip().endswith("OK"), run.stderr[-2000:]
