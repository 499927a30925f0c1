"""Idioms of a job, a home, a taste and a favourite, rewritten to the forms the claim rules read."""

import pytest

from mirix_py.agents.offline.rules.claims import extract_claims
from mirix_py.agents.offline.rules.idioms import EXAMPLES, FAMILIES, guard_text, rewrite


def _facts(text: str, people: tuple[tuple[str, str], ...] = ()) -> list[tuple[str, str, str, bool]]:
    return [(c.entity, c.attribute, c.value, c.negated) for c in extract_claims(text, "user", people=people)]


@pytest.mark.parametrize(("family", "said", "rewritten"), EXAMPLES, ids=[f"{name}: {said}" for name, said, _ in EXAMPLES])
def test_each_example_of_a_family_rewrites_as_the_family_says(family, said, rewritten):
    guards, pattern, replace = FAMILIES[family]
    assert any(guard in guard_text(said) for guard in guards)
    assert pattern.sub(replace, said) == rewritten


def test_every_family_has_an_example():
    assert {name for name, _, _ in EXAMPLES} == set(FAMILIES)


def test_a_sentence_without_an_idiom_comes_back_unchanged():
    for text in ("I work at Google.", "Tom is a pilot.", "What a gorgeous morning!", "Home sweet home."):
        assert rewrite(text) == text


def test_an_employer_said_as_the_subject_or_by_the_pay():
    assert ("user", "employer", "Salesforce", False) in _facts(
        "Microsoft and I parted ways in August, and Salesforce took me on a week later.")
    assert ("user", "employer", "Microsoft", True) in _facts("Microsoft and I parted ways in August.")
    assert _facts("My paycheck comes from Netflix now.") == [("user", "employer", "Netflix", False)]
    assert _facts("Sam's been poached by Sainsbury's.") == [("Sam", "employer", "Sainsbury's", False)]


def test_years_at_an_employer_state_it():
    assert _facts("I've been at the Royal Mail for about six years.") == [("user", "employer", "the Royal Mail", False)]
    assert ("Raj", "employer", "Oracle", False) in _facts("Raj is at Oracle after eight years with IBM.")


def test_a_job_after_walking_away_from_a_field_and_a_retirement_enjoyed():
    assert ("Nora", "occupation", "full-time potter", False) in _facts("Nora walked away from the law and is a full-time potter.")
    assert ("Frank", "occupation", "", True) in _facts("Frank closed his practice and is enjoying his retirement.")


def test_a_home_said_by_idiom():
    assert ("Grace", "location", "Seattle", False) in _facts("Grace upped sticks and headed west to Seattle.")
    assert ("user", "location", "Cardiff", False) in _facts("The move to Cardiff is finally done.")
    assert ("Jenny", "location", "Melbourne", False) in _facts("Jenny's back home in Melbourne for good.")
    assert ("user", "location", "Galway", False) in _facts("Since the spring, home for me has been Galway.")
    assert ("Tom", "location", "Hamburg", False) in _facts("Tom lives with his girlfriend in Hamburg.")


def test_a_visit_back_is_no_home():
    assert _facts("Jenny's back in Melbourne for the weekend.") == []


def test_a_taste_come_to_or_turned():
    assert _facts("Funny thing, I've come round to mushrooms and actually love them.") == [("user", "likes", "mushrooms", False)]
    assert _facts("Thanks to my bad knees, I've grown to hate jogging.") == [("user", "dislikes", "jogging", False)]
    assert _facts("Coffee has won me over; I barely touch tea.") == [
        ("user", "prefers", "coffee", False), ("user", "prefers", "tea", True)]
    assert ("Leo", "likes", "basketball", False) in _facts("Leo has ditched football; basketball is all he cares about.")
    assert _facts("Peanut butter is the one thing I could eat every single day.") == [("user", "likes", "Peanut butter", False)]


def test_what_one_uses_and_what_one_cancelled():
    assert _facts("I cancelled my Spotify subscription; Apple Music is what I use.") == [
        ("user", "prefers", "Spotify", True), ("user", "prefers", "Apple Music", False)]
    assert ("user", "prefers", "a Volvo estate", False) in _facts("Out went the Audi, and in came a Volvo estate.")


def test_a_favourite_said_as_the_kind_loved_most_or_the_answer_one_would_give():
    assert _facts("Green is the colour I love most.") == [("user", "favorite colour", "Green", False)]
    assert ("user", "favorite film", "Parasite", False) in _facts(
        "Ask me for my favourite film today and I'd say Parasite, not Jaws.")


def test_a_name_after_someone_elses_relation_and_a_job_with_a_home():
    assert _facts("Our neighbours' son, Felix, is a carpenter.") == [("Felix", "occupation", "carpenter", False)]
    facts = _facts("Clara, my godmother, is a retired headmistress who lives in Edinburgh.")
    assert ("Clara", "occupation", "retired headmistress", False) in facts
    assert ("Clara", "location", "Edinburgh", False) in facts


