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
    assert _facts("Karen retired, so she's not my boss anymore.") == [
        ("Karen", "occupation", "", True), ("Karen", "employer", "", True),  # retiring ends whatever job she held
        ("Karen", "relation", "boss", True)]


def test_a_pronoun_is_not_resolved_when_two_people_open_clauses():
    facts = _facts("Marco left. Karen retired. He's not my roommate any longer.")
    assert [f for f in facts if f[1] == "relation"] == []  # Karen's job ends; nobody's relation


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


# ---------------------------------------------------------------- the fourth round: generalisation


@pytest.mark.parametrize(
    "text, expected",
    [
        ("These days I earn my living as a plumber.", [("user", "occupation", "plumber", False)]),
        ("Priya is now settled in Singapore.", [("Priya", "location", "Singapore", False)]),
        ("We both work remotely for GitLab these days.", [("user", "employer", "GitLab", False)]),
        ("My wife and I packed up and moved up to Glasgow in June.", [("user", "location", "Glasgow", False)]),
        ("After ten years in Chicago, I've made Austin my home.", [("user", "location", "Austin", False)]),
        ("Lucy has turned vegan.", [("Lucy", "occupation", "vegan", False)]),
        ("I grew up in Detroit.", [("user", "origin", "Detroit", False)]),
        ("I've been a firefighter for twelve years.", [("user", "occupation", "firefighter", False)]),
        ("I drive a Honda Civic.", [("user", "prefers", "Honda Civic", False)]),
        ("Zoe finished her degree and is working as a paralegal now.",
         [("Zoe", "occupation", "student", True), ("Zoe", "occupation", "paralegal", False)]),
        ("I transferred to the University of York this term.", [("user", "employer", "the University of York", False)]),
        ("I moved to Imperial College this year.", [("user", "employer", "Imperial College", False)]),
        ("I left law last year and I'm a full-time potter now.", [("user", "occupation", "full-time potter", False)]),
    ],
)
def test_a_change_read_by_its_shape_and_the_kind_of_its_value(text, expected):
    assert _facts(text) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("I haven't been a journalist since 2019.", [("user", "occupation", "journalist", True)]),
        ("My last day at Amazon was Friday.", [("user", "employer", "Amazon", True)]),
        ("Friday was my last day at Ikea.", [("user", "employer", "Ikea", True)]),
        ("I'm not vegan anymore.", [("user", "occupation", "vegan", True)]),
        ("Rock climbing doesn't do it for me anymore.", [("user", "likes", "rock climbing", True)]),
        ("Painting bores Sofia these days.", [("Sofia", "likes", "painting", True)]),
        ("Kiwi won't touch sunflower seeds anymore.", [("Kiwi", "likes", "sunflower seeds", True)]),
        ("I'm over jazz these days.", [("user", "likes", "jazz", True)]),
        ("Anna quit Google and went freelance.", [("Anna", "employer", "Google", True)]),
    ],
)
def test_an_end_said_without_no_longer(text, expected):
    assert _facts(text) == expected


def test_an_end_and_the_next_employer_in_one_breath():
    assert _facts("Jake handed in his notice at Deloitte and joined KPMG.") == [("Jake", "employer", "KPMG", False)]
    (claim,) = extract_claims("Jake handed in his notice at Deloitte and joined KPMG.", "user")
    assert claim.replaces == "Deloitte"


def test_one_thing_given_up_for_another():
    (matcha,) = extract_claims("I've cut out coffee completely and drink matcha.", "user")
    assert (matcha.attribute, matcha.value, matcha.replaces) == ("prefers", "matcha", "coffee")
    (tesla,) = extract_claims("I sold the Civic and bought a Tesla.", "user")
    assert (tesla.attribute, tesla.replaces) == ("prefers", "Civic") and "Tesla" in tesla.value
    (tennis,) = extract_claims("Ben has taken up tennis instead of golf.", "user")
    assert (tennis.entity, tennis.attribute, tennis.value, tennis.replaces) == ("Ben", "likes", "tennis", "golf")


