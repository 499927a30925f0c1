"""Facts read from a dependency parse (`rules.parsed`), and the parser it reads with (`offline.parser`)."""

from __future__ import annotations

import shutil

import pytest

from mirix_py.agents.offline import parser as parser_module
from mirix_py.agents.offline.rules.claims import extract_claims, parse_worthy
from mirix_py.agents.offline.rules.parsed import PreParsed, read_claims, worth_parsing


@pytest.fixture(scope="module")
def parser():
    return parser_module.SpacyParser()


def _read(parser, text, people=None):
    return {(c.entity, c.attribute, c.value, c.negated) for c in read_claims(parser.parse(parse_worthy(text)), "user",
                                                                              people=people)}


def test_an_apposed_name_of_a_relation(parser):
    assert ("Ruth", "relation", "stepmum", False) in _read(parser, "My stepmum, Ruth, is a GP in Harrogate.")


def test_a_place_named_before_where_the_speaker_works(parser):
    assert ("user", "employer", "Monzo", False) in _read(parser, "Monzo's where I work now; I left Barclays in 2022.")


def test_a_pronoun_goes_on_about_the_name_before_it(parser):
    found = _read(parser, "Dev isn't a chef anymore, he took a job as a driving instructor.")
    assert {("Dev", "occupation", "chef", True), ("Dev", "occupation", "driving instructor", False)} <= found


def test_a_job_taken_names_its_employer(parser):
    found = _read(parser, "I quit Deloitte in March and took a job as a data analyst at the NHS.")
    assert {("user", "occupation", "data analyst", False), ("user", "employer", "NHS", False)} <= found


def test_a_relation_word_is_the_person_memory_holds_under_it(parser):
    assert _read(parser, "My brother moved to Oslo.", people={"brother": "Tom"}) == {("Tom", "location", "Oslo", False)}
    assert _read(parser, "My brother moved to Oslo.") == set()  # nobody held as the brother: about nobody


def test_a_taste_said_by_a_relative_clause(parser):
    assert ("user", "favorite city", "Kyoto", False) in _read(parser, "The city I love most is Kyoto now.")
    assert ("user", "dislikes", "cold coffee", False) in _read(parser, "The one thing I really can't abide is cold coffee.")


def test_someone_elses_favourite_and_allergy(parser):
    assert ("Harper", "favorite color", "teal", False) in _read(parser, "My daughter Harper's favorite color is teal.")
    assert ("user", "allergy", "sesame", False) in _read(parser, "I carry an EpiPen because of my sesame allergy.")
    assert ("Tom", "allergy", "peanuts", False) in _read(parser, "My brother Tom can't eat peanuts because he's allergic.")
    assert _read(parser, "Tom can't eat peanuts, he's on a diet.") == set()  # no allergy named


def test_what_the_speaker_is_called(parser):
    assert ("user", "name", "Sid", False) in _read(parser, "My name is Siddharth, but everyone calls me Sid.")


def test_we_moves_the_speakers_home_and_nothing_else(parser):
    assert _read(parser, "We've resettled in Victoria.") == {("user", "location", "Victoria", False)}
    assert _read(parser, "We love Nando's.") == set()


def test_joined_subjects_each_get_the_fact(parser):
    assert {("Tom", "location", "Leeds", False), ("Jerry", "location", "Leeds", False)} <= _read(
        parser, "Tom and Jerry both live in Leeds.")
    assert {("Mia", "location", "Oslo", False), ("Tom", "location", "Oslo", False), ("Tom", "relation", "brother", False)} \
        <= _read(parser, "My sister Mia and my brother Tom live in Oslo.")


def test_he_goes_on_about_a_person_the_patterns_named():
    from mirix_py.agents.offline.rules.parsed import read_claims

    parser = parser_module.SpacyParser()
    docs = parser.parse(["He's an apprentice electrician at Balfour Beatty."])
    found = {(c.entity, c.attribute, c.value) for c in read_claims(docs, "user", named=["Rhys"])}
    assert ("Rhys", "occupation", "apprentice electrician") in found
    assert read_claims(docs, "user") == []  # nobody named: "he" is nobody


def test_a_message_that_leaves_out_its_i(parser):
    assert _read(parser, "Moved to Leeds last month.") == {("user", "location", "Leeds", False)}
    assert _read(parser, "Currently renting a tiny flat in Utrecht.") == {("user", "location", "Utrecht", False)}
    assert _read(parser, "obsessed with padel rn") == {("user", "likes", "padel", False)}
    assert _read(parser, "Move to Leeds.") == set()  # a command