def test_a_job_traded_by_its_gear_is_no_preference():
    facts = _facts("Carlos traded his apron for a classroom; he's a cookery teacher at the college.")
    assert not [f for f in facts if f[1] == "prefers"]
    assert ("Carlos", "occupation", "cookery teacher", False) in facts


def test_a_place_swapped_for_another_is_a_home_only_where_the_old_one_was_held():
    claims = extract_claims("Linda has swapped rainy Cardiff for sunny Málaga.", "user")
    assert claims and all(c.only_if_replacing and c.replaces == "Cardiff" for c in claims)  # no fact of its own
    assert ("user", "prefers", "a Nissan Leaf", False) in _facts("I've swapped the Fiesta for a Nissan Leaf.")


def test_a_wedding_said_by_idiom_names_the_spouse_by_the_word_held_before():
    assert _facts("Sophie and I tied the knot in September!") == [("Sophie", "relation", "spouse", False)]
    assert _facts("Sophie and I tied the knot in September!", people=(("Sophie", "fiancée"),)) == [
        ("Sophie", "relation", "wife", False)]


def test_finding_ones_own_place_ends_a_shared_home_only():
    facts = _facts("I've had the flat to myself since Ahmed found his own place.")
    assert {f[2] for f in facts if f[0] == "Ahmed" and f[3]} == {"roommate", "flatmate", "housemate"}


def test_a_job_said_by_crossing_over_by_title_or_by_the_job_landed():
    assert _facts("Priya jumped ship to Lidl.") == [("Priya", "employer", "Lidl", False)]
    assert _facts("We jumped over to the other bank.") == []
    assert ("user", "occupation", "nurse", False) in _facts("Nurse is my job these days.")
    assert ("user", "employer", "Google", False) in _facts("I'm with Google now, after six years at Apple.")
    assert ("user", "employer", "KPMG", False) in _facts("I left Deloitte in March and I've been at KPMG ever since.")
    assert rewrite("She landed a role as an editor") == "She now works as an editor"


def test_a_name_with_s_before_a_job_is_is_and_a_reason_after_now_that_is_cut():
    assert _facts("Tom's a carpenter now that he finished his apprenticeship.") == [("Tom", "occupation", "carpenter", False)]
    assert _facts("Tom's a big help.") == []


def test_an_aside_or_an_opener_does_not_hide_the_statement():
    assert _facts("My uncle Ravi, who's retired, still lives in Pune.") == [
        ("Ravi", "relation", "uncle", False), ("Ravi", "location", "Pune", False)]
    assert ("Ana", "employer", "Zara", False) in _facts("Ana, who works at Zara, is my cousin.")  # an aside that is a fact stays
    assert _facts("After the accident I can't stand motorbikes.") == [("user", "dislikes", "motorbikes", False)]
    assert _facts("Radiohead, by far, is my favourite band.") == [("user", "favorite band", "Radiohead", False)]


def test_a_favourite_picked_over_another_or_said_as_the_go_to():
    assert _facts("I'd choose Tolkien over Lewis as my favourite author.") == [("user", "favorite author", "Tolkien", False)]
    assert _facts("My go-to snack is popcorn.") == [("user", "favorite snack", "popcorn", False)]


def test_a_taste_or_an_allergy_said_by_its_effect_and_a_pastime_ended_by_its_verb():
    assert _facts("Latex gives me a rash.") == [("user", "allergy", "latex", False)]
    assert _facts("Coriander tastes like soap to me.") == [("user", "dislikes", "coriander", False)]
    assert _facts("Ben is a massive fan of Arsenal.") == [("Ben", "likes", "Arsenal", False)]
    assert _facts("I don't swim anymore.") == [("user", "likes", "swimming", True)]


def test_a_home_said_by_address_by_years_lived_or_by_moving_in_with_someone():
    assert _facts("My new address is in Leith.") == [("user", "location", "Leith", False)]
    assert _facts("Ivy has lived in Oslo since 2019.") == [("Ivy", "location", "Oslo", False)]
    assert rewrite("Mum moved in with my sister in Cork") == "Mum moved to Cork"


def test_make_believe_states_nothing():
    for text in ("Let's say my name is Alex for this role-play.", "Let's pretend I'm a nurse.", "Imagine I worked at Google.",
                 "For this game my name is Zed.", "Suppose I lived in Rome.", "Hypothetically, I'm a pilot."):
        assert _facts(text) == [], text
    assert _facts("My name is Zed.") == [("user", "name", "Zed", False)]


