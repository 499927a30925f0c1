"""An input said again is a repeat of every memory of its day, however many the day holds: the offline
flow finds it among all of them (`OfflineFlow.recent`, `managers.repeat_keys`), not only the newest."""

from __future__ import annotations

import random

import pytest

from mirix_py.agents.offline import managers
from mirix_py.records import EpisodicMemory, ProceduralMemory, ResourceMemory, type_fields

WHEN = "2024-05-08T13:00:00+00:00"
PAST_THE_OLD_CAP = 2100  # the flow used to compare an input with the day's newest 2,000 memories only
THINGS = ["bike", "roof", "fence", "sink"]


def _turn(i: int) -> str:
    return f"Entry {i}: I repaired the old {THINGS[i % 4]} in the garden shed with my neighbour today."


@pytest.fixture
def busy_day(tmp_path, backend):
    """An engine whose user said `PAST_THE_OLD_CAP` turns on one day (full text only: no vectors needed)."""
    from mirix_py.engine import Mirix

    engine = Mirix(tmp_path / "data", embedder=None, database_url=backend)
    turns = [{"role": "user", "name": "Ada", "content": _turn(i)} for i in range(PAST_THE_OLD_CAP)]
    for start in range(0, len(turns), 500):
        engine.add(turns[start:start + 500], user_id="u", occurred_at=WHEN)
    yield engine
    engine.close()


def _episodes(engine) -> int:
    return engine.stats(user_id="u")["memories"]["episodic"]


def _holding(engine, words: str) -> list:
    return [m for m in engine.list(user_id="u", limit=10_000) if words in m.search_text()]


def _told(engine, text: str):
    """`text` said by Ada on the busy day: (the add's result, its changes as (operation, type))."""
    added = engine.add([{"role": "user", "name": "Ada", "content": text}], user_id="u", occurred_at=WHEN)
    return added, [(c.operation.value, c.memory_type.value) for c in added.changes]


def test_a_turn_said_again_is_no_new_memory_when_the_day_holds_thousands(busy_day):
    """Turn 0 is the day's oldest: past the 2,000 newest, where a repeat used to go unseen and was stored
    twice."""
    assert _episodes(busy_day) == PAST_THE_OLD_CAP
    again, changes = _told(busy_day, _turn(0))
    assert changes == [("update", "episodic")] and _episodes(busy_day) == PAST_THE_OLD_CAP
    (first,) = _holding(busy_day, "Entry 0:")
    assert again.input_ids[0] in first.source_ids


def test_near_duplicates_of_turns_past_the_newest_2000_are_found(busy_day):
    """Case, punctuation, a spelling or a misread letter: each is the turn said before, however old in
    its day; another word in a word's place (not a misread) is another statement, kept as its own."""
    for number, told_again in [
        (1, "entry 1: i repaired the old roof in the garden shed with my neighbour today"),
        (2, "Entry 2: I repaired the old fence in the garden shed with my neighbor today!!"),
        (3, "Entry 3: I repalred the old sink in the garden shed with my neighbour today."),
        (4, "ENTRY 4 — I repaired the old bike, in the garden shed, with my neighbour today"),
    ]:
        again, changes = _told(busy_day, told_again)
        assert changes == [("update", "episodic")], told_again
        (first,) = _holding(busy_day, f"Entry {number}:")
        assert again.input_ids[0] in first.source_ids
    assert _episodes(busy_day) == PAST_THE_OLD_CAP
    _, changes = _told(busy_day, "Entry 0: I repaired the old bike in the garden shed with my brother today.")
    assert changes == [("insert", "episodic")] and _episodes(busy_day) == PAST_THE_OLD_CAP + 1


# ---------------------------------------------------------------- the keys never lose a repeat

_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def _misread(word: str, rng: random.Random) -> str:
    """One letter of a long word changed: a like-spelled word (`same_content`'s misread)."""
    at = rng.randrange(len(word))
    return word[:at] + rng.choice(_LETTERS.replace(word[at], "")) + word[at + 1:]


