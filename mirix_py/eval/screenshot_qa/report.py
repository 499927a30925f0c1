"""The report of a run: Markdown (tables per family, storage and throughput, every question) and a
bar plot per family (matplotlib, Agg)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from mirix_py.eval.report import jsonable
from mirix_py.text.words import human_bytes

__all__ = ["plot_families", "render_markdown"]

_NONE: dict[str, float] = {"score": math.nan, "evidence": math.nan, "first_mention": math.nan}  # older results


def _pct(v: float | None) -> str:
    return "–" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.2f}"




def render_markdown(result: dict[str, Any]) -> str:
    cfg = result["config"]
    ing = result["ingestion"]
    summ = result["summary"]
    llm = cfg["mode"] == "llm"
    lines = [
        f"# Screenshot QA: synthetic desktop, seed {cfg['seed']}, {cfg['days']} day(s)",
        "",
        f"`mirix eval screenshots --seed {cfg['seed']} --days {cfg['days']} --budget-words {cfg['budget_words']} "
        f"--mode {cfg['mode']} --dwell {cfg['dwell'][0]}-{cfg['dwell'][1]}` · {cfg['questions']} questions over {cfg['session_frames']} frames "
        f"({ing['throughput']['unique']} read by OCR) · {result['created_at']}",
        "",
        "**engine**: `Mirix.search(question)` (hybrid BM25 + MiniLM over the memories the offline managers "
        "wrote from the screenshots, inside the time range the chat flow reads from the question); "
        "vault entries carry their value unless of high sensitivity, as in a chat prompt. "
        f"**baseline**: BM25 over the raw OCR text of every frame the engine read, one document per frame. "
        f"**baseline+focus**: the same ranking, each frame cut to its first line and the lines about the "
        f"question, as the engine's prompts cut long memories (`mirix_py.text.passages.focus`). "
        f"All: hits in rank order while they fit {cfg['budget_words']} words.",
        "",
        "## Answer containment in the retrieved context (offline)",
        "",
        "| family | n | engine | baseline | baseline+focus | engine evidence | baseline evidence | "
        "baseline+focus evidence | engine first-mention | baseline first-mention | engine words | baseline words |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]

    def row(name: str, b: dict[str, Any]) -> str:
        e, s, f = b["engine"], b["baseline"], b.get("baseline_focus", _NONE)
        return (f"| {name} | {b['n']} | {_pct(e['score'])} | {_pct(s['score'])} | {_pct(f['score'])} | "
                f"{_pct(e['evidence'])} | {_pct(s['evidence'])} | {_pct(f['evidence'])} | "
                f"{_pct(e['first_mention'])} | {_pct(s['first_mention'])} | {e['words']:.0f} | {s['words']:.0f} |")

    for fam, block in summ["families"].items():
        lines.append(row(fam, block))
    lines.append(row("**all questions**", summ["overall"]))
    macro = summ["macro"]
    mf = macro.get("baseline_focus", _NONE)
    lines.append(f"| **mean of families** | {len(summ['families'])} | {_pct(macro['engine']['score'])} | "
                 f"{_pct(macro['baseline']['score'])} | {_pct(mf['score'])} | {_pct(macro['engine']['evidence'])} | "
                 f"{_pct(macro['baseline']['evidence'])} | {_pct(mf['evidence'])} | "
                 f"{_pct(macro['engine']['first_mention'])} | {_pct(macro['baseline']['first_mention'])} | | |")
    lines += [
        "",
        "- **containment** (engine, baseline): share of questions whose every gold part occurs in the kept "
        "context after normalising case and punctuation (whole words). Counting questions need every item "
        "counted; cross-app questions every part. For **abstention** it is the share where the gold "
        "\"not present\" holds: no kept hit contains a trap value (a similar value that was on screen, "
        "e.g. another person's phone number for a stranger's).",
        "- **evidence**: share of a question's evidence groups (one per gold part) with at least one "
        "evidence frame among the kept hits' `source_ids` (abstention: none).",
        "- **first-mention** (time-localised, knowledge-update and other questions with distractors): the "
        "first kept hit mentioning the gold or a distractor (another day's or a superseded value) mentions "
        "the gold and no distractor.",
        "",
    ]
    if llm:
        lines += ["## LLM judge (answers from `Mirix.chat`; baseline: the same model given the baseline context)",
                  "", "| family | n | engine | baseline |", "|---|---:|---:|---:|"]
        for fam, block in summ["families"].items():
            lines.append(f"| {fam} | {block['n']} | {_pct(block['engine']['judge'])} | {_pct(block['baseline']['judge'])} |")
        o = summ["overall"]
        lines += [f"| **all questions** | {o['n']} | {_pct(o['engine']['judge'])} | {_pct(o['baseline']['judge'])} |", ""]
    st, tp, rep = ing["storage"], ing["throughput"], ing["report"]
    lines += [
        "## Storage and throughput (ingestion of this session)",
        "",
        "| measure | value |",
        "|---|---:|",
        f"| frames / read by OCR / skipped as near-duplicates | {tp['frames']} / {tp['unique']} / "
        f"{tp['duplicates']} ({tp['duplicate_share']:.1%}) |",
        f"| unique frames per second, end to end (dedup, OCR, managers, embeddings, store) | {tp['unique_fps']:.2f} |",
        f"| all frames per second | {tp['all_fps']:.2f} |",
        f"| ingestion wall time / OCR CPU time | {tp['wall_seconds']:.1f} s / {tp['ocr_seconds']:.1f} s |",
        f"| raw PNG per frame | {human_bytes(st['png_per_frame'])} |",
        f"| stored per frame (input log + memories + history + vectors) | {human_bytes(st['stored_per_frame'])} "
        f"({st['stored_share']:.3%} of the PNG) |",
        *[f"| &nbsp;&nbsp;{k.replace('_', ' ')} per frame | {human_bytes(v)} |" for k, v in st["by_part_per_frame"].items()],
        f"| stored per unique frame | {human_bytes(st['stored_per_unique_frame'])} |",
        f"| memories written | {', '.join(f'{k} {v}' for k, v in sorted(ing['memories'].items()))} |",
        f"| mean search time per question, engine / baseline | {summ['overall']['engine']['ms']:.0f} ms / "
        f"{summ['overall']['baseline']['ms']:.1f} ms |",
        "",
        f"Throughput was measured when the cache entry was built ({ing.get('built_at', '?')}, load average "
        f"{tp.get('load_average', float('nan')):.1f} on {tp.get('cpus')} CPUs); this run "
        f"{'reused it' if ing.get('reused') else 'built it'}. {rep.get('batches', 0)} memory updates.",
        "",
        "## Configuration",
        "",
        "```json",
        json.dumps(jsonable({"config": cfg, "cache_key": ing["cache_key"], "engine": ing.get("engine"),
                              "engine_fingerprint": ing["engine_fingerprint"], "ingestion_settings": ing["settings"]}),
                   indent=1),
        "```",
        "",
        "## Questions",
        "",
        "| id | question | gold | engine | baseline |" + (" engine judge | baseline judge |" if llm else ""),
        "|---|---|---|---:|---:|" + ("---:|---:|" if llm else ""),
    ]
    for q in result["questions"]:
        cells = [q["id"], q["question"].replace("|", "\\|"), q["gold"].replace("|", "\\|"),
                 _pct(q["engine"]["score"]), _pct(q["baseline"]["score"])]
        if llm:
            cells += [_pct(q["engine"].get("judge")), _pct(q["baseline"].get("judge"))]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    return "\n".join(lines)


def plot_families(result: dict[str, Any], path: str | Path) -> Path:
    """Bars per family (and overall): engine beside the baselines, for containment, evidence and (LLM) judge."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    summ = result["summary"]
    names = list(summ["families"]) + ["all"]
    blocks = [summ["families"][f] for f in summ["families"]] + [summ["overall"]]
    panels = [("score", "answer containment (abstention: trap absent)"), ("evidence", "evidence frame retrieved")]
    if result["config"]["mode"] == "llm":
        panels.append(("judge", "LLM judge accuracy"))
    fig, axes = plt.subplots(len(panels), 1, figsize=(10, 3.2 * len(panels)), squeeze=False)
    series = [("engine", "engine", "#2b6cb0"), ("baseline", "baseline", "#a0aec0"),
              ("baseline_focus", "baseline+focus", "#718096")]
    series = [x for x in series if x[0] in blocks[0]]
    width = 0.8 / len(series)
    for ax, (metric, title) in zip(axes[:, 0], panels):
        for k, (system, label, colour) in enumerate(series):
            raw = [b[system].get(metric) for b in blocks]
            missing = [v is None or (isinstance(v, float) and math.isnan(v)) for v in raw]
            vals = [0.0 if m else v for v, m in zip(raw, missing)]
            xs = [i + (k - (len(series) - 1) / 2) * width for i in range(len(names))]
            bars = ax.bar(xs, vals, width, label=label, color=colour)
            for bar, v, m in zip(bars, vals, missing):  # not measured (e.g. evidence of abstention): "n/a"
                ax.text(bar.get_x() + bar.get_width() / 2, v + 0.02, "n/a" if m else f"{v:.2f}", ha="center",
                        fontsize=7)
        ax.set_xticks(range(len(names)), [f"{n}\n(n={b['n']})" for n, b in zip(names, blocks)], fontsize=8)
        ax.set_ylim(0, 1.15)
        ax.set_title(title, fontsize=10)
        ax.legend(fontsize=8, loc="upper right")
    cfg = result["config"]
    fig.suptitle(f"Screenshot QA, seed {cfg['seed']}, {cfg['days']} day(s), {cfg['budget_words']}-word context",
                 fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return Path(path)
