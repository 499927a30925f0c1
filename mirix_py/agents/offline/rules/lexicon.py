"""The rules' word lists, kept as data: `words.yaml` by hand, `job_words.txt` from WordNet 3.0
(written by scripts/build_job_words.py)."""

from __future__ import annotations

from pathlib import Path

import yaml

_HERE = Path(__file__).parent
_LISTS: dict[str, str | dict[str, str]] = yaml.safe_load((_HERE / "words.yaml").read_text(encoding="utf-8"))
_JOBS = (_HERE / "job_words.txt").read_text(encoding="utf-8")
WORDNET_JOB_WORDS = frozenset(word for line in _JOBS.splitlines() if not line.startswith("#") for word in line.split())


def words(name: str) -> frozenset[str]:
    """The words of list `name` in `words.yaml`."""
    text = _LISTS[name]
    assert isinstance(text, str), name
    return frozenset(text.split())


def word_groups(name: str) -> dict[str, frozenset[str]]:
    """The lists of words of group `name` in `words.yaml`, by key."""
    groups = _LISTS[name]
    assert isinstance(groups, dict), name
    return {key: frozenset(text.split()) for key, text in groups.items()}
