"""Helpers shared by the benchmark scripts: environment, tables, JSON output, timing."""

from __future__ import annotations

import importlib.metadata
import json
import os
import platform
import statistics
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, Sequence

# Offline by default: the embedder must never reach the hub, Chroma must not phone home.
for _k, _v in (("HF_HUB_OFFLINE", "1"), ("TRANSFORMERS_OFFLINE", "1"), ("ANONYMIZED_TELEMETRY", "False"),
               ("TOKENIZERS_PARALLELISM", "false")):
    os.environ.setdefault(_k, _v)

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def quiet_logs() -> None:
    import logging
    import warnings

    warnings.filterwarnings("ignore")
    for name in ("chromadb", "sentence_transformers", "transformers", "httpx"):
        logging.getLogger(name).setLevel(logging.ERROR)
    # transformers and the hub read these when (and only if) a benchmark imports them
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    if "transformers" in sys.modules:  # already imported: its settings were read then
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
        hf_logging.set_verbosity_error()


def environment() -> dict[str, Any]:
    info: dict[str, Any] = {
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "loadavg_at_start": [round(x, 2) for x in os.getloadavg()],
        "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    # read from the installed packages' metadata: importing sentence_transformers (and torch with it)
    # to ask for a version cost each benchmark process seconds, and most never use them
    for mod, dist in (("chromadb", "chromadb"), ("torch", "torch"), ("sentence_transformers", "sentence-transformers"),
                      ("sqlalchemy", "sqlalchemy")):
        try:
            info[mod] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            info[mod] = None
    try:
        from mirix_py.store.db import sqlite_dbapi

        info["sqlite"] = sqlite_dbapi().sqlite_version  # the library the engine opens SQLite with
    except Exception:
        pass
    return info


def loadavg() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def wait_for_quiet(max_load: float | None, timeout_s: float = 1800.0, poll_s: float = 10.0) -> dict[str, Any]:
    """On a shared machine, wait until the 1-minute load average drops to `max_load` (or time runs out)."""
    if max_load is None:
        return {"waited_s": 0.0, "loadavg": loadavg()}
    t0 = time.monotonic()
    announced = False
    while os.getloadavg()[0] > max_load and time.monotonic() - t0 < timeout_s:
        if not announced:
            print(f"waiting for the 1-min load average {os.getloadavg()[0]:.2f} to drop to {max_load} "
                  f"(at most {timeout_s:.0f}s) ...", flush=True)
            announced = True
        time.sleep(poll_s)
    waited = time.monotonic() - t0
    if announced:
        print(f"  waited {waited:.0f}s; load average now {loadavg()}", flush=True)
    return {"waited_s": waited, "loadavg": loadavg(), "max_load": max_load}


def add_quiet_args(ap: Any) -> None:
    ap.add_argument("--wait-quiet", type=float, metavar="LOAD",
                    help="before each timed phase, wait until the 1-min load average is <= LOAD (shared machines)")
    ap.add_argument("--wait-timeout", type=float, default=1800.0, help="longest wait for --wait-quiet, seconds")


def set_torch_threads(n: int | None) -> int | None:
    """torch.set_num_threads(n) when asked; returns the thread count in use."""
    try:
        import torch
    except Exception:
        return None
    if n:
        torch.set_num_threads(n)
    return torch.get_num_threads()


def percentile(values: Sequence[float], q: float) -> float:
    """Linear-interpolated percentile (numpy's default), q in [0, 100]."""
    xs = sorted(values)
    if not xs:
        return float("nan")
    pos = (len(xs) - 1) * q / 100.0
    lo = int(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def latency_summary(seconds: Sequence[float]) -> dict[str, float]:
    ms = [s * 1000 for s in seconds]
    return {"n": len(ms), "p50_ms": percentile(ms, 50), "p95_ms": percentile(ms, 95), "p99_ms": percentile(ms, 99),
            "mean_ms": statistics.fmean(ms) if ms else float("nan"), "max_ms": max(ms) if ms else float("nan")}


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]], title: str | None = None) -> str:
    def fmt(v: Any) -> str:
        if isinstance(v, float):
            if v != v:
                return "-"
            return f"{v:.3f}" if abs(v) < 10 else f"{v:.1f}"
        return str(v)

    cells = [[fmt(v) for v in row] for row in rows]
    widths = [max(len(str(h)), *(len(r[i]) for r in cells)) if cells else len(str(h)) for i, h in enumerate(headers)]
    lines = []
    if title:
        lines.append(title)
    lines.append("  ".join(str(h).ljust(w) if i == 0 else str(h).rjust(w) for i, (h, w) in enumerate(zip(headers, widths))))
    lines.append("  ".join("-" * w for w in widths))
    for r in cells:
        lines.append("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))))
    return "\n".join(lines)


def cache_root(path: str | Path) -> Path:
    """The benchmark cache dir, made on first use with a .gitignore of its own."""
    root = Path(path).resolve()
    root.mkdir(parents=True, exist_ok=True)
    ignore = root / ".gitignore"
    if not ignore.exists():
        ignore.write_text("*\n")
    return root


def write_json(path: str | None, payload: dict[str, Any]) -> None:
    if not path:
        return
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(payload, indent=2, default=str) + "\n", encoding="utf-8")
    print(f"\nwrote {out}")


@contextmanager
def timed(store: dict[str, float], key: str) -> Iterator[None]:
    t0 = time.perf_counter()
    try:
        yield
    finally:
        store[key] = store.get(key, 0.0) + time.perf_counter() - t0


class TimingEmbedder:
    """Wraps an embedder and adds up the time spent in `embed` (to split engine time into its parts)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name = inner.name
        self.dim = inner.dim
        self.seconds = 0.0
        self.texts = 0
        self.calls = 0

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        t0 = time.perf_counter()
        try:
            return self.inner.embed(texts)
        finally:
            self.seconds += time.perf_counter() - t0
            self.texts += len(texts)
            self.calls += 1
