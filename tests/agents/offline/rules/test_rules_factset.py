from mirix_py.agents.offline.rules.claim import Claim
from mirix_py.agents.offline.rules.factset import Held, apply, slot


def _held(attribute, value):
    return Held(text=f"{attribute} {value}", attribute=attribute, value=value)


def _claim(attribute, value, **kw):
    return Claim(entity="user", attribute=attribute, value=value, about_speaker=True, **kw)


def test_a_job_is_one_slot_and_a_parent_or_a_hobby_is_not_a_job():
    assert slot("occupation", "teacher") == slot("occupation", "flight instructor")
    assert slot("occupation", "mom of two") != slot("occupation", "teacher")
    assert slot("occupation", "runner") != slot("occupation", "mom")


def test_a_diet_said_as_who_one_is_or_as_a_preference_is_one_slot():
    assert slot("occupation", "vegetarian") == slot("occupation", "vegan") == slot("prefers", "a vegan diet")


def test_a_second_identity_does_not_replace_the_job():
    out = apply([_held("occupation", "teacher")], [_claim("occupation", "mom")])
    assert [f.value for f in out.facts] == ["teacher", "mom"] and not out.superseded


def test_a_new_job_replaces_the_old_one():
    out = apply([_held("occupation", "nurse")], [_claim("occupation", "doctor")])
    assert [f.value for f in out.facts] == ["doctor"] and [f.value for f in out.superseded] == ["nurse"]


def test_an_end_of_a_taste_ends_it_however_it_was_held():
    held = [_held("prefers", "coffee"), _held("likes", "coffee"), _held("likes", "jazz")]
    out = apply(held, [_claim("prefers", "coffee", negated=True)])
    assert [f.value for f in out.facts] == ["jazz"]


def test_a_value_that_holds_only_where_it_replaces():
    left = [_claim("employer", "Globex", replaces="Acme", only_if_replacing=True),
            _claim("location", "Globex", replaces="Acme", only_if_replacing=True)]
    out = apply([_held("employer", "Acme"), _held("location", "Boston")], left)
    assert [(f.attribute, f.value) for f in out.facts] == [("location", "Boston"), ("employer", "Globex")]
    out = apply([_held("location", "Boston")], left)  # Acme not held: nothing learnt, nothing lost
    assert [(f.attribute, f.value) for f in out.facts] == [("location", "Boston")] and not out.changed


def test_an_end_without_a_value_ends_the_job_whatever_it_was_called():
    held = [_held("occupation", "chef"), _held("occupation", "mom"), _held("employer", "Nobu")]
    out = apply(held, [_claim("occupation", "", negated=True)])
    assert [f.value for f in out.facts] == ["mom", "Nobu"] and [f.value for f in out.superseded] == ["chef"]


def test_a_prefixed_kin_word_or_an_owner_is_no_job():
    for value in ("stepfather", "grandmother", "step-mom", "homeowner"):
        assert slot("occupation", value) != slot("occupation", "teacher"), value
    assert slot("occupation", "headteacher") == slot("occupation", "head-teacher") == slot("occupation", "teacher")


def _relation(value):
    return Claim(entity="Chris", attribute="relation", value=value, owner="user")


def _held_relation(value):
    return Held(text=f"Chris is user's {value}", attribute="relation", value=value)


def test_a_couple_holds_one_relation_at_a_time():
    out = apply([_held_relation("boyfriend")], [_relation("fiancé")])
    assert [f.value for f in out.facts] == ["fiancé"] and [f.value for f in out.superseded] == ["boyfriend"]
    out = apply([_held_relation("wife")], [_relation("ex-wife")])
    assert [f.value for f in out.facts] == ["ex-wife"]  # an ex is not the same value as the wife


def test_a_relation_of_another_group_stands_beside():
    out = apply([_held_relation("boyfriend")], [_relation("best friend")])
    assert [f.value for f in out.facts] == ["boyfriend", "best friend"] and not out.superseded
    out = apply([_held_relation("brother")], [_relation("flatmate")])
    assert [f.value for f in out.facts] == ["brother", "flatmate"]


def test_a_thing_said_by_part_of_its_name_ends_the_one_held():
    out = apply([_held("prefers", "Honda Civic")], [_claim("prefers", "a Tesla", replaces="the Civic")])
    assert [f.value for f in out.facts] == ["a Tesla"]
    out = apply([_held("prefers", "Ford Focus")], [_claim("prefers", "Focus", negated=True)])
    assert out.facts == []


def test_a_lowercase_part_does_not_end_a_named_thing():
    out = apply([_held("prefers", "Honda Civic")], [_claim("prefers", "civic", negated=True)])
    assert [f.value for f in out.facts] == ["Honda Civic"]


def test_a_car_by_its_make_is_one_way_of_getting_about():
    assert slot("prefers", "Kia Niro") == slot("prefers", "Toyota Corolla") == slot("prefers", "an e-bike")


def test_a_taste_said_again_in_another_form_is_held_already():
    held = [_held("likes", "dancing")]
    for value in ("dances", "dance", "Dancing"):
        out = apply(held, [_claim("likes", value)])
        assert [f.value for f in out.facts] == ["dancing"] and not out.changed, value


def test_the_speakers_own_thing_in_either_person_is_one_fact():
    out = apply([_held("likes", "running their own studio")], [_claim("likes", "running my own studio")])
    assert [f.value for f in out.facts] == ["running their own studio"] and not out.changed


def test_a_dislike_of_a_taste_held_in_another_form_replaces_it():
    out = apply([_held("likes", "dancing")], [_claim("dislikes", "dance")])
    assert [f.value for f in out.facts] == ["dance"] and [f.value for f in out.superseded] == ["dancing"]


def test_other_words_stay_other_tastes():
    out = apply([_held("likes", "dancing")], [_claim("likes", "dancers")])
    assert [f.value for f in out.facts] == ["dancing", "dancers"]
