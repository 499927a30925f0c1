from mirix_py.agents.offline.rules.names import shield, unshield


def test_dots_of_a_name_are_kept_from_ending_the_sentence():
    for text in ("Ursula K. Le Guin wrote it.", "I moved to Washington, D.C. last year.", "Dr. Rivera is kind."):
        assert shield(text).count(".") == 1 and unshield(shield(text)) == text


def test_the_last_dot_of_initials_before_a_lowercase_word_belongs_to_the_name():
    text = "Fontaines D.C. are my favourite band."
    assert shield(text).count(".") == 1 and unshield(shield(text)) == text


def test_the_dot_that_ends_the_text_stays_one():
    assert shield("I moved to the U.S.").endswith(".") and shield("I moved to the U.S.").count(".") == 1
