"""`mirix eval locomo` (and `mirix eval screenshots`): registered on the main `mirix` command."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Optional

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from mirix_py.eval.cli_errors import REFUSALS, fail as _fail

eval_app = typer.Typer(no_args_is_help=True, help="Reproducible evaluation: LoCoMo and screenshot QA, with baselines.")
console = Console()
err = Console(stderr=True)


def rich_progress() -> tuple[Progress, Callable[..., None]]:
    """A rich progress display and a `(stage, done, total, note="")` callback that drives one bar per stage."""
    bars = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                    console=err, transient=False)
    tasks: dict[str, TaskID] = {}

    def update(stage: str, done: int, total: int, note: str = "") -> None:
        if stage not in tasks:
            tasks[stage] = bars.add_task(stage, total=total)
        bars.update(tasks[stage], completed=done, total=total)

    return bars, update


def run_progress(prefix: str = "locomo") -> tuple[Any, Callable[..., None]]:
    """Rich bars when stderr is a terminal; otherwise (CI, a log file) one flushed plain line per event.

    Returns a context manager to run inside and the progress callback.
    """
    if err.is_terminal:
        return rich_progress()
    from contextlib import nullcontext

    from mirix_py.eval.progress import LineProgress

    return nullcontext(), LineProgress(prefix=prefix)


def headline_rich_table(report: dict) -> Any:
    """The report's headline (evidence recall at the main budget) as a terminal table."""
    from rich.table import Table

    from mirix_py.eval.report import fmt, headline_rows

    headers, rows = headline_rows(report)
    table = Table(title=f"LoCoMo evidence recall inside {report['config']['budget_words']} words")
    for i, h in enumerate(headers):
        table.add_column(h, justify="left" if i == 0 else "right", no_wrap=i == 0)
    for row in rows:
        table.add_row(*[c if isinstance(c, str) else fmt(c) for c in row])
    return table


@eval_app.command("locomo")
def locomo(
    data: Path = typer.Option(..., "--data", help="LoCoMo JSON in its original format (e.g. locomo_dev.json)."),
    mode: str = typer.Option("offline", "--mode", help="offline (retrieval metrics, no model) or llm (also answers)."),
    budget_words: int = typer.Option(750, "--budget-words", help="Context budget in words (a Chinese letter or Thai cluster is one)."),
    conversations: Optional[int] = typer.Option(None, "--conversations", help="Only the first N conversations."),
    out: Path = typer.Option(Path("eval-results/locomo"), "--out", help="Folder for the JSON, Markdown and PNG files."),
    limit: int = typer.Option(60, "--limit", help="Engine hits fetched per question."),
    method: str = typer.Option("hybrid", "--method", help="Engine search method: hybrid, bm25, embedding, string."),
    context: Optional[int] = typer.Option(
        None, "--context", help="Turns around the first N engine matches (0: matches only); default: the engine's "
        "search default (MIRIX_SEARCH_CONTEXT, else 0), what every reader's search uses."),
    ingest_mode: Optional[str] = typer.Option(None, "--ingest-mode", help="offline or llm (default: --mode)."),
    no_baselines: bool = typer.Option(False, "--no-baselines", help="Skip the raw-turn baselines."),
    judge_model: Optional[str] = typer.Option(None, "--judge-model", envvar="MIRIX_JUDGE_MODEL",
                                              help="Judge model (same provider; default: the answer model)."),
    seed: int = typer.Option(0, "--seed", help="Seed for OpenAI-compatible judge/answer calls and for --questions."),
    questions: Optional[int] = typer.Option(
        None, "--questions", help="Only a seeded sample of N questions of categories 1-4, spread over the categories "
        "in proportion to their sizes (at least one each); category 5 added at the same rate. Deterministic per --seed."),
    cache_dir: Optional[Path] = typer.Option(None, "--cache-dir",
                                             help="Where ingested data dirs are kept (default ~/.cache/mirix/locomo)."),
    fresh: bool = typer.Option(False, "--fresh", help="Re-ingest even when the cache holds this ingestion."),
    store: str = typer.Option("per_conversation", "--store", help="per_conversation: each conversation in a store "
                              "of its own, as one user's memory is; shared: all in one store, a user each."),
) -> None:
    """Evidence recall and answer-token recall inside a budget beside BM25/MiniLM/RRF over raw turns;
    with --mode llm also chat answers, LoCoMo F1, BLEU-1 and an LLM judge, beside full context."""
    from pydantic import ValidationError

    from mirix_py.eval.cache import default_cache_dir
    from mirix_py.eval.locomo_eval import LocomoEvalConfig, run_locomo
    from mirix_py.eval.report import write_report
    from mirix_py.settings import Settings

    if not data.is_file():
        _fail(f"no such file: {data}")
    settings = Settings.from_env()
    try:
        config = LocomoEvalConfig.model_validate(dict(  # validated: --mode and --method are plain strings here
            data=data, mode=mode, ingest_mode=ingest_mode, budget_words=budget_words, conversations=conversations,
            limit=limit, method=method, context=settings.search_context if context is None else context,
            embedder=settings.embedder, baselines=not no_baselines,
            llm_model=settings.llm_model, judge_model=judge_model, seed=seed, questions=questions,
            cache_dir=cache_dir or default_cache_dir("locomo"), fresh=fresh, store=store))
    except ValidationError as exc:
        _fail("; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()))
    model_client = judge_client = None
    if "llm" in (config.mode, config.ingest_mode):
        from mirix_py.llm.clients import build_model_client

        model_client = build_model_client(settings)
        if model_client is None:
            _fail("--mode llm needs a model: set MIRIX_LLM_PROVIDER and MIRIX_LLM_MODEL (see the README)")
        if judge_model:
            judge_client = build_model_client(settings.model_copy(update={"llm_model": judge_model}))
    from mirix_py.store.embeddings import load_embedder

    try:
        embedder = load_embedder(settings.embedder)
        bars, update = run_progress("locomo")
        with bars:
            report = run_locomo(config, embedder=embedder, model_client=model_client, judge_client=judge_client,
                                progress=update)
    except REFUSALS as exc:
        _fail(str(exc))
    paths = write_report(report, out)
    sample = report["data"].get("sample")
    if sample:
        console.print(f"questions: a sample of {sample['selected_1_4']} of {sample['available_1_4']} scored "
                      f"(requested {sample['requested']}, seed {sample['seed']}); by category "
                      + ", ".join(f"{c}: {n}" for c, n in sample["by_category"].items()))
    console.print(headline_rich_table(report))
    for name, block in (report.get("answers") or {}).get("summary", {}).items():
        o = block["overall_1_4"]
        console.print(f"{name}: judge {o['judge_correct']:.3f}, F1 {o['f1']:.3f}, BLEU-1 {o['bleu1']:.3f}, "
                      f"latency p50 {block['latency_p50_s']:.2f} s / p95 {block['latency_p95_s']:.2f} s")
    console.print("\nwrote " + ", ".join(str(p) for p in paths.values()))


from mirix_py.eval.screenshot_cli import screenshots_command  # noqa: E402

eval_app.command("screenshots")(screenshots_command)


def register(app: typer.Typer) -> None:
    app.add_typer(eval_app, name="eval")
