"""A vault entry answers a question about its own subject only. Its caption is the text around the
value ("phone number mentioned: '…Dana Natarajan … reach me at [secret]…'"), so a question that says
whose or which value it wants ("What is Mei Chen's phone number?", "the production database
password") matches the entry by its kind's words alone when the entry is someone else's. Such an
entry follows the memories that match the question otherwise: a reader is not handed another
person's number, or the staging password for production, as the answer. A question that names only
the kind ("what is my PIN?") keeps every entry of that kind where it ranked. Pure functions."""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from mirix_py.records import KnowledgeVaultMemory
from mirix_py.store.restatements import weighed_down
from mirix_py.text.words import STOPWORDS, is_term, query_terms, text_terms

OTHER_SUBJECT_WEIGHT = 0.25  # as a restatement's: rank 1 of a hybrid search falls below rank 30
CAPTION_LABEL = " mentioned: "  # secrets.detection writes "<kind> mentioned: '<text around the value>'"


def _words(terms: Iterable[str]) -> set[str]:
    """The content words of these terms (lowercased, as `query_terms` and `text_terms` give them), a
    plural's "s" taken off, so "numbers" meets "number". A Chinese or Thai run is its letter or cluster
    pairs on both sides, as full text searches it."""
    return {w.removesuffix("s") if len(w) > 3 else w for w in terms if is_term(w) and w not in STOPWORDS}


def about_another(query: str, memory: KnowledgeVaultMemory) -> bool:
    """True when the query says what it wants beyond the entry's kind, and none of it is in the
    text around the value."""
    label, found, about = memory.caption.partition(CAPTION_LABEL)
    if not found:  # a caption written otherwise (a model's): all of it is about the value
        label, about = "", memory.caption
    kind = _words(text_terms(label)) | _words(text_terms(memory.entry_type.replace("_", " ")))
    asked = _words(query_terms(query)) - kind
    return bool(asked) and not asked & (_words(text_terms(about)) | _words(text_terms(memory.source)))


def weigh_down_other_subjects(ranked: Sequence[tuple[str, float]], records: dict[str, Any],
                              query: str) -> list[tuple[str, float]]:
    """`ranked` (id, score), best first, with each vault entry about another subject weighed down
    (`restatements.weighed_down`, by OTHER_SUBJECT_WEIGHT)."""
    def other(memory_id: str) -> int:
        memory = records.get(memory_id)
        return int(isinstance(memory, KnowledgeVaultMemory) and about_another(query, memory))

    return weighed_down(ranked, other, OTHER_SUBJECT_WEIGHT)
