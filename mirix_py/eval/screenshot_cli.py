"""`mirix eval screenshots`: question answering over a seeded synthetic screenshot session.

Registered by `mirix_py/eval/cli.py` as `eval_app.command("screenshots")(screenshots_command)`.
Pillow, Tesseract and matplotlib are needed only when the command runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Optional

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from mirix_py.eval.cli_errors import REFUSALS, fail as _fail

console = Console()
err = Console(stderr=True)


def _dwell(value: str) -> tuple[int, int]:
    try:
        lo, hi = (int(v) for v in value.split("-", 1)) if "-" in value else (int(value), int(value))
    except ValueError:
        _fail(f"--dwell must be MIN-MAX frames per visit (e.g. 3-7), not {value!r}")
    return lo, hi


def _size(value: str) -> tuple[int, int]:
    try:
        w, h = (int(v) for v in value.lower().split("x", 1))
    except ValueError:
        _fail(f"--size must be WIDTHxHEIGHT (e.g. 1920x1080), not {value!r}")
    return w, h


def _llm_parts() -> tuple[Any, Any]:
    """(answer model client, judge callable) from the environment; a clear error when missing."""
    from mirix_py.llm import build_model_client
    from mirix_py.settings import Settings

    try:
        client = build_model_client(Settings.from_env())
    except Exception as exc:  # a provider that cannot be built (missing package, bad settings)
        _fail(f"could not build the LLM client: {exc}")
    if client is None:
        _fail("--mode llm needs an LLM: set MIRIX_LLM_PROVIDER and MIRIX_LLM_MODEL (and MIRIX_LLM_BASE_URL / "
              "OPENAI_API_KEY as the provider needs)")
    try:
        from mirix_py.eval.judge import judge
    except ImportError as exc:
        _fail(f"the LLM judge is not available (mirix_py.eval.judge): {exc}")
    return client, judge


def screenshots_command(
    seed: int = typer.Option(7, "--seed", help="Seed of the synthetic session (same seed, same frames and questions)."),
    days: int = typer.Option(3, "--days", help="Simulated working days (>= 1)."),
    budget_words: int = typer.Option(750, "--budget-words", help="Context budget in words, as for LoCoMo."),
    mode: str = typer.Option("offline", "--mode", help="offline (containment in the context) or llm "
                             "(also answers from chat, graded by the judge)."),
    out: Path = typer.Option(Path("eval-results/screenshot_qa"), "--out", help="Directory for the JSON, Markdown "
                             "and PNG report."),
    cache_dir: Optional[Path] = typer.Option(None, "--cache-dir", help="Where ingested sessions are cached "
                                             "(default ~/.cache/mirix/screenshot_qa)."),
    dwell: str = typer.Option("3-7", "--dwell", help="Frames captured per visit to a window, MIN-MAX."),
    size: str = typer.Option("1920x1080", "--size", help="Frame size, WIDTHxHEIGHT."),
    workers: Optional[int] = typer.Option(None, "--workers", help="OCR processes (default: one per core)."),
    fresh: bool = typer.Option(False, "--fresh", help="Ingest again even when the cache has this session."),
) -> None:
    """Questions with gold answers over a seeded synthetic screenshot session: the engine against a raw-OCR
    BM25 baseline (whole frames, and frames cut around the question), per family (lookup, time-localised, cross-app, knowledge-update, counting, abstention),
    plus storage and throughput."""
    from mirix_py.eval.screenshot_qa import FAMILIES, MODES, ScreenshotQAConfig, run_benchmark

    if mode not in MODES:
        _fail(f"unknown mode {mode!r}: use one of {', '.join(MODES)}")
    if days < 1:
        _fail(f"--days must be >= 1, not {days}")
    if budget_words < 1:
        _fail(f"--budget-words must be >= 1, not {budget_words}")
    config = ScreenshotQAConfig(seed=seed, days=days, budget_words=budget_words, mode=mode, dwell=_dwell(dwell),
                                size=_size(size), workers=workers)
    try:
        config.validate()
    except ValueError as exc:
        _fail(str(exc))
    client = judge = None
    if mode == "llm":
        client, judge = _llm_parts()
    try:
        from mirix_py.ingest.ocr import check_tesseract

        check_tesseract()
    except Exception as exc:
        _fail(f"screenshot QA needs Tesseract and Pillow: {exc}")


    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    try:
        with Progress(*columns, console=err, transient=False) as bars:
            def progress(description: str, total: int) -> Callable[[int], None]:
                task = bars.add_task(description, total=total)

                def advance(n: int = 1) -> None:
                    bars.advance(task, n)

                return advance

            result = run_benchmark(config, out, cache_dir, model_client=client, judge=judge, fresh=fresh, progress=progress)
    except REFUSALS as exc:  # refused (an OCR that failed, say): one line
        _fail(str(exc))
    summary = result["summary"]
    table = Table(title=f"screenshot QA, seed {seed}, {days} day(s), {budget_words} words "
                        f"({'reused cache' if result['ingestion'].get('reused') else 'ingested'})")
    table.add_column("family")
    table.add_column("n", justify="right")
    table.add_column("engine", justify="right")
    table.add_column("baseline", justify="right")
    table.add_column("baseline+focus", justify="right")
    table.add_column("engine evidence", justify="right")
    table.add_column("baseline evidence", justify="right")
    if mode == "llm":
        table.add_column("engine judge", justify="right")
        table.add_column("baseline judge", justify="right")

    def fmt(v: Any) -> str:
        return "–" if v is None or v != v else f"{v:.2f}"

    blocks = [(f, summary["families"][f]) for f in FAMILIES if f in summary["families"]] + [("all", summary["overall"])]
    for name, block in blocks:
        row = [name, str(block["n"]), fmt(block["engine"]["score"]), fmt(block["baseline"]["score"]),
               fmt(block["baseline_focus"]["score"]), fmt(block["engine"]["evidence"]),
               fmt(block["baseline"]["evidence"])]
        if mode == "llm":
            row += [fmt(block["engine"]["judge"]), fmt(block["baseline"]["judge"])]
        table.add_row(*row)
    console.print(table)
    st, tp = result["ingestion"]["storage"], result["ingestion"]["throughput"]
    console.print(f"{tp['unique']}/{tp['frames']} frames read ({tp['duplicate_share']:.0%} duplicates), "
                  f"{tp['unique_fps']:.2f} unique frames/s; stored {st['stored_per_frame']:.0f} B per frame "
                  f"({st['stored_share']:.3%} of the PNG)")
    console.print(f"report: {escape(str(Path(out) / 'screenshot_qa.md'))}")