def test_a_job_the_job_words_lack_where_it_names_its_employer(parser):
    found = _read(parser, "i'm a welder at harland & wolff, been there 6 yrs")
    assert {("user", "occupation", "welder", False), ("user", "employer", "harland & wolff", False)} <= found
    assert _read(parser, "I'm a mess today.") == set()


def test_hired_and_hailing(parser):
    assert ("Femi", "employer", "TotalEnergies", False) in _read(parser, "Uncle Femi was headhunted by TotalEnergies.")
    assert {("Thandiwe", "relation", "sister-in-law", False), ("Thandiwe", "origin", "Bulawayo", False)} <= _read(
        parser, "My sister-in-law, Thandiwe, hails from Bulawayo.")


def test_every_clause_with_its_own_subject(parser):
    found = _read(parser, "Quick intro to the people I'll mention a lot: Dagny is my stepmum, Leif is my "
                          "half-brother, and Sunniva is my oldest friend from school.")
    assert {("Dagny", "relation", "stepmum", False), ("Leif", "relation", "half-brother", False),
            ("Sunniva", "relation", "oldest friend", False)} <= found
    assert _read(parser, "She said that Dagny is my stepmum.") == set()  # said, not stated
    assert _read(parser, "When I lived in Paris, I was happy.") == set()  # a time, and a past state


def test_a_role_worked_or_started_as(parser):
    found = extract_claims("Ines moved to Porto, and she's working as a tour guide there now.", "user", parser=parser)
    assert ("Ines", "occupation", "tour guide") in {(c.entity, c.attribute, c.value) for c in found}
    assert ("user", "occupation", "barista", False) in _read(parser, "Started as a barista at Blue Bottle last month.")
    assert _read(parser, "We work as a team on Fridays.") == set()


def test_a_job_said_in_passing(parser):
    assert ("user", "occupation", "paramedic", False) in _read(parser, "As a paramedic, I think I've seen it all.")
    assert _read(parser, "As a former paramedic, I think I've seen it all.") == set()
    assert _read(parser, "As a kid I loved trains.") == set()


def test_a_clause_of_result_states_how_things_are(parser):
    assert ("Marta", "relation", "fiancée", False) in _read(parser, "He proposed on the beach, so Marta is my fiancée now.")
    assert _read(parser, "I saved hard so that I could live in Paris.") == set()  # a purpose


def test_a_relative_clause_about_a_named_person(parser):
    assert ("Luca", "location", "Turin", False) in _read(parser, "My cousin Luca, who lives in Turin, is visiting.")
    assert ("Luca", "location", "Turin", False) in _read(parser, "My cousin Luca, who's moved back to Turin, is visiting.")
    assert _read(parser, "The novel opens on Captain Reyes, who lives in Lima.") == set()  # a story's person


def test_a_favourite_chosen_above_the_rest(parser):
    assert ("user", "favorite band", "Radiohead", False) in _read(parser, "The band I listen to most is Radiohead.")
    assert _read(parser, "The city I visited first was Rome.") == set()  # a past visit


def test_a_relation_apposed_to_a_name_anywhere(parser):
    assert ("Niamh", "relation", "sister", False) in _read(parser, "Please book a table and add Niamh, my sister.")
    assert ("Parisa", "relation", "step-grandmother", False) in _read(parser, "My step-grandmother Parisa lives in Shiraz.")


def test_work_done_for_an_organisation(parser):
    assert ("Jonas", "employer", "DHL", False) in _read(parser, "Jonas drives trucks for DHL.")
    assert ("Ama", "employer", "Stanbic", False) in _read(parser, "Ama was lured away by Stanbic.")
    assert _read(parser, "Jonas votes for the SNP.") == set()


def test_a_home_bought_or_signed_for(parser):
    assert _read(parser, "We bought a house in Galway.") == {("user", "location", "Galway", False)}
    assert _read(parser, "We looked at a house in Galway.") == set()


def test_a_course_at_a_university(parser):
    assert ("user", "employer", "University of Ghent", False) in _read(parser, "I'm doing my masters at the University of Ghent.")


def test_a_birthday_said_before_the_copula(parser):
    assert ("user", "birthday", "ninth of May", False) in _read(parser, "The ninth of May is my birthday.")


def test_a_group_is_nobody(parser):
    assert _read(parser, "Most Canadians are mad about hockey.") == set()


def test_a_kin_word_and_the_sentence_before_name_who_he_is(parser):
    assert ("Frank", "employer", "Tesco", False) in _read(parser, "Dad sold the car. He's working at Tesco now.",
                                                          people={"father": "Frank"})
    found = extract_claims("Big news at home: Priya traded the classroom for a courtroom. She's been a barrister since June.",
                           "user", parser=parser)
    assert ("Priya", "occupation", "barrister") in {(c.entity, c.attribute, c.value) for c in found}