@pytest.mark.parametrize(
    "text, expected",
    [
        ("These days I'd say Fontaines D.C. are my favourite band.", [("user", "favorite band", "Fontaines D.C.", False)]),
        ("Ramen tops sushi as my favourite food these days.", [("user", "favorite food", "Ramen", False)]),
        ("Honestly, Arrival is my favourite film now.", [("user", "favorite film", "Arrival", False)]),
        ("Tom says rugby is his favourite sport now.", [("Tom", "favorite sport", "rugby", False)]),
    ],
)
def test_a_favourite_said_with_any_verb_or_after_the_value(text, expected):
    assert _facts(text) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Ines, an old friend of mine, is a pharmacist in Porto.",
         [("Ines", "relation", "old friend", False), ("Ines", "occupation", "pharmacist", False)]),
        ("Ben's son Ollie hates golf.", [("Ollie", "relation", "son", False), ("Ollie", "dislikes", "golf", False)]),
        ("Chris and I are engaged now, so he's my fiancé.", [("Chris", "relation", "fiancé", False)]),
        ("Dana is my ex-wife now.", [("Dana", "relation", "ex-wife", False)]),
        ("Bruno can't stand the park since he got bitten there.", [("Bruno", "dislikes", "the park", False)]),
        ("Mark got rid of his Ford Focus; he rides an e-bike to work now.",
         [("Mark", "prefers", "Ford Focus", True), ("Mark", "prefers", "an e-bike to work", False)]),
        ("Lena was poached by Bosch last month.", [("Lena", "employer", "Bosch", False)]),
    ],
)
def test_subjects_resolved_and_trusted(text, expected):
    assert _facts(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "My sister asked whether I still work at Amazon.",  # an indirect question
        "Green is my sister's favourite colour.",  # someone else's favourite, not a relation
        "Kai says his sister's favourite game is Go.",  # reported speech about another person
        "Nothing beats Alien as my favourite film.",
        "I wish I worked at Google now.",
        "I ate at McDonald's since I was hungry.",
        "Tom is in Rome on holiday now.",
        "I rented a Tesla for the road trip.",
        "Mark test-drove a BMW yesterday.",
        "Jake had an interview at KPMG today.",
    ],
)
def test_near_misses_of_the_fourth_round_say_nothing(text):
    assert [f for f in _facts(text) if not f[3]] == []


@pytest.mark.parametrize(
    "text, expected",
    [
        ("I retired last year.", [("user", "occupation", "", True), ("user", "employer", "", True)]),
        ("Joe is retired now.", [("Joe", "occupation", "", True), ("Joe", "employer", "", True)]),
        ("I was laid off in March.", [("user", "occupation", "", True), ("user", "employer", "", True)]),
        ("I'm unemployed at the moment.", [("user", "occupation", "", True), ("user", "employer", "", True)]),
        ("I eat meat again these days.", [("user", "occupation", "vegan", True), ("user", "occupation", "vegetarian", True),
                                         ("user", "occupation", "pescatarian", True), ("user", "prefers", "meat", False)]),
    ],
)
def test_an_end_with_nothing_named_ends_whatever_was_held(text, expected):
    assert _facts(text) == expected


def test_a_past_end_told_as_background_ends_nothing():
    assert _facts("It's been tough going since I lost my job, but I'm sure my business will pay off.") == []


@pytest.mark.parametrize(
    "text, expected",
    [
        ("I moved back home to Galway.", [("user", "location", "Galway", False)]),
        ("We've been living in Galway since 2021.", [("user", "location", "Galway", False)]),
        ("I'm into poker now.", [("user", "likes", "poker", False)]),
        ("Ella is my ex now.", [("Ella", "relation", "ex", False)]),
        ("Ella and I got married in June.", [("Ella", "relation", "spouse", False)]),
        ("Arrival has become my favourite film.", [("user", "favorite film", "Arrival", False)]),
        ("My new favourite film is Arrival.", [("user", "favorite film", "Arrival", False)]),
        ("We adopted a cat called Mochi.", [("Mochi", "relation", "cat", False)]),
        ("I have a dog named Rex.", [("Rex", "relation", "dog", False)]),
        ("I'm vegetarian.", [("user", "occupation", "vegetarian", False)]),
        ("I study at Leeds University.", [("user", "employer", "Leeds University", False)]),
        ("I'm studying at York University now.", [("user", "employer", "York University", False)]),
        ("My son Leo goes to Oak Primary.", [("Leo", "relation", "son", False), ("Leo", "employer", "Oak Primary", False)]),
    ],
)
def test_more_shapes_of_a_fact_or_a_change(text, expected):
    assert _facts(text) == expected


