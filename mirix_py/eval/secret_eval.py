"""Precision and recall of the vault's secret detection on a labelled corpus.

Pure: a corpus is parsed from JSON lines, a detector is any callable from text to matches with
`entry_type` and `value` (`find_secrets` by default), and the score is plain counting. The corpus in
`tests/fixtures/secrets_corpus.jsonl` holds one example per line:

    {"source": "chat" | "ocr" | "document", "text": "...", "secrets": [{"type": "password", "value": "..."}]}

An example without secrets is a near miss: anything found in it is a false positive. A detected
secret counts as correct when both its entry type and its exact value are labelled for that text
(a value found twice in one text counts once). `value_only` ignores the entry type, which is what
matters for leaking: a secret stored under the wrong type is still kept out of plain text.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Sequence

__all__ = ["Example", "Score", "parse_corpus", "score"]


@dataclass(frozen=True)
class Example:
    text: str
    secrets: tuple[tuple[str, str], ...]  # (entry_type, value)
    source: str = "chat"


@dataclass
class Score:
    """Counts per entry type ("all" for the totals) and the examples that went wrong."""

    tp: Counter = field(default_factory=Counter)
    fp: Counter = field(default_factory=Counter)
    fn: Counter = field(default_factory=Counter)
    errors: list[dict[str, Any]] = field(default_factory=list)

    def precision(self, kind: str = "all") -> float:
        found = self.tp[kind] + self.fp[kind]
        return self.tp[kind] / found if found else 1.0

    def recall(self, kind: str = "all") -> float:
        labelled = self.tp[kind] + self.fn[kind]
        return self.tp[kind] / labelled if labelled else 1.0

    def kinds(self) -> list[str]:
        return sorted(k for k in set(self.tp) | set(self.fp) | set(self.fn) if k != "all")

    def rows(self) -> list[dict[str, Any]]:
        """One row per entry type, then "all": counts, precision and recall."""
        return [
            {"type": k, "labelled": self.tp[k] + self.fn[k], "found": self.tp[k] + self.fp[k], "tp": self.tp[k],
             "fp": self.fp[k], "fn": self.fn[k], "precision": self.precision(k), "recall": self.recall(k)}
            for k in [*self.kinds(), "all"]
        ]


def parse_corpus(lines: Iterable[str]) -> list[Example]:
    """Examples from JSON lines; blank lines and lines starting with "#" are skipped."""
    examples = []
    for number, line in enumerate(lines, 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        row = json.loads(line)
        secrets = tuple((s["type"], s["value"]) for s in row.get("secrets", []))
        for _, value in secrets:
            if value not in row["text"]:
                raise ValueError(f"line {number}: labelled value {value!r} is not in the text")
        examples.append(Example(text=row["text"], secrets=secrets, source=row.get("source", "chat")))
    return examples


def score(examples: Sequence[Example], detect: Callable[[str], Sequence[Any]] | None = None, *,
          value_only: bool = False) -> Score:
    if detect is None:
        from mirix_py.secrets.detection import find_secrets
        detect = find_secrets
    result = Score()
    for example in examples:
        def key(kind: str, value: str) -> tuple[str, str]:
            return ("secret" if value_only else kind, value)

        expected = {key(k, v) for k, v in example.secrets}
        found = {key(m.entry_type, m.value) for m in detect(example.text)}
        hits, extra, missed = expected & found, found - expected, expected - found
        for bucket, items in ((result.tp, hits), (result.fp, extra), (result.fn, missed)):
            for kind, _ in items:
                bucket[kind] += 1
                bucket["all"] += 1
        if extra or missed:
            result.errors.append({"source": example.source, "text": example.text,
                                  "false_positives": sorted(extra), "missed": sorted(missed)})
    return result