def _retold(text: str, rng: random.Random) -> str:
    """`text` told again as a reader or typist might: case, punctuation and spacing changed, and up to
    a tenth of its words misread."""
    words = text.split()
    for at in rng.sample(range(len(words)), rng.randint(0, len(words) // 10)):
        if words[at].isalpha() and len(words[at]) >= 6:
            words[at] = _misread(words[at], rng)
    words = [w.upper() if rng.random() < 0.2 else w for w in words]
    return rng.choice(["", "  "]) + rng.choice([" ", ", ", " - "]).join(words) + rng.choice(["", "!", "?!", " ..."])


def _sentences(rng: random.Random, count: int) -> list[str]:
    vocabulary = ["meeting", "tomorrow", "garden", "neighbour", "repaired", "kitchen", "window", "station",
                  "holiday", "brother", "picture", "concert", "weather", "morning", "evening", "letters", "I", "the",
                  "a", "with", "and", "at", "7:30", "2024", "Lisbon", "Ada", "report", "quarterly", "travelled"]
    return [" ".join(rng.choice(vocabulary) for _ in range(rng.randint(1, 60))) for _ in range(count)]


def test_every_text_same_content_takes_for_the_same_shares_a_key_with_it():
    """The flow loads only stored memories that share a key with a new one: a retold text sharing none
    with its first telling would be stored twice."""
    rng = random.Random(5)
    pairs = [(text, _retold(text, rng)) for text in _sentences(rng, 3000)]
    pairs += [("", "  "), ("…", " … "), ("🙂", "🙂")]
    repeats = [(a, b) for a, b in pairs if managers.same_content(a, b)]
    assert len(repeats) > 2000  # the generator makes near-duplicates, and long ones with words misread
    assert sum(managers._word_list(a) != managers._word_list(b) for a, b in repeats) > 1000  # words misread
    for a, b in repeats:
        assert managers.content_keys(a) & managers.content_keys(b), (a, b)


def test_of_a_busy_days_turns_only_the_one_said_again_shares_a_key_with_it():
    """The keys narrow: the flow loads the few memories they leave, not the day's thousands."""
    keys = [managers.content_keys(_turn(i)) for i in range(PAST_THE_OLD_CAP)]
    wanted = managers.content_keys(_turn(7).upper())
    assert [i for i, held in enumerate(keys) if held & wanted] == [7]


@pytest.mark.parametrize("memory, stored", [
    (EpisodicMemory(user_id="u", summary="We adopted a cat called Miso yesterday afternoon at the shelter.",
                    actor="Ada"),
     EpisodicMemory(user_id="u", summary="we adopted a cat called Miso yesterday afternoon at the shelfer",
                    actor="Ada", details="")),
    (ProceduralMemory(user_id="u", summary="Deploy the site", steps=["run the tests", "push the main branch"]),
     ProceduralMemory(user_id="u", summary="deploy the site", steps=["Run the tests.", "Push the main branch!"])),
    (ResourceMemory(user_id="u", title="notes.md", content="Buy milk, bread and eggs before the shop closes at six."),
     ResourceMemory(user_id="u", title="notes.md", content="buy milk bread and eggs before the shop closes at six")),
])
def test_a_memory_shares_a_key_with_what_it_repeats_stored_or_not(memory, stored):
    """The flow tests stored rows by their fields alone (`stored_repeat_keys`): the same keys."""
    assert managers._repeat_of(memory, [stored]) is stored
    held = managers.stored_repeat_keys("u", stored.memory_type, type_fields(stored))
    assert held == managers.repeat_keys(stored) and held & managers.repeat_keys(memory)


def test_screen_visits_and_window_resources_are_never_looked_up_as_repeats():
    """They have their own rules: no key, so the flow reads nothing for them."""
    visit = EpisodicMemory(user_id="u", event_type="screen_activity", summary="Viewed Terminal: ls")
    window = ResourceMemory(user_id="u", title="Screenshot of Terminal", content="ls")
    assert managers.repeat_keys(visit) == managers.repeat_keys(window) == frozenset()
