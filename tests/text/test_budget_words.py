"""A reader's word budget counts a Chinese or Japanese letter and a Thai, Lao, Khmer or Burmese
cluster as a word: text written without spaces is not one "word" a run, and `focus` cuts it."""

from __future__ import annotations

import pytest

from mirix_py.text.passages import GAP, focus
from mirix_py.text import words
from mirix_py.text.words import word_count

ENGLISH = "  The launch moved to Friday.\n\tOwner: Omar Berg — see the notes (v2).  "


def test_english_counts_and_cuts_by_its_spaces_as_ever():
    assert word_count(ENGLISH) == len(ENGLISH.split()) == 13
    for n in range(0, 15):
        assert words.first_words(ENGLISH, n) == " ".join(ENGLISH.split()[:n])
    assert word_count("") == 0 and words.first_words("", 3) == ""


def test_a_cjk_letter_and_a_thai_cluster_are_a_word_each():
    assert word_count("我的女儿在上海学习钢琴。") == 11  # the full stop goes with 琴
    assert word_count("我的iPhone坏了") == 5  # iPhone is one word between the letters
    assert word_count("東京タワーに行きました") == 11
    assert word_count("나는 학교에 간다") == 3  # Korean is written with spaces, and counted by them
    assert word_count("ตลาด") == 4  # ต ล า ด
    assert word_count("แม่") == 2  # แ, and ม with its tone mark
    assert word_count("ฉันไปตลาด กับแม่") == 12
    assert word_count("Ada 说 hello。") == 3


def test_first_words_cuts_inside_a_run_between_letters_or_clusters():
    assert words.first_words("我的女儿在上海学习钢琴。", 4) == "我的女儿"
    assert words.first_words("我的女儿在上海学习钢琴。", 11) == "我的女儿在上海学习钢琴。"
    assert words.first_words("Ada 说：我的女儿在上海", 5) == "Ada 说：我的女"
    assert words.first_words("แม่ไปตลาด", 2) == "แม่"  # the tone mark stays with its letter


def test_word_chunks_hold_every_word_once_in_order():
    text = "今天我们讨论了预算。 Ada said 明天 见！ ฉันไปตลาดกับแม่"
    for size in (1, 2, 3, 7, 100):
        chunks = list(words.word_chunks(text, size))
        assert all(word_count(c) <= size for c in chunks)
        assert sum(word_count(c) for c in chunks) == word_count(text)
        assert "".join("".join(chunks).split()) == "".join(text.split())
    with pytest.raises(ValueError):
        list(words.word_chunks(text, 0))


SENTENCE = "今天我们在会议室里讨论了下个季度的预算安排和人员招聘计划。"  # 29 letters
ANSWER = "我的女儿每个星期六在上海的音乐学校学习钢琴。"


def _within(out: str, budget: int) -> bool:
    """`out` holds no more than `budget` words (the gap marks are words too), a letter or cluster
    counted alone: at most `budget` of them beside the gaps and spaces."""
    letters = len("".join(out.replace(GAP, "").split()))
    return word_count(out) <= budget + out.count(GAP) and letters <= 3 * budget


def test_a_long_chinese_memory_is_cut_to_the_budget_around_the_query():
    lines = [f"[2024-06-03 10:29] 会议记录 {SENTENCE}", *[SENTENCE * 3 for _ in range(30)]]
    lines[20] = SENTENCE + ANSWER + SENTENCE  # a long line: cut at its full stops
    text = "\n".join(lines)
    out = focus(text, "钢琴", 120)
    assert out != text and _within(out, 120)
    assert out.split("\n")[0] == lines[0] and ANSWER in out.split("\n")


def test_a_chinese_line_without_spaces_is_cut_at_its_full_stops():
    text = SENTENCE * 40 + ANSWER + SENTENCE * 40
    out = focus(text, "女儿学习什么？", 120)
    assert _within(out, 120) and ANSWER in out.split("\n")


def test_a_line_without_spaces_or_stops_is_cut_every_half_budget():
    text = "我们讨论了预算安排和人员招聘计划" * 100 + "钢琴课" + "我们讨论了预算安排和人员招聘计划" * 100
    out = focus(text, "钢琴", 60)
    assert _within(out, 60) and "钢琴" in out


def test_a_thai_line_is_cut_at_its_spaces():
    filler = "วันนี้เราประชุมเรื่องงบประมาณของไตรมาสหน้า"
    answer = "ลูกสาวของฉันเรียนเปียโนทุกวันเสาร์"
    text = " ".join([filler] * 30 + [answer] + [filler] * 30)
    out = focus(text, "เปียโน", 120)
    assert _within(out, 120) and answer in out.split("\n")


def test_a_short_chinese_memory_is_returned_unchanged():
    assert focus(ANSWER, "钢琴", 120) == ANSWER