def _claims(parser, text):
    return {(c.entity, c.attribute, c.value) for c in extract_claims(text, "user", parser=parser)}


def test_verbs_of_becoming_and_signing_on(parser):
    assert ("Ola", "occupation", "audiologist") in _claims(parser, "Ola requalified as an audiologist last year.")
    assert {("Tavita", "employer", "Air Tahiti"), ("Tavita", "occupation", "ramp agent")} <= _claims(
        parser, "Tavita signed on with Air Tahiti as a ramp agent.")
    assert ("Carmen", "occupation", "buyer") in _claims(parser, "My stepmother Carmen was recruited by Zara as a buyer.")
    assert ("user", "employer", "Danone") in _claims(parser, "signed my contract with Danone yesterday!")
    assert {("user", "employer", "Vestas"), ("user", "occupation", "blade inspector")} <= _claims(
        parser, "Vestas has employed me as a blade inspector since 2019.")


def test_where_someone_is_from_and_when_the_speaker_was_born(parser):
    assert ("Urška", "origin", "Maribor") in _claims(parser, "Our new neighbour Urška is a seismologist from Maribor.")
    assert ("user", "origin", "Tangier") in _claims(parser, "My roots are in Tangier, but I live in Madrid.")
    assert ("user", "birthday", "3rd of May") in _claims(parser, "heads up, I turn 30 on the 3rd of May")


def test_a_name_given_after_the_relation(parser):
    assert {("Raj", "relation", "new boss"), ("Raj", "occupation", "chemist")} <= _claims(
        parser, "My new boss started today. His name is Raj and he is a chemist.")
    assert _claims(parser, "His name is Raj.") == set()  # nobody spoken of before


def test_a_name_the_tagger_has_not_seen_opens_a_sentence(parser):
    assert ("Tomek", "occupation", "qualified electrician") in _claims(
        parser, "Tomek passed his exams and has been a qualified electrician since May.")


def test_a_firm_as_the_owner_of_the_place_one_works_at(parser):
    assert ("Keiko", "employer", "ANA") in _claims(parser, "Keiko works in HR at ANA's head office now.")


def test_who_he_is_named_before_him_in_the_sentence(parser):
    assert ("Kofi", "employer", "Ecobank") in _claims(
        parser, "Kofi's contract with MTN wasn't renewed, but he's landed a permanent post at Ecobank.")
    assert {("Dario", "relation", "old flatmate"), ("Dario", "occupation", "sound engineer")} <= _claims(
        parser, "Had lunch with Dario, my old flatmate — he's a sound engineer at RAI now.")


def test_allergies_homes_and_work_said_other_ways(parser):
    assert ("Oskar", "allergy", "mustard") in _claims(parser, "My husband Oskar has a serious mustard allergy.")
    assert ("user", "location", "Fremantle") in _claims(parser, "I work away a lot, but home is Fremantle.")
    assert ("Ignacio", "location", "Valparaíso") in _claims(parser, "Ignacio has set up home in Valparaíso.")
    assert {("user", "employer", "BHP"), ("user", "occupation", "mining engineer")} <= _claims(
        parser, "I do FIFO rotations for BHP as a mining engineer.")
    assert ("user", "occupation", "charge nurse") in _claims(parser, "Been a charge nurse since Monday!")


def test_work_and_homes_said_in_passing(parser):
    assert ("user", "employer", "Novartis") in _claims(parser, "Cake in the office: today was my first day at Novartis.")
    assert ("user", "location", "Bergen") in _claims(parser, "We've been in Bergen since March.")
    assert _claims(parser, "We were in Bergen in March.") == set()  # a visit
    assert ("Lindiwe", "employer", "University of Cape Town") in _claims(
        parser, "My niece Lindiwe is studying law at the University of Cape Town.")
    assert ("Nils", "location", "Tromsø") in _claims(parser, "My uncle Nils lives in a cabin above Tromsø.")


def test_a_reason_clause_states_how_things_are(parser):
    assert ("Aroha", "occupation", "pastry chef") in _claims(
        parser, "My niece Aroha is on dessert duty since she's a pastry chef.")
    assert _claims(parser, "I hate hospitals since I was a nurse.") & {("user", "occupation", "nurse")} == set()


