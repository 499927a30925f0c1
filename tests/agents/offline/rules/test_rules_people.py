from mirix_py.agents.offline.rules.claims import extract_claims
from mirix_py.agents.offline.rules.people import known_people, name_the_subject


def test_a_relation_word_names_the_one_person_stated_with_it():
    people = known_people([("Mia", "sister"), ("Ali", "older brother"), ("Jake", "friend"), ("Sam", "best friend")])
    assert people == {"sister": "Mia", "brother": "Ali"}  # two friends: "my friend" names nobody


def test_the_subject_is_named_only_when_no_name_follows_the_relation():
    people = {"sister": "Mia"}
    assert name_the_subject("My sister retrained as a midwife", people) == "Mia retrained as a midwife"
    assert name_the_subject("My sister Lucy is a nurse", people) == "My sister Lucy is a nurse"
    assert name_the_subject("My sister's flat is in Leeds", people) == "My sister's flat is in Leeds"
    assert name_the_subject("My brother is a pilot", people) == "My brother is a pilot"


def _facts(text, people=()):
    return [(c.entity, c.attribute, c.value, c.negated) for c in extract_claims(text, "user", people=people)]


def test_claims_about_my_sister_go_to_the_sister_named_before():
    assert ("Mia", "occupation", "midwife", False) in _facts("My sister retrained as a midwife last year.",
                                                             people=[("Mia", "sister")])
    assert ("Ali", "location", "Manchester", False) in _facts("My brother is in Manchester now; he bought a house there.",
                                                              people=[("Ali", "brother")])


def test_the_same_text_names_the_sister_too():
    facts = _facts("My sister Mia is a paramedic. My sister retrained as a midwife.")
    assert ("Mia", "occupation", "midwife", False) in facts


def test_without_a_known_person_a_relation_subject_says_nothing():
    assert _facts("My sister retrained as a midwife last year.") == []
    assert _facts("My husband got a job at KPMG.") == []


def test_a_parent_called_by_the_kin_word_as_a_name_is_the_person_held():
    people = known_people([("Linda", "mum"), ("Frank", "father")])
    assert name_the_subject("Mum has moved to Málaga", people) == "Linda has moved to Málaga"
    assert name_the_subject("Dad retired", people) == "Frank retired"
    assert name_the_subject("Mum's flat is small", people) == "Mum's flat is small"  # the flat's
    assert name_the_subject("Grandma retired", people) == "Grandma retired"  # nobody held so
