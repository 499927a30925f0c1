import pytest

from mirix_py.agents.offline.rules.changes import ROMANTIC, ended_relation, find_changes, normalise, third_person


# ---------------------------------------------------------------- an end, rewritten to "no longer"


@pytest.mark.parametrize(
    "sentence, expected",
    [
        ("I'm not a nurse anymore", "I'm no longer a nurse"),
        ("Paul isn't my boss any more", "Paul is no longer my boss"),
        ("I don't live in Rome anymore", "I no longer live in Rome"),
        ("Tom doesn't work at Google any longer", "Tom no longer works at Google"),
        ("Tom stopped working at Google", "Tom no longer works at Google"),
        ("I've stopped drinking coffee", "I no longer drink coffee"),
        ("I used to be a nurse", "I am no longer a nurse"),
        ("Tom used to be a pilot", "Tom is no longer a pilot"),
        ("She used to watch cartoons", "She no longer watches cartoons"),
        ("I quit my job at Acme", "I no longer work at Acme"),
        ("I quit my job as a nurse", "I no longer work as a nurse"),
        ("Tom left Google", "Tom no longer works at Google"),
        ("I retired from Boeing", "I no longer work at Boeing"),
        ("Mia moved away from Leeds", "Mia no longer lives in Leeds"),
        ("I quit smoking", "I no longer smoke"),
        ("I finally quit being a barista", "I am no longer a barista"),
        ("Tom gave up eating meat", "Tom no longer eats meat"),
        # a name written with a lowercase "the"
        ("Nadia left the BBC", "Nadia no longer works at the BBC"),
        ("I moved away from the Netherlands", "I no longer live in the Netherlands"),
        # losing a job
        ("I got laid off from Shopify", "I no longer work at Shopify"),
        ("Tom was let go by the Guardian", "Tom no longer works at the Guardian"),
        ("She was made redundant at Barclays", "She no longer works at Barclays"),
        ("I lost my job at Acme", "I no longer work at Acme"),
        # losing a taste
        ("I've gone off horror movies", "I no longer like horror movies"),
        ("Mia lost interest in chess", "Mia no longer likes chess"),
        ("I got tired of sushi", "I no longer like sushi"),
    ],
)
def test_an_end_in_any_family_reads_as_no_longer(sentence, expected):
    assert normalise(sentence) == expected


@pytest.mark.parametrize(
    "sentence, expected",
    [
        ("These days I drink tea", "I now drink tea"),
        ("Nowadays, Tom lives in Oslo", "Tom now lives in Oslo"),
        ("Since March I work at Klarna", "I now work at Klarna"),
        ("These days I'm a teacher", "I'm a teacher"),  # an auxiliary follows: nothing to add
        ("Last year, Mia moved to Porto", "Mia moved to Porto"),
        ("Two years ago I moved to Denver", "I moved to Denver"),
    ],
)
def test_a_time_opener_gives_the_clause_its_subject(sentence, expected):
    assert normalise(sentence) == expected


@pytest.mark.parametrize(
    "sentence",
    [
        "I'm not sure, but Tom is a pilot",  # "not" without "anymore" is no end
        "I got used to living in Rome",  # "used to" after "got" is habit, not the past
        "I'm used to the cold",
        "I quit the team",  # no named employer
        "I left the office early",
        "I stopped at Starbucks",  # a stop, not a verb the rules read
        "Since I moved to Denver, life is calmer",  # "since" opens a clause of its own
        "I no longer remember his name",
    ],
)
def test_other_sentences_are_left_as_they_are(sentence):
    assert normalise(sentence) == sentence


@pytest.mark.parametrize(
    "sentence, expected",
    [
        ("We relocated to Edinburgh", "I relocated to Edinburgh"),
        ("We've just moved to Leeds", "I've just moved to Leeds"),
        ("we're living in Oslo now", "I'm living in Oslo now"),
        ("We live in Rome", "I live in Rome"),
    ],
)
def test_we_moving_home_is_the_speaker_moving(sentence, expected):
    assert normalise(sentence) == expected