def test_he_two_sentences_after_the_name(parser):
    found = extract_claims("Dad finally did it. He walked out of Hitachi last month. He's doing three days a week as a "
                           "consultant for Toshiba now.", "user", parser=parser, people=[("Haruto", "dad")])
    assert {("Haruto", "employer", "Toshiba"), ("Haruto", "occupation", "consultant")} <= {
        (c.entity, c.attribute, c.value) for c in found}


def test_tastes_said_of_the_thing(parser):
    assert ("user", "likes", "Knitting socks") in _claims(parser, "Knitting socks is one of my faves.")
    assert ("user", "likes", "Pottery") in _claims(parser, "Pottery is my go-to after a long week.")
    assert ("user", "likes", "allotment") in _claims(parser, "The allotment is my happy place.")
    assert ("user", "likes", "Swimming") in _claims(parser, "Swimming makes me so happy.")
    assert ("user", "likes", "crime novels") in _claims(parser, "The shelf is full of my favorite crime novels.")
    assert _claims(parser, "That was my favorite!") == set()  # nothing named
    assert _claims(parser, "I love his tech.") == set()  # someone else's


def test_each_activity_joined_to_a_liked_one(parser):
    found = _claims(parser, "I love going to gigs, baking and playing chess.")
    assert {("user", "likes", "baking"), ("user", "likes", "playing chess")} <= found


def test_how_a_thing_feels_says_the_taste(parser):
    assert ("user", "dislikes", "line dancing") in _claims(parser, "Honestly I find line dancing excruciating.")
    assert not any(c[1] == "dislikes" for c in _claims(parser, "I find it unbearable."))


def test_a_lowercase_name_in_a_chat(parser):
    assert ("user", "location", "bukhara") in _claims(parser, "we've been in bukhara since june")
    assert ("user", "location", "bukhara") not in _claims(parser, "we've been in trouble since june")


def test_a_firm_named_by_its_office_or_after_it(parser):
    assert ("Ayumi", "employer", "Nintendo") in _claims(parser, "Ayumi has been at Nintendo's Kyoto office since May.")
    assert ("user", "employer", "Paystack") in _claims(parser, "I'm at a tiny fintech called Paystack now.")
    assert ("user", "employer", "Infosys") in _claims(parser, "In March I joined Infosys's Pune office.")


def test_relations_that_change(parser):
    assert ("Sunita", "relation", "friend") in _claims(parser, "Sunita moved gyms, but she's a proper friend now.")
    found = extract_claims("Sunita stopped being my personal trainer in the spring.", "user", parser=parser)
    assert ("Sunita", "relation", "personal trainer", True) in {(c.entity, c.attribute, c.value, c.negated) for c in found}


def test_a_new_manager_is_no_longer_the_old_ones():
    found = extract_claims("Leilani is my manager now.", "user", people=[("Gunnar", "manager"), ("Tom", "brother")])
    assert {(c.entity, c.value, c.negated) for c in found} == {("Leilani", "manager", False), ("Gunnar", "manager", True)}


def test_a_town_named_after_what_a_home_is_by(parser):
    assert ("Farhad", "location", "Rasht") in _claims(parser, "Farhad sold up and is living by the Caspian in Rasht now.")


def test_a_verdict_on_a_kind_of_thing(parser):
    assert ("user", "dislikes", "Olives") in _claims(parser, "Olives are disgusting.")
    assert _claims(parser, "The olives were disgusting.") == set()  # one dish, once


def test_tastes_and_dates_of_natural_chat(parser):
    assert ("user", "likes", "gaming") in _claims(parser, "I'm hoping to share my love of gaming with others.")
    assert ("user", "likes", "making a positive impact") in _claims(parser, "I'm so passionate about making a positive impact.")
    assert ("user", "likes", "board games") in _claims(parser, "I love how board games bring people together.")
    assert ("user", "birthday", "17th of November") in _claims(parser, "I was born on the 17th of November.")
    assert ("Mireille", "birthday", "4th of April") in _claims(parser, "My girlfriend Mireille turns thirty on the 4th of April.")
    assert ("user", "allergy", "sulphite") in _claims(parser, "I read every label because of a sulphite allergy.")
    assert ("Halina", "dislikes", "aubergine") in _claims(parser, "My neighbour Halina finds aubergine slimy.")


def test_studies_friends_and_roles_said_in_passing(parser):
    assert ("user", "employer", "Plymouth") in _claims(parser, "I'm reading marine biology at Plymouth.")
    assert ("user", "employer", "Plymouth") not in _claims(parser, "I'm reading a novel at Plymouth station.")
    assert ("Tamsin", "relation", "closest friend") in _claims(parser, "Tamsin has become my closest friend.")
    assert ("user", "occupation", "cabinetmaker") in _claims(parser, "I've been making kitchens to order as a cabinetmaker.")
    assert not any(c[1] == "occupation" for c in _claims(parser, "I'm going to the party as a pilot."))  # a costume
    assert ("Hiroko", "relation", "mother-in-law") in _claims(parser, "my mother in law Hiroko is a retired judo coach")


