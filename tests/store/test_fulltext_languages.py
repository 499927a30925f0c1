"""Full-text search (bm25) beyond English, on SQLite and PostgreSQL: a word inside Chinese, Japanese
or Korean text is found, a Latin word written against CJK letters is a word of its own, and the
Unicode forms of one word meet (NFC and NFD, Turkish İ, German ß). The memory's text stays as said."""

from __future__ import annotations

import unicodedata

import pytest

from mirix_py.engine import Mirix

ZH_TARGET = "我的女儿在上海学习钢琴。"
ZH_DISTRACTORS = [  # each holds one of the two letters of 钢琴, or the word's neighbours, but not the word
    "我买了一支新钢笔。", "他在公园里弹琴唱歌。", "我的女儿在上海学习画画。", "朋友请我吃了晚饭。",
    "我们下午一起聊了很久。", "天气不错，我们出去走了走。", "同事告诉我他很喜欢音乐。", "我昨晚睡得不太好。",
]


@pytest.fixture
def mx(tmp_path, backend):
    with Mirix(tmp_path / "data", embedder=None, database_url=backend) as engine:
        yield engine


def _said(mx, user_id: str, texts: list[str]) -> dict[str, str]:
    """Add each text as a message of its own; text -> the id of the episode it became."""
    ids = {}
    for text in texts:
        result = mx.add([{"role": "user", "content": text}], user_id=user_id)
        [ids[text]] = [c.memory_id for c in result.changes if c.memory_id.startswith("epi_")]
    return ids


def _bm25(mx, query: str, user_id: str) -> list[str]:
    return [h.memory.summary for h in mx.search(query, user_id=user_id, method="bm25", limit=5)]


def test_a_chinese_word_inside_a_sentence_is_found_first(mx, user_id):
    ids = _said(mx, user_id, [ZH_TARGET, *ZH_DISTRACTORS])
    assert _bm25(mx, "钢琴", user_id)[0] == ZH_TARGET
    assert _bm25(mx, "她在哪里学钢琴？", user_id)[0] == ZH_TARGET  # a question holding the word
    assert _bm25(mx, "钢笔", user_id) == ["我买了一支新钢笔。"]
    assert mx.get(ids[ZH_TARGET], user_id=user_id).summary == ZH_TARGET  # stored as said, no spaces


def test_a_japanese_word_inside_a_sentence_is_found_first(mx, user_id):
    target = "昨日新しいパソコンを買いました。"
    _said(mx, user_id, [target, "新しいカメラを買いました。", "パン屋さんでコーヒーを飲みました。", "明日は東京に行きます。"])
    assert _bm25(mx, "パソコン", user_id)[0] == target
    assert _bm25(mx, "東京", user_id) == ["明日は東京に行きます。"]


def test_a_korean_word_with_a_particle_attached_is_found(mx, user_id):
    target = "저는 서울에서 일해요."
    _said(mx, user_id, [target, "부산은 바다가 아름다워요.", "저는 회사에서 일해요.", "어제 친구를 만났어요."])
    assert _bm25(mx, "서울", user_id)[0] == target


def test_a_latin_word_written_against_chinese_letters_is_a_word(mx, user_id):
    target = "我正在学习用Python写程序。"
    _said(mx, user_id, [target, "我正在学习做饭。", "I wrote a script in Ruby."])
    assert _bm25(mx, "Python", user_id) == [target]
    assert _bm25(mx, "程序", user_id) == [target]


def test_turkish_dotted_capital_i_finds_its_word(mx, user_id):
    target = "We moved to İstanbul last spring."
    _said(mx, user_id, [target, "We moved to Ankara the year before."])
    for query in ("İstanbul", "istanbul", "ISTANBUL", "İSTANBUL"):
        assert _bm25(mx, query, user_id) == [target], query


@pytest.mark.parametrize("stored_form, query_form", [("NFC", "NFD"), ("NFD", "NFC")])
def test_composed_and_decomposed_accents_meet(mx, user_id, stored_form, query_form):
    words = ["naïve", "señor", "résumé", "Ångström"]
    said = [unicodedata.normalize(stored_form, f"The {w} one came up at lunch.") for w in words]
    ids = _said(mx, user_id, said)
    for word, text in zip(words, said):
        assert _bm25(mx, unicodedata.normalize(query_form, word), user_id) == [text], word
        assert mx.get(ids[text], user_id=user_id).summary == text  # the form said is the form kept


