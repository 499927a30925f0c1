"""Precision and recall of the offline vault rules (`find_secrets`) on the labelled secrets corpus.

Pure CPU, no model, no data dir: parses `tests/fixtures/secrets_corpus.jsonl` (chat lines, screen
text, documents; positives and near misses), runs the rules on every text and prints, per entry type
and overall, how many secrets were labelled and found, precision and recall (type and value must
both match), the value-only figures (a secret stored under another type still stays out of plain
text), and with `--errors` every text the rules got wrong. Target (issue 17): recall >= 0.98 with
precision >= 0.95; `tests/agents/offline/test_secret_corpus.py` asserts it.

    .venv/bin/python benchmarks/secrets_corpus.py [--corpus FILE] [--errors] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from mirix_py.eval.secret_eval import parse_corpus, score  # noqa: E402
from mirix_py.secrets.detection import find_secrets  # noqa: E402

CORPUS = ROOT / "tests" / "fixtures" / "secrets_corpus.jsonl"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--errors", action="store_true", help="print every text with a miss or a false positive")
    parser.add_argument("--out", type=Path, help="write the figures as JSON")
    args = parser.parse_args(argv)

    examples = parse_corpus(args.corpus.read_text(encoding="utf-8").splitlines())
    t0 = time.perf_counter()
    strict = score(examples, find_secrets)
    elapsed = time.perf_counter() - t0
    loose = score(examples, find_secrets, value_only=True)
    sources = Counter(e.source for e in examples)
    print(f"corpus: {args.corpus.name}: {len(examples)} texts ({', '.join(f'{k} {v}' for k, v in sorted(sources.items()))}), "
          f"{sum(len(e.secrets) for e in examples)} labelled secrets, "
          f"{sum(1 for e in examples if not e.secrets)} texts without any")
    print(f"rules: {elapsed * 1000:.1f} ms for the corpus ({elapsed * 1e6 / len(examples):.0f} µs/text)\n")
    print(f"{'entry type':<14} {'labelled':>8} {'found':>6} {'tp':>4} {'fp':>4} {'fn':>4} {'precision':>9} {'recall':>7}")
    for row in strict.rows():
        print(f"{row['type']:<14} {row['labelled']:>8} {row['found']:>6} {row['tp']:>4} {row['fp']:>4} {row['fn']:>4} "
              f"{row['precision']:>9.3f} {row['recall']:>7.3f}")
    print(f"\nvalue only (type ignored): precision {loose.precision():.3f}, recall {loose.recall():.3f}")
    target = strict.recall() >= 0.98 and strict.precision() >= 0.95
    print(f"target recall >= 0.98 with precision >= 0.95: {'met' if target else 'NOT met'}")
    if args.errors and strict.errors:
        print("\nerrors:")
        for err in strict.errors:
            print(f"  [{err['source']}] {err['text']!r}")
            for kind, value in err["missed"]:
                print(f"      missed {kind}: {value!r}")
            for kind, value in err["false_positives"]:
                print(f"      false positive {kind}: {value!r}")
    if args.out:
        args.out.write_text(json.dumps({"corpus": str(args.corpus.relative_to(ROOT)) if args.corpus.is_relative_to(ROOT)
                                        else str(args.corpus), "texts": len(examples), "by_type": strict.rows(),
                                        "value_only": {"precision": loose.precision(), "recall": loose.recall()},
                                        "errors": strict.errors}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