def test_a_long_clause_is_no_taste_and_a_career_no_job(parser):
    assert not any(c[1] == "likes" for c in _claims(
        parser, "I'm really passionate about making sure veterans are supported and valued in our community."))
    assert not any(c[1] == "occupation" for c in _claims(parser, "I've been looking into counseling as a career."))
    # no taste without a value, whichever way the long activity is said
    assert _claims(parser, "obsessed with making sure veterans are supported and valued in our community") == set()
    assert _claims(parser, "Making sure veterans are supported and valued in our community makes me so happy.") == set()


@pytest.mark.parametrize("text", [
    "Before law school I was a waitress for three years.",  # how things were
    "I would move to Paris if the rent were lower.",  # a wish
    "I want to work at Google one day.",  # a plan
    "My cousin just took a job at Bosch.",  # a relative nobody named
    'He said, "I\'m a pilot," but nobody believed him.',  # a quote
    "Would you ever live in Canada?",  # a question
    "Once the kids have left home, we might sell up and move to the Dordogne.",  # a plan, through "and"
    "As far as I know I'm not allergic to anything.",  # no allergy
    "I'm no writer like you, but something awesome happened.",  # no job
    "I'm a big fan of them and I really love having them around.",  # things named before
])
def test_what_states_nothing(parser, text):
    assert _read(parser, text) == set()


def test_no_longer_ends_a_taste_rather_than_stating_it(parser):
    assert _read(parser, "I no longer like jazz.") == {("user", "likes", "jazz", True)}


def test_only_sentences_with_a_predicate_word_are_parsed():
    assert worth_parsing("Jo's relocated to Denver.")
    assert worth_parsing("Ruth is a GP.")
    assert not worth_parsing("That sounds great, see you tomorrow!")
    assert parse_worthy("Great to hear. I live in Leeds. Do you live in York?") == ["I live in Leeds."]
    assert parse_worthy("i live in Leeds 🏡") == ["I live in Leeds"]  # as `extract_claims` reads it


class _Counting:
    def __init__(self, inner):
        self.inner, self.calls = inner, []

    def parse(self, texts):
        self.calls.append(list(texts))
        return self.inner.parse(texts)


def test_sentences_parsed_ahead_are_not_parsed_again(parser):
    counting = _Counting(parser)
    ahead = PreParsed(counting, ["I live in Leeds.", "Jo moved to Oslo."])
    assert counting.calls == [["I live in Leeds.", "Jo moved to Oslo."]]
    (doc,) = ahead.parse(["Jo moved to Oslo."])
    assert doc.text == "Jo moved to Oslo." and len(counting.calls) == 1
    ahead.parse(["I work at Acme."])  # not parsed ahead: parsed now, once
    assert counting.calls[-1] == ["I work at Acme."]


def test_the_parse_adds_only_what_the_patterns_left_unread(parser):
    text = "My brother Tom is a pilot. My stepmum, Ruth, is a GP in Harrogate."
    plain = {(c.entity, c.attribute, c.value) for c in extract_claims(text, "user")}
    both = {(c.entity, c.attribute, c.value) for c in extract_claims(text, "user", parser=parser)}
    assert ("Tom", "occupation", "pilot") in plain and ("Ruth", "relation", "stepmum") not in plain
    assert both - plain == {("Ruth", "relation", "stepmum"), ("Ruth", "is", "a GP")}


def test_the_model_files_are_checked(tmp_path):
    model = parser_module._model_dir()
    parser_module.verify(model)  # the installed weights are the checked ones
    copy = tmp_path / "model"
    for name in parser_module.MODEL_SHA256:
        (copy / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(model / name, copy / name)
    parser_module.verify(copy)
    with open(copy / "parser/model", "ab") as changed:
        changed.write(b"\0")
    with pytest.raises(parser_module.ParserUnavailable, match="parser/model has sha256"):
        parser_module.verify(copy)
    (copy / "tagger/model").unlink()
    with pytest.raises(parser_module.ParserUnavailable, match="missing"):
        parser_module.verify(copy)


def test_the_setting_names_the_parser():
    assert parser_module.load_fact_parser("none") is None
    assert isinstance(parser_module.load_fact_parser("spacy"), parser_module.SpacyParser)
    with pytest.raises(ValueError, match="unknown fact parser"):
        parser_module.load_fact_parser("nltk")