@pytest.mark.parametrize(
    "text",
    ["My friend has a dog named Rex.", "Tom goes to Paris now.", "I'm vegan food obsessed.",
     "Chris and I are engaged now, so he's my fiancé."],
)
def test_no_second_reading(text):
    facts = _facts(text)
    assert len(facts) <= 1 and all(f[0] != "Rex" for f in facts) and all(f[1] != "employer" for f in facts)


@pytest.mark.parametrize(
    "text",
    [
        "I retired my old phone.", "I was so fired up after the match.", "My dad retired last year.",
        "I'm into the second round of the tournament now.", "I met a dog named Rex at the park.",
        "My neighbour has a cat called Mochi.", "I studied at York University for a term abroad.",
        "I moved the sofa back to the living room.",
        "We've been living in fear since the storm.", "My brother eats meat again.",
    ],
)
def test_near_misses_of_the_new_shapes_say_nothing(text):
    assert [f for f in _facts(text) if not f[3]] == [] and not any(f[0] == "user" and f[3] for f in _facts(text))


def test_what_was_bought_in_place_of_a_vehicle_sold_must_be_one():
    assert _facts("I sold my old bike and bought a helmet.") == [("user", "prefers", "old bike", True)]  # only the end
    assert _facts("I sold my old bike and bought an e-bike.") == [("user", "prefers", "an e-bike", False)]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Max has lost interest in tennis balls and only chews sticks now.", [("Max", "likes", "tennis balls", True)]),
        ("Mira went back to school and is a doctor now.", [("Mira", "occupation", "doctor", False)]),
        ("Mira and her husband moved to Bergen.", [("Mira", "location", "Bergen", False)]),
        ("Equinor let me go in the spring.", [("user", "employer", "Equinor", True)]),
        ("Statkraft hired me last month.", [("user", "employer", "Statkraft", False)]),
        ("Jon moved out last week, so we're not flatmates anymore.", [("Jon", "relation", "flatmate", True)]),
        ("I graduated in May and started as a junior developer at Spotify.",
         [("user", "occupation", "student", True), ("user", "employer", "Spotify", False),
          ("user", "occupation", "junior developer", False)]),
        ("Coffee gives me headaches now, so I stick to tea.", [("user", "prefers", "tea", False)]),
        ("Tea is my go-to drink now.", [("user", "prefers", "Tea", False)]),
    ],
)
def test_the_employer_as_subject_a_household_moving_a_student_no_more(text, expected):
    assert _facts(text) == expected


@pytest.mark.parametrize(
    "text",
    ["Mira's husband moved to Bergen for work.", "Statkraft offered me a job but I turned it down.",
     "I'm thinking of leaving Equinor.", "When I was a student I lived on noodles."],
)
def test_their_near_misses_say_nothing(text):
    assert [f for f in _facts(text) if f[0] in ("user", "Mira")] == []


def test_hired_as_is_a_job_and_an_employer():
    assert _facts("Apple hired me as a consultant.") == [("user", "occupation", "consultant", False),
                                                          ("user", "employer", "Apple", False)]


