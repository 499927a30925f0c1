from mirix_py.text.small_talk import is_small_talk, without_small_talk


def test_greetings_thanks_and_cheers_are_small_talk_and_content_is_not():
    for sentence in ("Thanks, Maria!", "Wow!", "How about you?", "Hey Tim!", "That's awesome!", "Bye!"):
        assert is_small_talk(sentence), sentence
    for sentence in ("I went hiking with my workmates.", "Taekwondo and kickboxing!", "Wow, great photo!"):
        assert not is_small_talk(sentence), sentence


def test_a_photo_caption_is_kept_however_short():
    assert not is_small_talk("[shares a photo]")
    said = "Thanks! [shares a photo: a dog]"
    assert without_small_talk(said) == "[shares a photo: a dog]"


def test_a_turn_loses_its_small_talk_and_keeps_the_rest_in_order():
    said = "Thanks, Maria! I went on a mountaineering trip last week. Wow! It helped clear my head. How about you?"
    assert without_small_talk(said) == "I went on a mountaineering trip last week. It helped clear my head."


def test_one_sentence_or_small_talk_only_stays_as_said():
    for said in ("Thanks, Maria!", "Hey Tim! Bye!", "I painted a sunset.", "  Sure thing.\n"):
        assert without_small_talk(said) == said


def test_a_turn_without_small_talk_is_returned_unchanged():
    said = "I painted a sunset.\nThen I framed it for my mum."
    assert without_small_talk(said) == said


def test_the_kept_sentences_keep_their_line_breaks():
    said = "Wow!\nI planted tomatoes today.\nThanks, Ann!\nThe basil is next."
    assert without_small_talk(said) == "I planted tomatoes today.\nThe basil is next."
