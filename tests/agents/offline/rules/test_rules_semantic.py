import pytest

from mirix_py.agents.offline.rules.semantic import FactDraft, extract_facts


def pairs(text, speaker=None):
    return [(f.name, f.summary) for f in extract_facts(text, speaker)]


# ---------------------------------------------------------------- relations


def test_is_my_relation_without_speaker():
    assert pairs("Bob is my brother.") == [("Bob", "Bob is the speaker's brother")]


def test_is_my_relation_with_speaker_and_adjective():
    assert pairs("Bob is my older brother.", "Mel") == [("Bob", "Bob is Mel's older brother")]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("I visited my sister Anna last week.", ("Anna", "Anna is Mel's sister")),
        ("my best friend, Tom, called me", ("Tom", "Tom is Mel's best friend")),
        ("We celebrated my daughter Sara's birthday.", ("Sara", "Sara is Mel's daughter")),
        ("My dog Max loves the beach.", ("Max", "Max is Mel's dog")),
        ("My colleague Rob invited me to yoga.", ("Rob", "Rob is Mel's colleague")),
    ],
)
def test_my_relation_name(text, expected):
    assert pairs(text, "Mel") == [expected]


def test_relation_to_speaker_themself_is_ignored():
    assert pairs("Mel is my best friend.", "Mel") == []


# ---------------------------------------------------------------- verbs


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Jon works at Google.", [("Jon", "Jon works at Google")]),
        ("Sarah works as a nurse at the hospital.", [("Sarah", "Sarah works as a nurse at the hospital")]),
        ("My aunt said Linda lives in Ohio now.", [("Linda", "Linda lives in Ohio")]),
        ("Acme Corp was founded in 1999.", [("Acme Corp", "Acme Corp was founded in 1999")]),
        ("Oliver was born in May 2020.", [("Oliver", "Oliver was born in May 2020")]),
        (
            "Jon works at Google and Bob works at Meta.",
            [("Jon", "Jon works at Google"), ("Bob", "Bob works at Meta")],
        ),
    ],
)
def test_verb_facts(text, expected):
    assert pairs(text) == expected


def test_relation_and_verb_fact_for_same_person():
    assert pairs("My friend Jon works at Google.", "Gina") == [
        ("Jon", "Jon is Gina's friend"),
        ("Jon", "Jon works at Google"),
    ]


# ---------------------------------------------------------------- copula


def test_copula_mid_sentence_name():
    assert pairs("I met Sarah yesterday. Sarah is a nurse at the hospital.") == [
        ("Sarah", "Sarah is a nurse at the hospital")
    ]


def test_copula_multiword_entity_after_the():
    assert pairs("The Eiffel Tower is a landmark in Paris.") == [("Eiffel Tower", "Eiffel Tower is a landmark in Paris")]


def test_copula_second_clause_found():
    assert pairs("Caroline is a counselor and Mel is an artist.") == [("Mel", "Mel is an artist")]


@pytest.mark.parametrize(
    "text",
    [
        "Painting is a great way to relax.",
        "Pottery is a huge part of my life, not just a hobby.",
        "Volunteering is a great way to meet people.",
        "Yoga is a great way to relax and concentrate.",
        "Barcelona is a must-visit city!",  # sentence-initial single word: not trusted
        "Family is the most important thing for me.",
        "Finding my Zen is a mix of things.",
        "It was a great day.",
        "This is a big move towards my goal.",
        "Yesterday was a good day.",
        "Monday is a holiday.",
        "Hey Mel! Good to see you! I'm swamped with the kids & work.",
        "I went to a LGBTQ support group yesterday and it was so powerful.",
        "Thanks, Caroline! It's a great idea.",
        "Wow, Mel, that is a great pic!",
        "I went with my kids to the park.",
        "My mom is a teacher.",
        "Dance is my passion.",
    ],
)
def test_no_facts_from_ordinary_chat(text):
    assert extract_facts(text, "Mel") == []


def test_name_seen_mid_sentence_is_trusted_at_sentence_start():
    text = "We saw Barcelona last year. Barcelona is a beautiful city."
    assert pairs(text) == [("Barcelona", "Barcelona is a beautiful city")]


def test_excluded_words_are_not_entities():
    assert pairs("Thanks Mel, we met on Monday. Everyone is a winner.") == []


def test_dedupes_by_name_and_summary():
    text = "Bob is my brother. Bob is my brother!"
    assert extract_facts(text) == [FactDraft("Bob", "Bob is the speaker's brother")]


def test_summary_is_short():
    text = "Then Zed is a " + "very " * 60 + "tall person."
    [fact] = extract_facts(text)
    assert len(fact.summary) <= 160


def test_empty():
    assert extract_facts("") == []
