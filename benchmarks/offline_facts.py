"""Precision and recall of the offline fact rules on the labelled facts corpus, and how they apply changes.

Pure CPU, no model, no data dir: parses `tests/fixtures/offline_facts_corpus.jsonl` (sentences with
their expected facts, updates with the facts they supersede and keep, near misses), runs the rules
that feed semantic and core memory on every text, and prints recall per attribute, overall
precision and recall (loose: entity and value words; strict: also the attribute), and the
supersession figures of the updates. `--errors` prints every example the rules got wrong.
Each corpus is scored twice in the same run: by the patterns alone (the baseline) and with the dependency
parse (`rules.parsed`, spaCy's small English pipeline), as the engine runs them by default (`--parser`).
The rules were tuned on the corpus; a held-out set (`--heldout`, by default
`tests/fixtures/offline_facts_heldout.jsonl` when there is one) is committed before the rules are run on it,
so its figures say how the rules do on sentences they were not fitted to. A set the rules are later fitted to
becomes a regression set (`tests/fixtures/fact_regressions/`, floors in
`tests/agents/offline/test_fact_regressions.py`); its blind figures stay in `benchmarks/docs/offline_facts.md`.

    .venv/bin/python benchmarks/offline_facts.py [--heldout FILE] [--corpus FILE] [--parser both|none|spacy] [--errors] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from functools import partial
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from mirix_py.eval.fact_eval import (  # noqa: E402
    parse_corpus, rules_extract, rules_memory, score, score_updates,
)

CORPUS = ROOT / "tests" / "fixtures" / "offline_facts_corpus.jsonl"


HELDOUT = ROOT / "tests" / "fixtures" / "offline_facts_heldout.jsonl"


def report(path: Path, errors: bool, parser: Any = None) -> dict:
    """Print the figures of one corpus, read by the patterns alone or also by `parser`; return them."""
    examples = parse_corpus(path.read_text(encoding="utf-8").splitlines())
    extract = partial(rules_extract, parser=parser)
    t0 = time.perf_counter()
    loose = score(examples, extract)
    elapsed = time.perf_counter() - t0
    strict = score(examples, extract, strict=True)
    updates = score_updates(examples, partial(rules_memory, parser=parser))
    resolved = score_updates(examples, lambda inputs: rules_memory(inputs, people=True, parser=parser))
    n_facts = sum(len(e.facts) for e in examples)
    reader = "patterns and parse" if parser is not None else "patterns only"
    print(f"== {reader}")
    print(f"corpus: {path.name}: {len(examples)} texts, {n_facts} labelled facts, "
          f"{sum(1 for e in examples if not e.facts)} texts without any, "
          f"{sum(1 for e in examples if e.is_update)} updates ({updates.supersessions} supersessions)")
    print(f"rules: {elapsed * 1000:.1f} ms for the corpus\n")
    print(f"{'attribute':<12} {'labelled':>8} {'found':>6} {'recall':>7}")
    for row in loose.rows():
        print(f"{row['attribute']:<12} {row['labelled']:>8} {row['found']:>6} {row['recall']:>7.3f}")
    print()
    print(f"{'extraction':<22} {'precision':>9} {'recall':>7}")
    print(f"{'loose (entity, value)':<22} {loose.precision():>9.3f} {loose.recall():>7.3f}")
    print(f"{'strict (+ attribute)':<22} {strict.precision():>9.3f} {strict.recall():>7.3f}")
    print()
    print(f"updates: supersessions applied {updates.applied}/{updates.supersessions} ({updates.recall():.3f}); "
          f"facts kept {updates.kept}/{updates.keeps} ({updates.kept_rate():.3f})")
    print(f"  with relation words resolved from the relations held (extract_claims(people=...), as the managers "
          f"pass them): supersessions {resolved.applied}/{resolved.supersessions}, kept {resolved.kept}/{resolved.keeps}\n")
    if errors:
        print("extraction errors:")
        for e in loose.errors:
            print(f"  {e['text']!r}\n    missed {e['missed']}\n    false positives {e['false_positives']}")
        print("\nupdate errors:")
        for e in updates.errors:
            print(f"  {e['prior']} -> {e['text']!r}\n    {e['problems']}\n    held {e['held']}")
        print()
    return {"corpus": path.name, "reader": reader, "texts": len(examples), "facts": n_facts,
            "loose": {"precision": loose.precision(), "recall": loose.recall(), "by_attribute": loose.rows()},
            "strict": {"precision": strict.precision(), "recall": strict.recall()},
            "updates": {"supersessions": updates.supersessions, "applied": updates.applied,
                        "recall": updates.recall(), "keeps": updates.keeps, "kept": updates.kept},
            "updates_people_resolved": {"applied": resolved.applied, "kept": resolved.kept}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, action="append",
                        help="a corpus file (repeatable; default: the corpus and the held-out set)")
    parser.add_argument("--heldout", type=Path, default=HELDOUT,
                        help=f"the held-out set scored after the corpus (default: {HELDOUT.relative_to(ROOT)}, when it exists)")
    parser.add_argument("--errors", action="store_true", help="print every example the rules got wrong")
    parser.add_argument("--out", type=Path, help="write the figures as JSON")
    parser.add_argument("--parser", choices=["both", "none", "spacy"], default="both",
                        help="score by the patterns alone (none), with the parse (spacy), or both in turn (default)")
    args = parser.parse_args(argv)
    if args.heldout != HELDOUT and not args.heldout.exists():
        parser.error(f"no held-out set at {args.heldout}")
    paths = args.corpus or [path for path in (CORPUS, args.heldout) if path.exists()]
    readers: list[Any] = []
    if args.parser in ("both", "none"):
        readers.append(None)
    if args.parser in ("both", "spacy"):
        from mirix_py.agents.offline.parser import SpacyParser

        readers.append(SpacyParser())
    figures = [report(path, args.errors, reader) for path in paths for reader in readers]
    if args.out:
        args.out.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
