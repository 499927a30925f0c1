"""Files of a LoCoMo evaluation: the JSON (everything), a Markdown report and PNG plots.

The JSON is strict (NaN written as null). The Markdown leads with the headline table at the main
budget, then answer metrics in LLM mode, the recall-against-budget table, a table of every question
(category, question, gold, each reader's answer with F1 and judge verdict in LLM mode, the engine's
evidence recall; long texts cut, the JSON keeps them whole), and the configuration.
Plots use matplotlib's Agg backend (no display needed).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Sequence

from mirix_py.eval.locomo import CATEGORY_NAMES, SCORED_CATEGORIES

STORE_NAMES = {"per_conversation": "a store per conversation, one user each", "shared": "one for every conversation"}


def jsonable(value: Any) -> Any:
    """NaN and infinities become None and paths strings, recursively, so the file is valid JSON."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, Path):
        return str(value)
    return value


def fmt(value: Any, digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "–"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(fmt(c) if not isinstance(c, str) else c for c in row) + " |" for row in rows]
    return "\n".join(lines)


def cell(text: Any, width: int) -> str:
    """Text for a Markdown table cell: one line, pipes escaped, cut to `width` characters with an ellipsis."""
    flat = " ".join(str(text if text is not None else "").split())
    if len(flat) > width:
        flat = flat[: width - 1].rstrip() + "…"
    return flat.replace("|", "\\|") or "–"


QUESTION_WIDTH, ANSWER_WIDTH = 100, 80