@pytest.mark.parametrize(
    "sentence, expected",
    [
        ("Lately my favorite color has been purple", "Lately my favorite color is purple"),
        ("My favourite band has become Wet Leg", "My favourite band is Wet Leg"),
        ("Tom's favourite food is now ramen", "Tom's favourite food is ramen"),
        ("Arrival has replaced Alien as my favourite film", "my favourite film is Arrival"),
        ("Alien was replaced by Arrival as Tom's favourite film", "Tom's favourite film is Arrival"),
    ],
)
def test_a_favourite_said_with_another_verb_reads_as_is(sentence, expected):
    assert normalise(sentence) == expected


@pytest.mark.parametrize(
    "sentence, expected",
    [
        ("he drives a taxi now", "he is a taxi driver now"),
        ("I drive a school bus", "I am a school bus driver"),
    ],
)
def test_driving_a_vehicle_for_hire_is_a_job(sentence, expected):
    assert normalise(sentence) == expected


@pytest.mark.parametrize(
    "sentence",
    [
        "We moved the sofa",  # "we" is read only for a home, and nothing here is one
        "We watched a documentary about pilots",
        "I drive a Tesla",  # a car of one's own is no job
        "Tom drives a van to work",
        "My favourite film has a sequel",
    ],
)
def test_near_misses_of_the_new_families_are_left_as_they_are(sentence):
    assert normalise(sentence) == sentence


def test_a_negation_does_not_reach_across_a_clause():
    assert normalise("I'm not sure, but Tom isn't a pilot anymore") == "I'm not sure, but Tom is no longer a pilot"


def test_third_person():
    assert [third_person(v) for v in ("work", "watch", "be", "live", "have", "go")] == [
        "works", "watches", "is", "lives", "has", "goes"]


# ---------------------------------------------------------------- verbs of change


def _read(text, first_person=True):
    return [(c.attribute, c.value.strip(), c.old.strip(), c.negated) for c in find_changes(text, first_person=first_person)]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("I became a doctor last year", [("occupation", "a doctor last year", "", False)]),
        ("I've become a teacher", [("occupation", "a teacher", "", False)]),
        ("I started working as a barista", [("occupation", "a barista", "", False)]),
        ("I got a new job as an editor", [("occupation", "an editor", "", False)]),
        ("I was promoted to senior engineer", [("occupation", "senior engineer", "", False)]),
        ("I started a new job at Klarna", [("employer", "Klarna", "", False)]),
        ("I was hired by Spotify", [("employer", "Spotify", "", False)]),
        ("I left Acme to join Globex", [("employer", "Globex", "Acme", False)]),
        ("I left Boston for Denver", [("employer|location", "Denver", "Boston", False)]),
        ("I moved from Boston to Denver", [("location", "Denver", "Boston", False)]),
        ("I'm now based in Lisbon", [("location", "Lisbon", "", False)]),
        ("I now drink tea instead of coffee", [("prefers", "tea", "coffee", False)]),
        ("I gave up coffee for tea", [("prefers", "tea", "coffee", False)]),
        ("I replaced Windows with Linux", [("prefers", "Linux", "Windows", False)]),
        ("I gave up meat", [("prefers", "meat", "", True)]),
        ("I use Linux these days", [("prefers", "Linux", "", False)]),
        ("I no longer drink coffee", [("prefers", "coffee", "", True)]),
    ],
)
def test_verbs_of_change_after_i(text, expected):
    assert _read(text) == expected


def test_one_phrase_may_change_two_attributes():
    assert _read("I joined Google as an engineer") == [("occupation", "an engineer", "", False),
                                                       ("employer", "Google", "", False)]


def test_after_a_name_the_verb_starts_the_text():
    assert _read("has become a teacher", first_person=False) == [("occupation", "a teacher", "", False)]
    assert _read("moved from Cairo to Alexandria", first_person=False) == [("location", "Alexandria", "Cairo", False)]
    assert _read("said he became a teacher", first_person=False) == []


