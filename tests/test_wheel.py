"""The package as users get it: `python -m build` gives an sdist and a wheel; the wheel, installed
alone in a fresh venv (base dependencies only, from the package index), runs `mirix demo` offline
with the agent definitions, static files and migrations it ships.

Where the project's venv has uv (scripts/setup.sh installs it), build's isolated environments and
the fresh venv are made with it, as they are for the project itself; pip otherwise."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _uv() -> str | None:
    beside = Path(sys.executable).with_name("uv")
    return str(beside) if beside.is_file() else shutil.which("uv")


def _install_alone(wheel: Path, env_dir: Path, uv: str | None) -> subprocess.CompletedProcess:
    """A fresh venv holding the wheel and its base dependencies, resolved from the package index."""
    if uv:
        made = subprocess.run([uv, "venv", "-q", "--python", sys.executable, str(env_dir)],
                              capture_output=True, text=True, timeout=300)
        assert made.returncode == 0, made.stderr[-3000:]
        return subprocess.run([uv, "pip", "install", "-q", "--python", str(env_dir / "bin" / "python"), str(wheel)],
                              capture_output=True, text=True, timeout=1200)
    venv.create(env_dir, with_pip=True)
    return subprocess.run([str(env_dir / "bin" / "python"), "-m", "pip", "install", "-q", str(wheel)],
                          capture_output=True, text=True, timeout=1200)


def test_the_wheel_installs_alone_and_runs_the_demo(tmp_path):
    dist = tmp_path / "dist"
    uv = _uv()
    # build finds uv on PATH
    env = {**os.environ, "PATH": f"{Path(uv).parent}{os.pathsep}{os.environ.get('PATH', '')}"} if uv else None
    built = subprocess.run([sys.executable, "-m", "build", *(["--installer", "uv"] if uv else []),
                            "--outdir", str(dist), str(REPO)], capture_output=True, text=True, timeout=600, env=env)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    (wheel,) = dist.glob("mirix_py-*.whl")
    assert list(dist.glob("mirix_py-*.tar.gz"))
    names = zipfile.ZipFile(wheel).namelist()
    for shipped in ("mirix_py/server/static/viewer.html", "mirix_py/store/migrations/env.py",
                    "mirix_py/agents/offline/rules/idioms.yaml", "mirix_py/agents/offline/rules/words.yaml",
                    "mirix_py/agents/offline/rules/job_words.txt",
                    "mirix_py-0.1.0.data/data/share/mirix-py/agents/chat_agent.md"):
        assert shipped in names, shipped
    assert any(n.startswith("mirix_py/store/migrations/versions/") for n in names)

    env_dir = tmp_path / "venv"
    installed = _install_alone(wheel, env_dir, uv)
    assert installed.returncode == 0, installed.stderr[-3000:]
    demo_env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path / "home"), "HF_HUB_OFFLINE": "1",
                "TRANSFORMERS_OFFLINE": "1", "ANONYMIZED_TELEMETRY": "False"}
    demo = subprocess.run([str(env_dir / "bin" / "mirix"), "demo", "--data-dir", str(tmp_path / "data")],
                          capture_output=True, text=True, timeout=600, env=demo_env, cwd=tmp_path)
    assert demo.returncode == 0, demo.stdout[-3000:] + demo.stderr[-3000:]
    assert "mode: offline" in demo.stdout and "stats:" in demo.stdout
    assert "history of sem_" in demo.stdout  # the demo's search, edit and history ran on the installed package