def test_sharp_s_and_ss_are_one_spelling(mx, user_id):
    target = "Our office is on the Schillerstraße now."
    _said(mx, user_id, [target, "The meeting moved to Tuesday."])
    assert _bm25(mx, "Schillerstrasse", user_id) == [target]
    assert _bm25(mx, "SCHILLERSTRASSE", user_id) == [target]
    assert _bm25(mx, "Schillerstraße", user_id) == [target]


def test_russian_yo_and_greek_accents_are_folded(mx, user_id):
    tree, athens = "Мы поставили ёлку в гостиной.", "Η Αθήνα ήταν ζεστή."
    _said(mx, user_id, [tree, athens, "Сегодня идёт дождь."])
    assert _bm25(mx, "елку", user_id) == [tree]
    assert _bm25(mx, "αθηνα", user_id) == [athens]


HI_TARGET = "मैं कल दिल्ली में अपने दोस्त से मिला।"
HI_DISTRACTORS = [  # the same letters without the vowel signs, or the target's other words
    "दल्ल में बारिश हुई।", "मैं कल घर पर था।", "मेरा दोस्त मुंबई में रहता है।", "हम कल पुणे गए।", "मिल बंद है।"]


def test_a_hindi_word_with_vowel_signs_and_virama_is_found_first(mx, user_id):
    """A vowel sign or a virama (Unicode marks) is a letter of its word: दिल्ली is one word, not द ल ल,
    and the word before the danda ends there."""
    ids = _said(mx, user_id, [HI_TARGET, *HI_DISTRACTORS])
    assert _bm25(mx, "दिल्ली", user_id) == [HI_TARGET]
    assert _bm25(mx, "मिला", user_id) == [HI_TARGET]
    assert set(_bm25(mx, "दोस्त", user_id)) == {HI_TARGET, "मेरा दोस्त मुंबई में रहता है।"}
    assert _bm25(mx, "मिल", user_id) == ["मिल बंद है।"]  # the vowel sign makes another word
    assert _bm25(mx, "दिल्ली में कौन मिला?", user_id)[0] == HI_TARGET
    assert mx.get(ids[HI_TARGET], user_id=user_id).summary == HI_TARGET


def test_tamil_and_bengali_words_with_vowel_signs_are_found(mx, user_id):
    tamil, bengali = "நான் நேற்று சென்னையில் என் நண்பரை சந்தித்தேன்.", "আমি গতকাল কলকাতায় আমার বোনের সাথে দেখা করেছি।"
    _said(mx, user_id, [tamil, bengali, "நான் நேற்று வீட்டில் இருந்தேன்.", "আমি গতকাল বাড়িতে ছিলাম।"])
    assert _bm25(mx, "சென்னையில்", user_id) == [tamil]
    assert _bm25(mx, "বোনের", user_id) == [bengali]


def test_a_latin_word_written_without_its_two_accents_finds_it(mx, user_id):
    """unicode61 folds a letter of one accent (é); phở's ở has two, and is found by pho too."""
    pho = "Hôm qua tôi đã ăn phở ở Hà Nội với bạn."
    _said(mx, user_id, [pho, "We had ramen in Tokyo."])
    for query in ("pho", "phở", "PHỞ", "Ha Noi", "hà nội"):
        assert _bm25(mx, query, user_id) == [pho], query


def test_arabic_with_and_without_harakat_meet(mx, user_id):
    voweled, plain = "ذَهَبْتُ إِلَى الْمَكْتَبَةِ أَمْسِ", "اشتريت كتابا جديدا من السوق"
    _said(mx, user_id, [voweled, plain, "ذهبت إلى المدرسة"])
    assert _bm25(mx, "المكتبة", user_id) == [voweled]
    assert _bm25(mx, "الْمَكْتَبَةِ", user_id) == [voweled]
    assert _bm25(mx, "كِتَابًا", user_id) == [plain]


def test_arabic_alef_with_or_without_its_hamza_or_madda_meet(mx, user_id):
    """أحمد and احمد, الإسلام and الاسلام, آمن and امن are one word each, whichever is stored or asked."""
    ahmad, islam, safe, plain = "قابلت أحمد في المقهى", "يدرس تاريخ الاسلام", "البيت امن الآن", "ذهبت إلى المدرسة"
    _said(mx, user_id, [ahmad, islam, safe, plain])
    for query, said in (("احمد", ahmad), ("أحمد", ahmad), ("الإسلام", islam), ("الاسلام", islam), ("آمن", safe),
                        ("امن", safe), ("مدرسة", None)):
        assert _bm25(mx, query, user_id)[:1] == ([said] if said else []), query
    assert _bm25(mx, "الى", user_id) == [plain]  # إلى without its hamza
    assert mx.get(mx.search("احمد", user_id=user_id, method="bm25")[0].memory.id, user_id=user_id).summary == ahmad


