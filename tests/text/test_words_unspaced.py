"""Thai, Lao, Khmer and Burmese are written without spaces between words: a query word inside a run of
their letters meets the index by its cluster pairs (a cluster: a letter with the vowel signs and
tone marks written after it), as a CJK word does by its letter pairs. The sentences are hand-made."""

from __future__ import annotations

import pytest

from mirix_py.text.words import indexed_text, query_terms

SENTENCES = [  # (sentence, a word inside it)
    ("ฉันไปตลาดกับแม่เมื่อวานนี้", "ตลาด"), ("คุณยายปลูกมะม่วงไว้หลังบ้าน", "มะม่วง"), ("น้องสาวแพ้กุ้งและปู", "กุ้ง"),
    ("ຂ້ອຍໄປຕະຫຼາດກັບແມ່ມື້ວານນີ້", "ຕະຫຼາດ"), ("ທ່ານໝໍບອກໃຫ້ຂ້ອຍດື່ມນ້ຳຫຼາຍໆ", "ນ້ຳ"),
    ("ខ្ញុំទៅផ្សារជាមួយម្តាយកាលពីម្សិលមិញ", "ផ្សារ"), ("គាត់បានផ្លាស់ទៅរស់នៅភ្នំពេញតាំងពីឆ្នាំមុន", "ភ្នំពេញ"),
    ("ကျွန်တော်မနေ့ကအမေနဲ့ဈေးကိုသွားတယ်", "ဈေး"), ("သမီးကစနေနေ့တိုင်းစန္ဒယားသင်တယ်", "စန္ဒယား"),
]


@pytest.mark.parametrize("sentence, word", SENTENCES)
def test_a_word_inside_a_run_is_among_the_indexed_words_of_its_sentence(sentence, word):
    indexed = set(indexed_text(sentence).split())
    assert query_terms(word) and set(query_terms(word)) <= indexed, word


def test_a_word_is_searched_as_its_cluster_pairs():
    assert query_terms("ตลาด") == ["ตล", "ลา", "าด"]
    assert query_terms("แม่") == ["แม่"]  # two clusters, แ and ม่: one pair
    assert query_terms("ที่") == ["ที่"]  # one cluster is a word
    assert query_terms("ณ") == ["ณ"]  # and so is one letter
    assert query_terms("စန္ဒယား") == ["စန္", "န္ဒ", "ဒယား"]  # a virama and a visarga stay with their letters


def test_a_mark_is_never_a_term_of_its_own():
    """A tone mark or vowel sign belongs to the letter before it: no term of a sentence, nor a word
    of its index, begins with one, and a tone mark alone is searched for nothing."""
    for sentence, _ in SENTENCES:
        for word in [*query_terms(sentence), *indexed_text(sentence).split()]:
            assert word[0].isalpha(), (sentence, word)
    assert query_terms("\u0e48") == []  # Thai mai ek
    assert query_terms("\u0e48 \u0e49") == []


def test_a_tone_mark_makes_another_word():
    """แม่ (mother) and แมว (cat) share the letters แ ม but not a cluster pair: the tone mark is kept."""
    cat = set(indexed_text("แมวนอนบนเตียง").split())
    assert not set(query_terms("แม่")) & cat
    assert set(query_terms("แมว")) <= cat


def test_the_index_sets_clusters_apart_and_adds_their_pairs():
    assert indexed_text("ไปตลาด") == " ไ  ป  ต  ล  า  ด  ไป ปต ตล ลา าด"
    assert indexed_text("แม่ ณ") == " แ  ม่   ณ  แม่"  # a run of one cluster adds no pair
    assert indexed_text("ซื้อ iPhone15 ที่ตลาด") == " ซื้  อ  iPhone15  ที่  ต  ล  า  ด  ซื้อ ที่ต ตล ลา าด"


def test_a_latin_word_or_number_against_thai_letters_is_a_term_of_its_own():
    assert query_terms("ไปTokyo") == ["ไป", "tokyo"]
    assert query_terms("ปี2024") == ["ปี", "2024"]


def test_cjk_and_thai_in_one_text_are_each_paired_in_their_own_script():
    assert query_terms("钢琴ตลาด") == ["钢琴", "ตล", "ลา", "าด"]
    assert indexed_text("学钢琴 ไปตลาด") == " 学  钢  琴   ไ  ป  ต  ล  า  ด  学钢 钢琴 ไป ปต ตล ลา าด"


@pytest.mark.parametrize("text", ["We had coffee at the lake.", "我的女儿在上海学习钢琴。", "मैं कल दिल्ली में अपने दोस्त से मिला।",
                                  "Hôm qua tôi ăn phở ở Hà Nội"])
def test_text_without_these_letters_is_indexed_as_before(text):
    """Text of other scripts is indexed and searched as it was (the values revision 0022 gave)."""
    before = {"We had coffee at the lake.": ("We had coffee at the lake.", ["coffee", "lake"]),
              "我的女儿在上海学习钢琴。": (" 我  的  女  儿  在  上  海  学  习  钢  琴 。 我的 的女 女儿 儿在 在上 上海 海学 学习 习钢 钢琴",
                                  ["我的", "的女", "女儿", "儿在", "在上", "上海", "海学", "学习", "习钢", "钢琴"]),
              "मैं कल दिल्ली में अपने दोस्त से मिला।": ("मैं कल दिल्ली में अपने दोस्त से मिला।",
                                                ["मैं", "कल", "दिल्ली", "में", "अपने", "दोस्त", "से", "मिला"]),
              "Hôm qua tôi ăn phở ở Hà Nội": ("Hôm qua tôi ăn pho o Hà Noi", ["hôm", "qua", "tôi", "ăn", "pho", "hà", "noi"])}
    assert (indexed_text(text), query_terms(text)) == before[text]
