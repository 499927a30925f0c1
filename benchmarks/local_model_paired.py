"""The LLM store against the offline store, question by question, from results of `local_model.py`.

`local_model.py` writes these figures itself (its "paired" key); this reads them from the rows of any
results file, older ones included, so every run in the README is compared the same way: for each
answerer (offline, model) and figure (F1, evidence, answer tokens), the mean difference LLM − offline
with its 95% bootstrap interval over the questions, and how many questions each store won.

    .venv/bin/python benchmarks/local_model_paired.py benchmarks/results/local_model_functions_conv30*.json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import quiet_logs  # noqa: E402
from local_model import paired  # noqa: E402

from mirix_py.eval.paired import PairedDifference  # noqa: E402

ANSWERERS = {"scores": "offline answerer", "scores_model_answerer": "model answerer"}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("results", nargs="+", help="results files written by benchmarks/local_model.py")
    parser.add_argument("--pooled", action="store_true",
                        help="also the questions of every file together (e.g. held-out conversations read alike)")
    parser.add_argument("--out", default=None, help="JSON file for the figures, by file and answerer")
    args = parser.parse_args()
    quiet_logs()
    figures: dict[str, dict[str, dict]] = {}
    pooled: dict[str, tuple[list, list]] = {}
    for name in args.results:
        result = json.loads(Path(name).read_text())
        for key, answerer in ANSWERERS.items():
            stores = result.get(key, {})
            if not {"llm", "offline"} <= stores.keys():
                continue
            figures.setdefault(name, {})[answerer] = paired(stores["llm"]["rows"], stores["offline"]["rows"])
            pooled.setdefault(answerer, ([], []))[0].extend(stores["llm"]["rows"])
            pooled[answerer][1].extend(stores["offline"]["rows"])
    if args.pooled and len(args.results) > 1:
        figures["pooled"] = {answerer: paired(*rows) for answerer, rows in pooled.items()}
    for name, by_answerer in figures.items():
        for answerer, compared in by_answerer.items():
            for metric, difference in compared.items():
                print(f"{Path(name).stem}, {answerer}, {metric}: {PairedDifference(**difference).render()}")
    if not figures:
        print("no results file held both stores' rows", file=sys.stderr)
        return 1
    if args.out:
        Path(args.out).write_text(json.dumps(figures, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
