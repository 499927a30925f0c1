import pytest

from mirix_py.ingest.ocr import parse_tesseract_data
from mirix_py.ingest.ocr_confusions import fix_capital_i, misread_capital_i
from tesseract_rows import tesseract_data


@pytest.mark.parametrize("words, expected", [
    (["From:", "Jonas", "lyer"], ["From:", "Jonas", "Iyer"]),
    (["Lena", "lvanova", "10:14"], ["Lena", "Ivanova", "10:14"]),
    (["Omar", "lbrahim,", "Nina", "lngram"], ["Omar", "Ibrahim,", "Nina", "Ingram"]),
])
def test_a_surname_read_with_l_for_i_is_put_back(words, expected):
    assert fix_capital_i(words) == expected


@pytest.mark.parametrize("words", [
    ["Stop", "lying"],              # an English word that starts "ly"
    ["Mount", "lake"],              # l before a vowel: a word as read
    ["Files", "ls", "-la"],         # too short to be a name's second part, and l before s
    ["run", "lsof", "-i"],          # not after a capitalised word
    ["lyer"],                       # nothing before it
    ["Jonas", "llama"],             # ll starts English words
    ["Run", "lsof", "-i"],          # a shell command after a capitalised word
    ["Weight", "lbs"],              # an abbreviation
])
def test_words_that_may_be_read_right_are_left(words):
    assert fix_capital_i(words) == words


def test_misread_needs_a_consonant_after_the_l():
    assert misread_capital_i("lvan") and misread_capital_i("lyer")
    assert not misread_capital_i("lyric") and not misread_capital_i("lemon") and not misread_capital_i("Lvan")


def test_ocr_lines_carry_the_fixed_name_with_its_box():
    result = parse_tesseract_data(tesseract_data([
        (1, 1, 1, 1, 10, 10, 40, 12, 93, "Jonas"), (1, 1, 1, 2, 55, 10, 30, 12, 90, "lyer"),
        (1, 1, 2, 1, 10, 30, 60, 12, 95, "Nimbus"), (1, 1, 2, 2, 75, 30, 30, 12, 95, "lakes"),
    ]), min_confidence=45)
    assert result.lines == ["Jonas Iyer", "Nimbus lakes"]
    word = result.blocks[0].lines[0].words[1]
    assert (word.text, word.box, word.confidence) == ("Iyer", (55, 10, 30, 12), 90)