def test_format_characters_do_not_hide_a_word(mx, user_id):
    """A word inside bidi isolates or an override is found; a zero-width non-joiner inside a Persian
    word leaves it one word, found with or without it."""
    isolated, persian = "Plus \u2066isolate\u2069 here and \u202eevil\u202c there.", "من می\u200cخواهم به تهران بروم."
    _said(mx, user_id, [isolated, persian, "Nothing to see here."])
    assert _bm25(mx, "isolate", user_id) == [isolated]
    assert _bm25(mx, "evil", user_id) == [isolated]
    assert _bm25(mx, "میخواهم", user_id) == [persian]
    assert _bm25(mx, "می\u200cخواهم", user_id) == [persian]


UNSPACED = {  # hand-made sentences written without spaces between words, and a word inside each
    "thai": [("ฉันไปตลาดกับแม่เมื่อวานนี้", "ตลาด"), ("พี่ชายของฉันทำงานที่โรงพยาบาลในเชียงใหม่", "โรงพยาบาล"),
             ("คุณยายปลูกมะม่วงไว้หลังบ้าน", "มะม่วง"), ("น้องสาวแพ้กุ้งและปู", "กุ้ง")],
    "lao": [("ຂ້ອຍໄປຕະຫຼາດກັບແມ່ມື້ວານນີ້", "ຕະຫຼາດ"), ("ອ້າຍຂອງຂ້ອຍເຮັດວຽກຢູ່ໂຮງໝໍ", "ໂຮງໝໍ"),
            ("ລາວຍ້າຍໄປຢູ່ວຽງຈັນແຕ່ປີກາຍ", "ວຽງຈັນ")],
    "khmer": [("ខ្ញុំទៅផ្សារជាមួយម្តាយកាលពីម្សិលមិញ", "ផ្សារ"), ("យាយដាំស្វាយនៅក្រោយផ្ទះ", "ស្វាយ"),
              ("គាត់បានផ្លាស់ទៅរស់នៅភ្នំពេញតាំងពីឆ្នាំមុន", "ភ្នំពេញ")],
    "burmese": [("ကျွန်တော်မနေ့ကအမေနဲ့ဈေးကိုသွားတယ်", "ဈေး"), ("အစ်ကိုကဆေးရုံမှာအလုပ်လုပ်တယ်", "ဆေးရုံ"),
                ("သူမနှစ်ကရန်ကုန်ကိုပြောင်းသွားတယ်", "ရန်ကုန်")],
}


@pytest.mark.parametrize("script", sorted(UNSPACED))
def test_a_word_inside_a_thai_lao_khmer_or_burmese_sentence_is_found_first(mx, user_id, script):
    """These scripts put no space between words: a word inside a run is found by its cluster pairs."""
    pairs = UNSPACED[script]
    ids = _said(mx, user_id, [sentence for sentence, _ in pairs])
    for sentence, word in pairs:
        assert _bm25(mx, word, user_id)[0] == sentence, word
    sentence = pairs[0][0]
    assert mx.get(ids[sentence], user_id=user_id).summary == sentence  # stored as said, no spaces


def test_a_thai_tone_mark_stays_with_its_letter(mx, user_id):
    """แม่ (mother) is not แมว (cat): the tone mark is part of the cluster, and alone it finds nothing."""
    mother, cat = "แม่ไปทำงานแต่เช้า", "แมวนอนบนเตียงทั้งวัน"
    _said(mx, user_id, [mother, cat])
    assert _bm25(mx, "แม่", user_id) == [mother]
    assert _bm25(mx, "แมว", user_id) == [cat]
    assert _bm25(mx, "\u0e48", user_id) == []


def test_a_latin_word_written_against_thai_letters_is_a_word(mx, user_id):
    target = "ฉันซื้อiPhoneที่ห้างเมื่อวาน"
    _said(mx, user_id, [target, "ฉันซื้อรองเท้าที่ตลาด", "I bought a new phone case."])
    assert _bm25(mx, "iphone", user_id) == [target]
    assert _bm25(mx, "ห้าง", user_id) == [target]