@pytest.mark.parametrize(
    "text",
    [
        "I might become a doctor",  # a modal is not a change
        "I want to start working at Klarna",
        "I switched off the light",
        "I moved the meeting to Friday",
        "I now have a dog",  # "have" changes nothing without "instead of"
        "I drink beer on weekends",  # a habit without a marker of change
        "I never became a doctor",
    ],
)
def test_no_change(text):
    assert _read(text) == []


# ---------------------------------------------------------------- the end of a couple


@pytest.mark.parametrize(
    "clause, name",
    [
        ("I broke up with Jake", "Jake"),
        ("Jake and I split up", "Jake"),
        ("I divorced Sam last year", "Sam"),
        ("Jake dumped me", "Jake"),
        ("I broke the vase", None),
        ("Jake and I met up", None),
        ("I'm thinking of breaking up with Jake", None),
    ],
)
def test_ended_relation(clause, name):
    assert ended_relation(clause) == name


def test_every_couple_relation_ends_but_no_other():
    assert "boyfriend" in ROMANTIC and "wife" in ROMANTIC
    assert "friend" not in ROMANTIC and "brother" not in ROMANTIC


# ---------------------------------------------------------------- the fourth round


@pytest.mark.parametrize(
    "sentence, expected",
    [
        ("I haven't been a journalist since 2019", "I am no longer a journalist"),
        ("Tom hasn't worked at Tesco for years", "Tom no longer works at Tesco"),
        ("My last day at Amazon was Friday", "I no longer work at Amazon"),
        ("Tom's last day at the BBC was in May", "Tom no longer works at the BBC"),
        ("Jake handed in his notice at Deloitte", "Jake no longer works at Deloitte"),
        ("Jake handed in his notice at Deloitte and joined KPMG", "Jake left Deloitte to join KPMG"),
        ("Rock climbing doesn't do it for me anymore", "I no longer like rock climbing anymore"),
        ("Painting bores Sofia", "Sofia no longer likes painting"),
        ("Kiwi won't touch sunflower seeds anymore", "Kiwi no longer likes sunflower seeds"),
        ("I'm over jazz", "I no longer like jazz"),
        ("My wife and I moved to Glasgow", "I moved to Glasgow"),
        ("We both work for GitLab", "I work for GitLab"),
        ("Lucy has turned vegan", "Lucy is now a vegan"),
        ("I went vegetarian", "I am now a vegetarian"),
        ("Home is Valencia now", "I now live in Valencia now"),
        ("Tom says rugby is his favourite sport now", "Tom's favourite sport is rugby"),
        ("Ramen tops sushi as my favourite food", "my favourite food is Ramen"),
        ("Fontaines D.C. are my favourite band", "my favourite band is Fontaines D.C."),
    ],
)
def test_the_fourth_rounds_rewrites(sentence, expected):
    assert normalise(sentence) == expected


@pytest.mark.parametrize(
    "sentence, expected",
    [
        ("Nothing beats Alien as my favourite film", "Nothing beats Alien as my favourite film"),  # no other value
        ("I'm over the moon", "I'm over the moon"),
        ("Tom says his sister moved to Paris", "his sister moved to Paris"),  # about the sister, not Tom
        ("My last day at Ikea is next Friday", "My last day at Ikea is next Friday"),  # not yet
        ("Green is my sister's favourite colour", "Green is my sister's favourite colour"),
    ],
)
def test_the_fourth_rounds_rewrites_leave_near_misses(sentence, expected):
    assert normalise(sentence) == expected


def test_seventh_round_ends_a_shared_home_a_taste_and_a_diet():
    from mirix_py.agents.offline.rules.changes import left_diet, moved_out

    assert moved_out("Ines moved out in June, so I live alone now") == "Ines"
    assert moved_out("Ines moved out of London") is None
    assert normalise("After the kids were born I lost all taste for clubbing.") == "I no longer like clubbing."
    assert left_diet("I'm back on meat after two years")
    assert normalise("Honestly golf just bores me now.") == "Honestly I no longer like golf now."
