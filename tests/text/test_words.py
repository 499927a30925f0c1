"""The words full-text search compares: a query's terms (`query_terms`) and what the index holds for
a memory's text (`indexed_text`) meet for CJK words inside a run and for the Unicode forms of one
word, and text that needs neither is indexed and searched exactly as written."""

from __future__ import annotations

import re
import unicodedata

import pytest

from mirix_py.text.words import STOPWORDS, indexed_text, query_terms


def test_a_chinese_word_is_searched_as_its_letter_pairs():
    assert query_terms("钢琴") == ["钢琴"]
    assert query_terms("马拉松") == ["马拉", "拉松"]
    assert query_terms("我奶奶住在哪里？") == ["我奶", "奶奶", "奶住", "住在", "在哪", "哪里"]
    assert query_terms("猫") == ["猫"]  # one letter is a word


def test_a_latin_word_against_cjk_letters_is_a_term_of_its_own():
    assert query_terms("用Python写程序") == ["用", "python", "写程", "程序"]
    assert query_terms("iPhone15を買った") == ["iphone15", "を買", "買っ", "った"]


def test_the_index_sets_cjk_letters_apart_and_adds_their_pairs():
    assert indexed_text("学钢琴。") == " 学  钢  琴 。 学钢 钢琴"
    assert indexed_text("用Python写程序") == " 用 Python 写  程  序  写程 程序"
    assert indexed_text("서울에서 살아요") == " 서  울  에  서   살  아  요  서울 울에 에서 살아 아요"


def test_a_query_word_is_among_the_indexed_words_of_a_sentence_holding_it():
    for sentence, word in [("我的女儿在上海学习钢琴。", "钢琴"), ("昨日新しいパソコンを買った。", "パソコン"),
                           ("저는 서울에서 일해요.", "서울"), ("我正在学习用Python写程序。", "Python")]:
        indexed = indexed_text(sentence).lower().split()
        assert set(query_terms(word)) <= set(indexed), word


@pytest.mark.parametrize("written", ["İstanbul", "ISTANBUL", "istanbul", "İSTANBUL", "i\u0307stanbul"])
def test_turkish_dotted_capital_i_is_an_i(written):
    assert query_terms(written) == ["istanbul"]


@pytest.mark.parametrize("word", ["naïve", "señor", "résumé", "Ångström", "phở", "서울"])
def test_decomposed_and_composed_forms_are_one_term(word):
    nfd = unicodedata.normalize("NFD", word)
    assert nfd != word
    assert query_terms(nfd) == query_terms(word)
    assert indexed_text(nfd) == indexed_text(word)


def test_letters_written_two_ways_are_one_term():
    assert query_terms("Straße STRASSE strasse STRAẞE") == ["strasse"]
    assert query_terms("ёлка елка ЁЛКА") == ["елка"]
    assert query_terms("Αθήνα ΑΘΗΝΑ αθηνα") == ["αθηνα"]
    assert query_terms("Ελλάδας ΕΛΛΑΔΑΣ") == ["ελλαδασ"]  # a final sigma is a sigma
    assert indexed_text("Schillerstraße") == "Schillerstrasse"


def _terms_as_before(text: str) -> list[str]:
    """`query_terms` before CJK and Unicode forms were handled (for a text with content words)."""
    words = re.findall(r"[^\W_]+", text.lower())
    return list(dict.fromkeys(w for w in words if len(w) > 1 and w not in STOPWORDS))[:32]


@pytest.mark.parametrize("text", [
    "Caroline: I went to a LGBTQ support group yesterday — it was so powerful.",
    "Melanie: We had crème brûlée at the café 🎉 and I ran 5km 🏃\u200d♀️ ’twas great",
    "[8 May 2023, 13:56] Ana: naïve señor résumé Ørsted Москва Ελλαδα",
])
def test_text_without_cjk_in_nfc_is_indexed_and_searched_as_before(text):
    # an emoji's joiner and variation selector are dropped (a mark is a word character now): no word changes
    assert indexed_text(text) == text.replace("\u200d", "").replace("\ufe0f", "")
    assert re.findall(r"[^\W_]+", indexed_text(text)) == re.findall(r"[^\W_]+", text)
    assert query_terms(text) == _terms_as_before(text)