def per_question_rows(report: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """One row per question: id, category, question, gold, the engine's evidence recall, and per reader (LLM
    mode) its answer, LoCoMo F1 and judge verdict (category 5 is not judged: "–")."""
    readers = (report.get("answers") or {}).get("readers", [])
    budget = report["config"]["budget_words"]
    headers = ["id", "cat", "question", "gold", f"evidence recall ({budget} w)"]
    for r in readers:
        headers += [f"{r}: answer", "F1", "judge"]
    rows = []
    for q in report["questions"]:
        engine = q.get("systems", {}).get("engine", {})
        row = [q["id"], f"{q['category']} {CATEGORY_NAMES.get(q['category'], '')}".strip(),
               cell(q["question"], QUESTION_WIDTH), cell(q["gold"], ANSWER_WIDTH), fmt(engine.get("evidence_recall"), 2)]
        for r in readers:
            got = (q.get("answers") or {}).get(r, {})
            row += [cell(got.get("answer"), ANSWER_WIDTH), fmt(got.get("f1"), 2), got.get("judge") or "–"]
        rows.append(row)
    return headers, rows


def _cat_headers() -> list[str]:
    return [f"{c} {CATEGORY_NAMES[c]}" for c in SCORED_CATEGORIES]


def metric_rows(summary: dict[str, Any], names: Sequence[str], metric: str, extra: Sequence[str] = ()) -> list[list[Any]]:
    rows = []
    for name in names:
        s = summary[name]
        by = s["by_category"]
        rows.append([name, *[by.get(str(c), {}).get(metric) for c in SCORED_CATEGORIES], s["overall_1_4"].get(metric),
                     by.get("5", {}).get(metric), *[s["overall_1_4"].get(e) for e in extra]])
    return rows


def headline_rows(report: dict[str, Any]) -> tuple[list[str], list[list[Any]]]:
    """Evidence recall at the main budget: system and baselines, per category, with question counts."""
    summary, systems = report["summary"], report["systems"]
    rows = metric_rows(summary, systems, "evidence_recall", ["words", "search_ms"])
    for row in rows:
        row[-2] = fmt(row[-2], 0)
        row[-1] = fmt(row[-1], 1)
    counts = report["data"]["scored_questions_by_category"]
    rows.append(["questions", *[str(counts.get(str(c), 0)) for c in SCORED_CATEGORIES],
                 str(sum(counts.get(str(c), 0) for c in SCORED_CATEGORIES)), str(counts.get("5", 0)), "", ""])
    return ["system", *_cat_headers(), "overall 1-4", "5 adversarial", "words", "search ms/q"], rows


def headline_table(report: dict[str, Any]) -> str:
    return markdown_table(*headline_rows(report))


def _per_conversation_lines(per: dict[str, dict[str, Any]] | None) -> list[str]:
    """A table of evidence / answer-token recall (categories 1-4) per conversation and system."""
    if not per:
        return []
    convs = list(next(iter(per.values())))
    rows = [[name, *(f"{b[c]['evidence_recall']:.3f} / {b[c]['answer_token_recall']:.3f}" for c in convs)]
            for name, b in per.items()]
    return ["Per conversation (categories 1–4), evidence recall / answer-token recall:", "",
            markdown_table(["system", *convs], rows), ""]


def to_markdown(report: dict[str, Any]) -> str:
    cfg, data = report["config"], report["data"]
    budget = cfg["budget_words"]
    out = [f"# LoCoMo evaluation ({cfg['mode']} mode)", "",
           f"Data `{data['path']}` (sha256 {data['sha256_16']}…): {len(data['conversations'])} conversations, "
           f"{data['sessions']} sessions, {data['turns']} turns, {data['questions']} questions. Scored: questions "
           f"of categories 1–4 with evidence; category 5 (adversarial) apart. Engine search: `{cfg['method']}`, "
           f"{cfg['limit']} hits, context {cfg.get('context', 0)}; ingestion: {cfg['ingest_mode']}, one `add` per session.", "",
           *_sample_lines(data.get("sample")),
           f"## Evidence recall inside {budget} words", "",
           "Share of each question's evidence turns (`dia_id`) among the `source_ids` of the hits that fit the "
           "budget (hits kept in rank order, stopping at the first that does not fit).", "",
           headline_table(report), "",
           *_per_conversation_lines(report.get("per_conversation")),
           f"## Answer-token recall inside {budget} words", "",
           "Share of the gold answer's content words (normalised, Porter-stemmed, stopwords removed) present in "
           "that same context: what an answer would need, without a model.", "",
           markdown_table(["system", *_cat_headers(), "overall 1-4", "5 adversarial"],
                          metric_rows(report["summary"], report["systems"], "answer_token_recall")), ""]
    answers = report.get("answers") or {}
    if answers:
        readers, summary = answers["readers"], answers["summary"]
        out += [f"## Answers (answer model `{answers['answer_model']}`, judge `{answers['judge_model']}`)", "",
                "LLM-judge accuracy (binary, lenient on form):", "",
                markdown_table(["reader", *_cat_headers(), "overall 1-4"],
                               [r[:-1] for r in metric_rows(summary, readers, "judge_correct")]), "",
                "LoCoMo F1 (its normalisation and per-category rules; category 5: says the answer is not there):", "",
                markdown_table(["reader", *_cat_headers(), "overall 1-4", "5 adversarial"],
                               metric_rows(summary, readers, "f1")), "",
                "Cost and speed (categories 1–4):", "",
                markdown_table(["reader", "BLEU-1", "prompt tokens/q", "LLM calls/q", "latency p50 s", "latency p95 s",
                                "LLM calls", "tokens", "judge invalid"],
                               [[r, summary[r]["overall_1_4"]["bleu1"], summary[r]["overall_1_4"]["prompt_tokens"],
                                 summary[r]["overall_1_4"]["llm_calls"], summary[r]["latency_p50_s"],
                                 summary[r]["latency_p95_s"], summary[r]["llm_calls_total"], summary[r]["tokens_total"],
                                 summary[r]["judge_invalid"]] for r in readers]), ""]
    else:
        out += ["Answers, LoCoMo F1, BLEU-1 and the LLM judge need a model: run with `--mode llm`.", ""]
    budgets = cfg["curve_budgets"]
    out += ["## Evidence recall against the budget (categories 1–4)", "",
            markdown_table(["system", *[f"{b} words" for b in budgets]],
                           [[n, *[report["curve"][n][str(b)]["evidence_recall"] for b in budgets]]
                            for n in report["systems"]]), "",
            "![recall against budget](recall_vs_budget.png)", "", "![per category](per_category.png)", ""]
    out += ["## Per question", "",
            "Evidence recall is the engine's at the main budget. " + (
                "Answers are cut to a line of " f"{ANSWER_WIDTH} characters (whole in `locomo_eval.json`); F1 is "
                "LoCoMo's; the judge does not grade category 5." if answers else
                "Answers, F1 and judge verdicts need `--mode llm`."), "",
            markdown_table(*per_question_rows(report)), ""]
    engine = report["engine"]
    ev = data["evidence"]
    out += ["## Run", "",
            f"- Ingestion: {'reused from the cache' if engine.get('cache_reused') else 'fresh'}"
            f"{', %.1f s' % engine['ingest_seconds'] if engine.get('ingest_seconds') is not None else ''}; "
            f"memories: {engine.get('memories')}.",
            f"- Store: {STORE_NAMES.get(engine.get('store'), 'one for every conversation')}; "
            f"{engine.get('layout') or 'layout not recorded'}.",
            f"- Baselines over raw turns: {report['baselines'] or 'not run'}.",
            f"- Evidence lists: {ev['entries']} entries, {len(ev['malformed'])} malformed and repaired or dropped, "
            f"{len(ev['unknown'])} naming no turn, {ev['questions_without_evidence']} questions without evidence "
            "(not scored).",
            f"- Environment: {report['environment']}; run took {report['seconds']:.0f} s.",
            "- Configuration:", "", "```json", json.dumps(cfg, indent=1), "```", ""]
    return "\n".join(out)


def _sample_lines(sample: dict[str, Any] | None) -> list[str]:
    if not sample:
        return []
    return [f"Questions: a sample of {sample['selected_1_4']} of the {sample['available_1_4']} scored questions "
            f"(`--questions {sample['requested']}`, seed {sample['seed']}), {sample['selected']} of "
            f"{sample['available']} with category 5; {sample['method']}. Per category (sampled / available): "
            + ", ".join(f"{c}: {n}/{sample['available_by_category'].get(c, 0)}"
                        for c, n in sample["by_category"].items()) + ".", ""]


def write_plots(report: dict[str, Any], out_dir: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    paths = []
    budgets = report["config"]["curve_budgets"]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for name in report["systems"]:
        ys = [report["curve"][name][str(b)]["evidence_recall"] for b in budgets]
        ax.plot(budgets, [y if y is not None else float("nan") for y in ys], marker="o", label=name,
                linewidth=2.5 if name == "engine" else 1.5)
    ax.axvline(report["config"]["budget_words"], color="grey", linestyle=":", linewidth=1)
    ax.set_xlabel("context budget (words)")
    ax.set_ylabel("evidence recall, categories 1-4")
    ax.set_title("LoCoMo: evidence recall against the context budget")
    ax.set_ylim(0, 1)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    paths.append(out_dir / "recall_vs_budget.png")
    fig.savefig(paths[-1], dpi=110)
    plt.close(fig)

    panels = [("evidence_recall", report["summary"], report["systems"], "evidence recall")]
    answers = report.get("answers") or {}
    if answers:
        panels.append(("judge_correct", answers["summary"], answers["readers"], "LLM-judge accuracy"))
    fig, axes = plt.subplots(1, len(panels), figsize=(7 * len(panels), 4.5), squeeze=False)
    for ax, (metric, summary, names, label) in zip(axes[0], panels):
        width = 0.8 / max(1, len(names))
        for j, name in enumerate(names):
            by = summary[name]["by_category"]
            ys = [by.get(str(c), {}).get(metric) for c in SCORED_CATEGORIES]
            ax.bar([i + j * width for i in range(len(SCORED_CATEGORIES))],
                   [y if y is not None else 0 for y in ys], width, label=name)
        ax.set_xticks([i + width * (len(names) - 1) / 2 for i in range(len(SCORED_CATEGORIES))])
        ax.set_xticklabels(_cat_headers())
        ax.set_ylim(0, 1)
        ax.set_ylabel(label)
        ax.set_title(f"LoCoMo per category: {label} ({report['config']['budget_words']} words)")
        ax.grid(axis="y", alpha=0.3)
        ax.legend()
    fig.tight_layout()
    paths.append(out_dir / "per_category.png")
    fig.savefig(paths[-1], dpi=110)
    plt.close(fig)
    return paths


def write_report(report: dict[str, Any], out_dir: str | Path) -> dict[str, Path]:
    """locomo_eval.json, locomo_eval.md and the PNG plots in `out_dir`."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    clean = jsonable(report)
    json_path = out / "locomo_eval.json"
    json_path.write_text(json.dumps(clean, separators=(",", ":"), allow_nan=False))
    md_path = out / "locomo_eval.md"
    md_path.write_text(to_markdown(clean))
    plots = write_plots(clean, out)
    return {"json": json_path, "markdown": md_path, **{p.stem: p for p in plots}}
