import pytest

from mirix_py.agents.offline.rules.frames import find_frames, is_organisation


def _read(text, first_person=True):
    return [(c.attribute, c.value) for c in find_frames(text, first_person=first_person)]


@pytest.mark.parametrize(
    "text, attribute, value_starts",
    [
        ("I now earn my living as a plumber", "occupation", "a plumber"),
        ("I make a living as a translator these days", "occupation", "a translator"),
        ("I work remotely for GitLab these days", "employer", "GitLab"),
        ("I'm with BP now", "employer", "BP"),
        ("I've been living in York since 2019", "location", "York"),
        ("I emigrated to Canada since then", "location", "Canada"),
    ],
)
def test_the_value_kind_and_the_preposition_decide_the_attribute_whatever_the_verb(text, attribute, value_starts):
    (found,) = _read(text)
    assert found[0] == attribute and found[1].startswith(value_starts)


def test_after_a_name_the_frame_opens_the_words():
    assert _read("is now settled in Singapore", first_person=False) == [("location", "Singapore")]
    assert _read("is working as a paralegal now", first_person=False)[0][0] == "occupation"


def test_without_a_marker_of_change_nothing_is_read():
    assert _read("I volunteered as a firefighter for a weekend") == []
    assert _read("I work remotely for GitLab") == []


@pytest.mark.parametrize(
    "text",
    [
        "I ate at McDonald's since I was hungry",  # 'since' as 'because'; eating is no work
        "I presented at Google's conference now and then",
        "I donate to Oxfam now",  # 'to' after a verb that moves no home
        "I switched banks to Monzo",
        "I dressed as a doctor for Halloween now",  # dressing up is no job
        "I'm in Denver now for my cousin's wedding",  # a visit
        "I've been stuck in Denver since Tuesday",  # a moment
        "I'm shopping at Tesco now",
        "I'm at the airport now",  # a place one is at, not a firm
        "I joined in January now",  # a time, not a place
        "I'd love to work as a chef now",
        "I'm flying to York now",
        "I had an interview at KPMG now",
    ],
)
def test_near_misses_read_nothing(text):
    assert _read(text) == []


def test_an_organisation_is_known_by_the_form_of_its_name():
    assert is_organisation("KPMG") and is_organisation("the BBC") and is_organisation("the University of York")
    assert not is_organisation("Glasgow") and not is_organisation("Starbucks")
