import pytest

from mirix_py.agents.offline.rules.claims import extract_claims


def _facts(text):
    return [(c.entity, c.attribute, c.value, c.negated) for c in extract_claims(text, "user")]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("My sister Lily, who is a chemist, lives in Oslo.",
         [("Lily", "relation", "sister", False), ("Lily", "occupation", "chemist", False),
          ("Lily", "location", "Oslo", False)]),
        ("Lily, a chemist, lives in Oslo.", [("Lily", "occupation", "chemist", False), ("Lily", "location", "Oslo", False)]),
    ],
)
def test_a_relative_clause_or_an_apposition_after_a_name(text, expected):
    assert _facts(text) == expected


def test_no_apposition_without_the_comma_after_a_name():
    assert _facts("As a writer, my laptop is my lifeline.") == []


def test_a_job_at_a_named_place_is_also_the_employer():
    assert _facts("Ben is a teacher at Lincoln High.") == [("Ben", "occupation", "teacher", False),
                                                           ("Ben", "employer", "Lincoln High", False)]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Paul is no longer my boss.", [("Paul", "relation", "boss", True)]),
        ("Paul isn't my boss anymore.", [("Paul", "relation", "boss", True)]),
        ("Tom stopped working at Google.", [("Tom", "employer", "Google", True)]),
        ("I quit my job at Acme for personal reasons.", [("user", "employer", "Acme", True)]),
        ("I used to live in Rome but now I live in Milan.",
         [("user", "location", "Rome", True), ("user", "location", "Milan", False)]),
        ("Tom has become a teacher.", [("Tom", "occupation", "teacher", False)]),
        ("Nowadays Tom lives in Oslo.", [("Tom", "location", "Oslo", False)]),
        ("These days I drink tea instead of coffee.", [("user", "prefers", "tea", False)]),
        ("I became a doctor last year.", [("user", "occupation", "doctor", False)]),
        ("I started a new job at Klarna.", [("user", "employer", "Klarna", False)]),
    ],
)
def test_changes_in_their_families(text, expected):
    assert _facts(text) == expected


def test_a_replacement_names_what_it_replaces():
    (claim,) = extract_claims("These days I drink tea instead of coffee.", "user")
    assert claim.replaces == "coffee"


def test_a_break_up_ends_only_a_couple_relation():
    claims = extract_claims("Jake and I split up.", "user")
    assert claims and all(c.entity == "Jake" and c.attribute == "relation" and c.negated for c in claims)
    assert "friend" not in {c.value for c in claims}


@pytest.mark.parametrize(
    "text",
    ["I moved to a new apartment.", "I might become a doctor.", "Work became a nightmare.", "I joined a gym.",
     "If I moved to Denver, I'd be happy.", "I'm thinking about giving up coffee.", "I flew to Denver last week."],
)
def test_near_misses_say_nothing(text):
    assert _facts(text) == []


def test_a_relation_in_apposition_after_a_name():
    assert _facts("Jonas, my flatmate, works at IKEA.") == [("Jonas", "relation", "flatmate", False),
                                                           ("Jonas", "employer", "IKEA", False)]


def test_a_pronoun_ends_the_relation_of_the_one_person_the_message_names():
    assert _facts("Marco moved out, so he's not my roommate any longer.") == [("Marco", "relation", "roommate", True)]
    assert _facts("Karen retired, so she's not my boss anymore.") == [("Karen", "relation", "boss", True)]


def test_a_pronoun_is_not_resolved_when_two_people_open_clauses():
    assert _facts("Marco moved out. Karen retired. He's not my roommate any longer.") == []


def test_a_single_unknown_name_is_trusted_before_has_moved():
    assert _facts("Kate has moved back to Cork.") == [("Kate", "location", "Cork", False)]


def test_a_job_ended_through_its_activity_ends_whatever_job_was_held():
    assert _facts("Dan isn't cooking professionally anymore.") == [("Dan", "occupation", "", True)]
    assert _facts("I'm not teaching for a living any more.") == [("user", "occupation", "", True)]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("I'm more of a coffee person these days.", [("user", "prefers", "coffee", False)]),
        ("I'm a huge Arsenal fan.", [("user", "likes", "Arsenal", False)]),
        ("We relocated to Edinburgh in the spring.", [("user", "location", "Edinburgh", False)]),
        ("Arrival has replaced Alien as my favourite film.", [("user", "favorite film", "Arrival", False)]),
        ("I've gone off horror movies.", [("user", "likes", "horror movies", True)]),
    ],
)
def test_the_third_rounds_families_about_the_speaker(text, expected):
    assert _facts(text) == expected
