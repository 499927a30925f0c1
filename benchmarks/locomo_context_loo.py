"""Choose `search(context=N)` by leave-one-conversation-out, from `mirix eval locomo` reports.

Each report is one run of `mirix eval locomo --context N` on the same data (same ingestion cache).
Per fold, the setting is chosen on four conversations (evidence recall over their questions, ties to
answer-token recall, then the smaller N) and scored on the fifth, beside every setting's dev figure
(all five conversations), so a setting that only wins in the mean shows where it loses.

    .venv/bin/python benchmarks/locomo_context_loo.py c0/locomo_eval.json c1/locomo_eval.json ... \
        [--out loo.json] [--markdown loo.md]
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any, Sequence

METRICS = ("evidence_recall", "answer_token_recall")
SCORED = {1, 2, 3, 4}


def question_values(report: dict[str, Any]) -> list[dict[str, Any]]:
    """The engine's per-question values of the scored categories: conversation, category and metrics."""
    out = []
    for row in report["questions"]:
        if row["category"] in SCORED:
            got = row["systems"]["engine"]
            out.append({"conversation": row["conversation"], "category": row["category"],
                        **{m: got[m] for m in METRICS}})
    return out


def mean_of(rows: Sequence[dict[str, Any]], metric: str, *, only: str | None = None,
            without: str | None = None) -> float:
    """Mean of `metric` over the questions of conversation `only`, or of all but `without` (nulls left out)."""
    values = [r[metric] for r in rows if (only is None or r["conversation"] == only)
              and (without is None or r["conversation"] != without) and r[metric] is not None
              and not math.isnan(r[metric])]
    return sum(values) / len(values) if values else math.nan


def choose(by_setting: dict[int, list[dict[str, Any]]], without: str | None = None) -> int:
    """The setting best on the questions outside `without`: evidence recall, then answer tokens, then smaller N."""
    return max(by_setting, key=lambda n: (round(mean_of(by_setting[n], "evidence_recall", without=without), 6),
                                          round(mean_of(by_setting[n], "answer_token_recall", without=without), 6),
                                          -n))


def analyse(reports: dict[int, dict[str, Any]]) -> dict[str, Any]:
    by_setting = {n: question_values(r) for n, r in sorted(reports.items())}
    convs = list(dict.fromkeys(r["conversation"] for rows in by_setting.values() for r in rows))
    dev = {n: {"overall": {m: mean_of(rows, m) for m in METRICS},
               "per_conversation": {c: {m: mean_of(rows, m, only=c) for m in METRICS} for c in convs},
               "by_category": {str(k): {m: mean_of([r for r in rows if r["category"] == k], m) for m in METRICS}
                               for k in sorted(SCORED)}}
           for n, rows in by_setting.items()}
    dev_pick = choose(by_setting)
    folds = []
    for conv in convs:
        picked = choose(by_setting, without=conv)
        held = {n: {m: mean_of(by_setting[n], m, only=conv) for m in METRICS} for n in by_setting}
        best_held = max(held[n]["evidence_recall"] for n in held)
        folds.append({"held_out": conv, "picked": picked,
                      "train": {m: mean_of(by_setting[picked], m, without=conv) for m in METRICS},
                      "held_out_scores": held[picked], "held_out_by_setting": held,
                      "picked_is_best_held_out": held[picked]["evidence_recall"] >= best_held - 1e-9})
    picked_for = {f["held_out"]: f["picked"] for f in folds}
    pooled = [r for n, rows in by_setting.items() for r in rows if picked_for[r["conversation"]] == n]
    held_mean = {m: mean_of(pooled, m) for m in METRICS}
    return {"settings": sorted(by_setting), "conversations": convs, "dev": dev, "dev_pick": dev_pick,
            "folds": folds, "held_out_overall": held_mean,
            "every_fold_picks_dev_pick": all(f["picked"] == dev_pick for f in folds),
            "questions": len(pooled)}


def markdown(result: dict[str, Any]) -> str:
    f3 = "{:.3f}".format
    settings, convs = result["settings"], result["conversations"]
    lines = ["| context | words | overall 1-4 | " + " | ".join(convs) + " |", "|---" * (len(convs) + 3) + "|"]
    for n in settings:
        d = result["dev"][n]
        cells = [f"{d.get('words', math.nan):.0f}",
                 f"{f3(d['overall']['evidence_recall'])} / {f3(d['overall']['answer_token_recall'])}"]
        cells += [f"{f3(d['per_conversation'][c]['evidence_recall'])} / "
                  f"{f3(d['per_conversation'][c]['answer_token_recall'])}" for c in convs]
        lines.append(f"| {n} | " + " | ".join(cells) + " |")
    lines += ["", "| held out | chosen on the other four | their evidence / answer tokens | held-out evidence / "
              "answer tokens | best held-out evidence among settings |", "|---|---|---|---|---|"]
    for f in result["folds"]:
        best = max(f["held_out_by_setting"].items(), key=lambda kv: kv[1]["evidence_recall"])
        lines.append(f"| {f['held_out']} | {f['picked']} | {f3(f['train']['evidence_recall'])} / "
                     f"{f3(f['train']['answer_token_recall'])} | {f3(f['held_out_scores']['evidence_recall'])} / "
                     f"{f3(f['held_out_scores']['answer_token_recall'])} | {f3(best[1]['evidence_recall'])} "
                     f"(context {best[0]}) |")
    h = result["held_out_overall"]
    lines += ["", f"Dev pick: context {result['dev_pick']}; every fold chose it: {result['every_fold_picks_dev_pick']}. "
              f"Held-out, all folds pooled ({result['questions']} questions): evidence {f3(h['evidence_recall'])}, "
              f"answer tokens {f3(h['answer_token_recall'])}."]
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("reports", nargs="+", type=Path, help="locomo_eval.json files, one per --context (and --limit)")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--markdown", type=Path)
    args = ap.parse_args()
    by_limit: dict[int, dict[int, dict[str, Any]]] = {}
    for path in args.reports:
        report = json.loads(path.read_text())
        limit, n = int(report["config"]["limit"]), int(report["config"]["context"])
        if n in by_limit.setdefault(limit, {}):
            raise SystemExit(f"two reports for limit {limit}, context {n}")
        by_limit[limit][n] = report
    reports = [r for group in by_limit.values() for r in group.values()]
    if len({r["data"]["sha256_16"] for r in reports}) != 1 or len({r["config"]["budget_words"] for r in reports}) != 1:
        raise SystemExit("the reports must score the same data at the same budget")
    out: dict[str, Any] = {"budget_words": reports[0]["config"]["budget_words"],
                           "data_sha256_16": reports[0]["data"]["sha256_16"],
                           "reports": [str(p) for p in args.reports], "by_limit": {}}
    text = ""
    for limit, group in sorted(by_limit.items(), key=lambda kv: -kv[0]):
        result = analyse(group)
        for n, report in group.items():  # what each setting costs: words kept, and recall at every budget
            result["dev"][n]["words"] = report["summary"]["engine"]["overall_1_4"]["words"]
            result["dev"][n]["curve"] = report["curve"]["engine"]
        out["by_limit"][str(limit)] = result
        text += f"## limit {limit}, {out['budget_words']} words\n\n" + markdown(result) + "\n"
    print(text)
    if args.out:
        args.out.write_text(json.dumps(out, indent=1, default=str) + "\n")
    if args.markdown:
        args.markdown.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