def test_an_indic_words_vowel_signs_and_virama_are_letters_of_it():
    assert query_terms("मैं कल दिल्ली में अपने दोस्त से मिला।") == ["मैं", "कल", "दिल्ली", "में", "अपने", "दोस्त", "से", "मिला"]
    assert query_terms("நான் நேற்று சென்னையில் என் நண்பரை சந்தித்தேன்.") == [
        "நான்", "நேற்று", "சென்னையில்", "என்", "நண்பரை", "சந்தித்தேன்"]
    assert query_terms("বোনের") == ["বোনের"]
    assert query_terms("मिल") != query_terms("मिला")  # a vowel sign is no accent: it is kept
    assert indexed_text("दिल्ली में।") == "दिल्ली में।"


@pytest.mark.parametrize("written, term", [
    ("phở", "pho"), ("PHỞ", "pho"), ("pho\u031b\u0309", "pho"), ("Nội", "noi"),  # two accents: unicode61 leaves them
    ("ἀρετή", "αρετη"), ("ᾠδή", "ωδη"),  # polytonic Greek
    ("моло\u0301ко", "молоко"),  # a stress mark on a Cyrillic vowel
    ("ذَهَبْتُ", "ذهبت"), ("الْمَكْتَبَةِ", "المكتبة"),  # Arabic harakat
    ("שָׁלוֹם", "שלום"),  # Hebrew points
])
def test_accents_a_reader_leaves_out_are_folded(written, term):
    assert query_terms(written) == [term]
    assert query_terms(indexed_text(written)) == [term]


@pytest.mark.parametrize("written, term", [
    ("أحمد", "احمد"), ("إسلام", "اسلام"), ("آمن", "امن"), ("ٱلله", "الله"),  # hamza above, below, madda, wasla
    ("\u0627\u0654\u062d\u0645\u062f", "احمد"), ("\u0627\u0653\u0645\u0646", "امن"),  # the hamza or madda written apart
    ("أَحْمَد", "احمد"),  # and harakat
])
def test_an_alefs_hamza_or_madda_is_folded(written, term):
    assert query_terms(written) == [term]
    assert query_terms(indexed_text(written)) == [term]
    assert indexed_text(f"قال {written} شيئا") == f"قال {term} شيئا"


def test_hamza_on_waw_and_yeh_is_kept():
    assert query_terms("مسؤول رئيس") == ["مسؤول", "رئيس"]
    assert query_terms("رؤية") != query_terms("روية")  # vision, deliberation: two words


def test_letters_made_with_a_mark_that_are_letters_of_their_own_are_kept():
    assert query_terms("мой ї ў") == ["мой"]  # й is not и (ї and ў are one letter each: no term)
    assert query_terms("мой") != query_terms("мои")
    assert query_terms("naïve café") == ["naïve", "café"]  # unicode61 folds these as it tokenizes: left to it


@pytest.mark.parametrize("written, terms", [
    ("Plus \u2066isolate\u2069 here", ["plus", "isolate"]),  # bidi isolates part words as spaces
    ("\u202eevil\u202c there", ["evil"]),
    ("left\u200eright", ["left", "right"]),  # a left-to-right mark too
    ("zero\u200bwidth", ["zero", "width"]),  # a zero-width space is a space
    ("می\u200cخواهم", ["میخواهم"]),  # a zero-width non-joiner inside a word leaves one word
    ("क्\u200dष", ["क्ष"]),  # a zero-width joiner inside a word too
    ("infor\u00admation", ["information"]),  # a soft hyphen
    ("كـتـاب", ["كتاب"]),  # Arabic tatweel
])
def test_format_characters_inside_or_around_a_word(written, terms):
    assert query_terms(written) == terms
    assert query_terms(indexed_text(written)) == terms
