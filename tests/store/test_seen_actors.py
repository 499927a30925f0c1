"""The actors of a user's earlier results, kept to guess whom the next question names."""

from __future__ import annotations

from mirix_py.store.seen_actors import SeenActors


def test_actors_occurring_in_the_text_are_given_per_user():
    seen = SeenActors()
    seen.add("u1", ["Jon", " Gina ", None, "", "Jon"])
    seen.add("u2", ["Maria"])
    assert sorted(seen.in_text("u1", "What did GINA tell jon?")) == ["Gina", "Jon"]
    assert seen.in_text("u1", "What did Maria say?") == []  # another user's actor
    assert seen.in_text("u3", "Jon?") == []
    assert seen.in_text("u1", "Jonathan's book") == ["Jon"]  # a cut only: whole words are checked after


def test_the_least_recently_seen_are_dropped_first():
    seen = SeenActors(users=2, per_user=2)
    seen.add("u1", ["Ann", "Bo"])
    seen.add("u1", ["Cy", "Ann"])  # Bo is the least recent now
    assert sorted(seen.in_text("u1", "Ann Bo Cy")) == ["Ann", "Cy"]
    seen.add("u2", ["Dee"])
    seen.add("u3", ["Eve"])  # u1 searched least recently
    assert seen.in_text("u1", "Ann Cy") == []
    assert seen.in_text("u2", "Dee") == ["Dee"] and seen.in_text("u3", "Eve") == ["Eve"]