@pytest.mark.parametrize("text", ["I stick to the plan.", "I graduated from cooking class.", "That is my go-to excuse."])
def test_a_plan_a_class_or_an_excuse_is_no_taste_or_school(text):
    assert _facts(text) == []


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Kiwi is crazy about grapes these days.", [("Kiwi", "likes", "grapes", False)]),
        ("I've come to love running.", [("user", "likes", "running", False)]),
        ("Running has grown on me.", [("user", "likes", "running", False)]),
        ("I upgraded to a Polestar.", [("user", "prefers", "a Polestar", False)]),
        ("Rui works for himself these days.", [("Rui", "employer", "", True)]),
        ("I've been back in Paris since January.", [("user", "location", "Paris", False)]),
        ("Kim left the company, so we're no longer colleagues.", [("Kim", "relation", "colleague", True)]),
    ],
)
def test_tastes_come_to_work_for_oneself_and_a_return(text, expected):
    assert _facts(text) == expected


@pytest.mark.parametrize("text", ["I'm a Parisian now.", "I'm crazy about you.", "I'm passionate about improving education."])
def test_a_demonym_or_a_cause_is_no_fact(text):
    assert _facts(text) == []


def test_a_favourite_after_a_colon_keeps_the_dots_in_its_name():
    (claim,) = extract_claims("My favorite book: The Left Hand of Darkness by Ursula K. Le Guin.", "user")
    assert (claim.attribute, claim.value) == ("favorite book", "The Left Hand of Darkness by Ursula K. Le Guin")


def test_a_message_typed_in_lowercase_speaks_for_its_speaker():
    from mirix_py.agents.offline.rules.claims import typed_text

    assert typed_text("i'm a nurse, i think 🙂") == "I'm a nurse, I think  "
    assert typed_text("i.e. Wi-Fi, pi") == "i.e. Wi-Fi, pi"
    assert ("user", "location", "Leeds") in {(c.entity, c.attribute, c.value)
                                             for c in extract_claims("i live in Leeds now lol", "user")}


@pytest.mark.parametrize("text", [
    'He said, "I\'m a pilot," but nobody believed him.',
    "My CV template came with a placeholder profile: 'Jordan Reyes, marine ecologist, based in Perth, loves sailing.'",
    "The form says ‘I live in Paris’ but that is wrong.",
])
def test_words_someone_else_said_or_wrote_are_no_fact(text):
    assert _facts(text) == []


def test_a_quoted_title_is_still_read():
    assert ("user", "favorite film", "Amélie", False) in _facts('My favourite film is "Amélie".')
    assert _facts("My favourite song is 'Don't Stop Me Now'.")[0][2].startswith("Don't Stop Me")


def test_job_words_from_wordnet():
    assert ("Priya", "occupation", "barrister", False) in _facts("My friend Priya is a barrister.")
    assert ("Kwame", "occupation", "stevedore", False) in _facts("Kwame is a stevedore.")
    assert not any(f[1] == "occupation" for f in _facts("Tom is a big help."))


def test_a_home_named_by_its_place():
    assert ("Parisa", "location", "Shiraz", False) in _facts("My grandmother Parisa still lives in the house in Shiraz.")
    assert ("Tom", "location", "Leith", False) in _facts("Tom moved into a flat in Leith.")
    assert _facts("Tom lives in the house.") == []


def test_an_adverb_between_is_and_the_relation():
    assert _facts("The papers came through, so Lachlan is officially my ex.") == [("Lachlan", "relation", "ex", False)]


def test_a_lodger_is_a_relation_and_a_number_no_name():
    assert ("Mehmet", "relation", "lodger", False) in _facts("Our lodger Mehmet is a courier with DHL.")
    assert not any(f[0] == "Twenty" for f in _facts("Twenty years without a word! She's a vet in Tasmania now."))


@pytest.mark.parametrize("text", [
    "Three days in Granada, and Barcelona's reign as my favourite city is over.",  # an end, not a value
    "It's been my favourite book since I was nine.",  # the value is in a clause of its own
    "Ticket to Ride is gathering dust; Azul is the board game I love most now.",  # no fact about Azul itself
])
def test_no_favourite_read_from_an_end_or_a_clause(text):
    assert not any(f[1].startswith("favorite") and f[2] in ("over", "nine") or f[1] == "is" for f in _facts(text))
