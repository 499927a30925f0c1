"""Answer metrics for LoCoMo-style QA: pure functions of strings, no model, no engine.

- `locomo_f1` follows the rules of LoCoMo's own evaluation (snap-research/locomo,
  task_eval/evaluation.py), written out here: answers are normalised (commas dropped, lowercased,
  punctuation removed, the words a/an/the/and removed, whitespace collapsed), tokens are Porter
  stemmed (NLTK), and token F1 is computed from the multiset overlap. Per category:
  1 multi-hop: gold and prediction are split on commas; for each gold part take the best F1 over
  the prediction parts, and average over gold parts. 2 temporal, 4 single-hop: plain token F1.
  3 open-domain: only the gold's first `;` alternative counts, then plain token F1.
  5 adversarial: 1 when the prediction says "no information available" or "not mentioned", else 0.
- `answer_token_recall`: the share of the gold answer's distinct content stems found in a context.
  It needs no model, so it scores retrieval on what an answer would need, beside evidence recall.
- `bleu1`: BLEU with unigram weights (NLTK `sentence_bleu`, smoothing method 1) on the normalised tokens.
"""

from __future__ import annotations

import math
import re
import string
from collections import Counter
from functools import lru_cache
from typing import Iterable

from mirix_py.text.words import STOPWORDS

ADVERSARIAL_MARKERS: tuple[str, ...] = ("no information available", "not mentioned")
_ARTICLES = re.compile(r"\b(a|an|the|and)\b")
_PUNCTUATION = str.maketrans("", "", string.punctuation)
# "[epi_<32 hex>]" or "[epi_…, sem_…]": the ids the chat agent cites (see mirix_py.agents.chat.MEMORY_ID)
_CITATION = re.compile(r"\s*\[\s*(?:core|epi|sem|proc|res|kv)_[0-9a-f]{4,32}…?(?:\s*,\s*(?:core|epi|sem|proc|res|kv)_[0-9a-f]{4,32}…?)*\s*\]")


@lru_cache(maxsize=1)
def _porter():
    try:
        from nltk.stem import PorterStemmer
    except ImportError as exc:  # pragma: no cover - the eval extra is part of `all`
        raise ImportError("LoCoMo F1 needs NLTK's Porter stemmer: pip install 'mirix-py[eval]'") from exc
    return PorterStemmer()


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    return _porter().stem(word)


def normalize_answer(text: str) -> str:
    """LoCoMo's normalisation: drop commas, lowercase, strip punctuation, drop a/an/the/and, squeeze spaces."""
    text = str(text).replace(",", "").lower().translate(_PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def answer_tokens(text: str) -> list[str]:
    """Normalised, Porter-stemmed tokens (with repeats), as LoCoMo's F1 counts them."""
    return [stem(w) for w in normalize_answer(text).split()]


def token_f1(prediction: str, gold: str) -> float:
    """Token F1 of two answers; 0 when nothing is shared (also when either is empty)."""
    pred, ref = answer_tokens(prediction), answer_tokens(gold)
    same = sum((Counter(pred) & Counter(ref)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(pred), same / len(ref)
    return 2 * precision * recall / (precision + recall)


def multi_answer_f1(prediction: str, gold: str) -> float:
    """Comma-separated sub-answers: mean over gold parts of the best F1 against any prediction part."""
    predictions = [p.strip() for p in str(prediction).split(",")]
    golds = [g.strip() for g in str(gold).split(",")]
    return sum(max(token_f1(p, g) for p in predictions) for g in golds) / len(golds)


def says_not_available(prediction: str) -> bool:
    low = str(prediction).lower()
    return any(marker in low for marker in ADVERSARIAL_MARKERS)


def scoring_gold(gold: str, category: int) -> str:
    """The gold answer as LoCoMo scores it: category 3 keeps only its first `;` alternative."""
    gold = str(gold)
    return gold.split(";")[0].strip() if category == 3 else gold


def locomo_f1(prediction: str, gold: str, category: int) -> float:
    """LoCoMo's per-category answer score (see the module docstring)."""
    if category == 5:
        return 1.0 if says_not_available(prediction) else 0.0
    if category == 1:
        return multi_answer_f1(prediction, gold)
    if category in (2, 3, 4):
        return token_f1(prediction, scoring_gold(gold, category))
    raise ValueError(f"unknown LoCoMo category {category!r}: use 1-5")


def content_stems(text: str) -> list[str]:
    """Distinct stems of the normalised words that are not stopwords, in order."""
    words = [w for w in normalize_answer(text).split() if w not in STOPWORDS]
    return list(dict.fromkeys(stem(w) for w in words))


def answer_token_recall(gold: str, context: str | Iterable[str]) -> float:
    """Share of the gold answer's distinct content stems present in the context; NaN without any."""
    needed = content_stems(gold)
    if not needed:
        return math.nan
    text = context if isinstance(context, str) else "\n".join(context)
    present = {stem(w) for w in normalize_answer(text).split()}
    return sum(1 for s in needed if s in present) / len(needed)


def bleu1(prediction: str, gold: str) -> float:
    """Sentence BLEU-1 on normalised tokens (NLTK, smoothing method 1); 0 for an empty prediction."""
    from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

    pred, ref = normalize_answer(prediction).split(), normalize_answer(gold).split()
    if not pred or not ref:
        return 0.0
    return float(sentence_bleu([ref], pred, weights=(1, 0, 0, 0), smoothing_function=SmoothingFunction().method1))


def strip_citations(answer: str) -> str:
    """An engine answer without its memory citations ("... [epi_3f2a]"), which are not part of the answer."""
    return " ".join(_CITATION.sub("", str(answer)).split())


def percentile(values: Iterable[float], q: float) -> float:
    """Nearest-rank percentile (q in 0-100); NaN for no values."""
    data = sorted(v for v in values if not math.isnan(v))
    if not data:
        return math.nan
    rank = max(1, math.ceil(q / 100 * len(data)))
    return data[rank - 1]


def mean(values: Iterable[float]) -> float:
    """Mean ignoring NaN; NaN when nothing is left."""
    data = [v for v in values if not math.isnan(v)]
    return sum(data) / len(data) if data else math.nan
