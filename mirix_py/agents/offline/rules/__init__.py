"""Deterministic rules for offline mode: pure text-in, drafts-out functions, no I/O and no store.

Each module covers one memory type (plus topics/time for search) and is tuned for precision, since
the rules run on every chat message.
"""

from mirix_py.agents.offline.rules.core import extract_self_statements
from mirix_py.agents.offline.rules.procedural import ProcedureDraft, extract_procedure
from mirix_py.agents.offline.rules.resource import ResourceDraft, classify_resource
from mirix_py.agents.offline.rules.semantic import FactDraft, extract_facts
from mirix_py.agents.offline.rules.topics import STOPWORDS, extract_keywords, parse_time_range

__all__ = [
    "FactDraft",
    "ProcedureDraft",
    "ResourceDraft",
    "STOPWORDS",
    "classify_resource",
    "extract_facts",
    "extract_keywords",
    "extract_procedure",
    "extract_self_statements",
    "parse_time_range",
]