def test_the_guards_change_no_rewrite():
    """Each family's guard words are ones its pattern cannot match without: over every text of the labelled
    sets, the guarded rewrite is the rewrite with every family run."""
    from pathlib import Path

    from mirix_py.agents.offline.rules import idioms
    from mirix_py.eval.fact_eval import parse_corpus

    root = Path(__file__).resolve().parents[3]
    files = [root / "fixtures" / n for n in ("offline_facts_corpus.jsonl", "fact_regressions/set04.jsonl",
                                             "fact_regressions/set05.jsonl", "fact_regressions/set06.jsonl")]
    texts = [t for f in files for e in parse_corpus(f.read_text(encoding="utf-8").splitlines()) for t in (*e.prior, e.text)]
    assert len(texts) > 400

    def unguarded(sentence: str) -> str:
        for _, pattern, replacement in idioms._FAMILIES:
            sentence = pattern.sub(replacement, sentence)
        return sentence

    for text in texts:
        assert rewrite(text) == unguarded(text), text


def test_an_employer_that_hired_me_after_a_comma_and_a_first_day_at_a_new_one():
    assert ("user", "employer", "Lidl", False) in _facts("Asda laid me off in May, and Lidl hired me in June.")
    assert ("user", "employer", "Deloitte", False) in _facts("I gave notice at PwC and I'm starting at Deloitte next week.")
    assert _facts("I'm starting with Python next week.") == []  # a language learnt, not an employer


def test_an_employer_named_as_former_ends_it_and_the_one_joined_after_starts():
    assert _facts("Unilever is my former employer.") == [("user", "employer", "Unilever", True)]
    assert ("user", "employer", "Nestle", False) in _facts("Unilever is my previous employer; I joined Nestle in March.")


def test_a_home_by_its_keys_by_the_move_made_by_retiring_there_or_by_studying_there():
    assert ("user", "location", "Bristol", False) in _facts("We finally got the keys to our new house in Bristol.")
    assert ("user", "location", "Leeds", True) in _facts("We've settled in, Leeds is behind us now.")
    assert ("user", "location", "Perth", False) in _facts("We made the big move to Perth in March.")
    assert ("Gina", "location", "the Costa Brava", False) in _facts("Gina retired to the Costa Brava.")
    assert ("Ola", "location", "Durham", False) in _facts("Ola is doing well; she's at university in Durham.")
    assert _facts("That exam is behind me.") == []


def test_a_working_life_over_said_through_its_field():
    assert ("Gina", "occupation", "", True) in _facts("Gina retired from teaching in June.")


def test_one_name_ditched_for_another_and_for_good_is_no_value():
    assert _facts("I ditched Netflix and switched to Disney Plus.") == [("user", "prefers", "Disney Plus", False)]
    assert not [f for f in _facts("I gave up sugar for good in March.") if not f[3]]


def test_a_taste_said_as_what_one_is_about_what_nothing_beats_or_what_one_cannot_get_into():
    assert _facts("I'm hooked on padel.") == [("user", "likes", "padel", False)]
    assert _facts("Nothing beats a long walk for me.") == [("user", "likes", "a long walk", False)]
    assert _facts("Nothing calms me down like knitting.") == [("user", "likes", "knitting", False)]
    assert _facts("I just can't get into opera.") == [("user", "dislikes", "opera", False)]
    assert ("user", "prefers", "green tea", False) in _facts("Green tea is my new thing.")
    assert _facts("That's not my thing.") == []
    assert ("user", "likes", "cycling", False) in _facts("Oddly enough I've become a huge fan of cycling.")


def test_the_thing_loved_is_the_it_or_they_of_the_favourite_after_it():
    assert ("user", "favorite film", "Dune", False) in _facts("I'm obsessed with Dune right now, it's my favourite film.")
    assert ("user", "favorite band", "Wet Leg", False) in _facts("Nothing beats Wet Leg for me, they've replaced Pulp as my favourite band.")
    assert not [f for f in _facts("I love Pulp, they've replaced Blur as my favourite band.") if f[2] in ("they", "they've")]


def test_a_favourite_in_the_last_clause_unless_the_first_is_a_condition():
    assert ("user", "favorite film", "Alien", False) in _facts("Jaws lost its shine, Alien is my favourite film now.")
    assert [f for f in _facts("If I had to pick, Alien is my favourite film.") if f[1].startswith("favo")] == []


def test_an_allergy_by_swelling_and_an_intolerance():
    assert _facts("Kiwi makes my lips swell up.") == [("user", "allergy", "kiwi", False)]
    assert _facts("I'm gluten intolerant.") == [("user", "allergy", "gluten", False)]


def test_a_business_run_in_a_place_is_not_a_home():
    assert _facts("My stepdad Gary runs a garage in Derby.") == [("Gary", "relation", "stepdad", False)]


def test_a_story_or_a_text_asked_for_states_nothing():
    for text in ("In the film, the hero is a pilot who lives in Oslo.", "Write me a song that starts with 'I live in Paris'.",
                 "In my dream I was a chef in Rome."):
        assert _facts(text) == [], text
