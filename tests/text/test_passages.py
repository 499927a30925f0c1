"""Query-focused passages: a long memory enters a prompt as its first line and the lines about the question."""

from __future__ import annotations

from mirix_py.text.passages import GAP, focus, query_stems, text_stems
from mirix_py.text.words import word_count

FILLER = "the team and the notes should be shared with the folder before the weekly report today"
SCREEN = "\n".join([
    "[2024-06-03 10:29] user: Viewed LibreOffice Writer — Aurora overview.odt",
    *[f"{FILLER} {i}" for i in range(12)],
    "Project Aurora is a billing service for clinics.",
    "Launch date: Friday 14 June. Owner: Omar Berg.",
    *[f"{FILLER} {i}" for i in range(12, 20)],
    "Page 1 of 3 247 words English (USA)",
])


def test_short_text_is_returned_unchanged():
    text = "[2024-06-03 10:29] Ada: we moved the launch to Friday"
    assert focus(text, "when is the launch?", 120) == text


def test_long_text_keeps_the_head_and_the_lines_about_the_query():
    out = focus(SCREEN, "When does Project Aurora launch?", 60)
    lines = out.split("\n")
    assert lines[0] == SCREEN.split("\n")[0]
    assert "Launch date: Friday 14 June. Owner: Omar Berg." in lines
    assert "Project Aurora is a billing service for clinics." in lines
    assert len(out.split()) <= 60 + 2  # the gap marks are words too
    assert GAP in lines and "Page 1 of 3 247 words English (USA)" not in lines


def test_kept_lines_stay_in_their_order_with_gaps_between_runs():
    out = focus(SCREEN, "billing service launch date", 60).split("\n")
    body = [ln for ln in out[1:] if ln != GAP]
    original = SCREEN.split("\n")
    positions = [original.index(ln) for ln in body]
    assert positions == sorted(positions)
    assert out[1] == GAP  # the filler before the matching lines was left out
    assert out[-1] == GAP


def test_no_matching_line_falls_back_to_the_opening():
    out = focus(SCREEN, "dermatologist appointment", 40).split("\n")
    assert out[0] == SCREEN.split("\n")[0]
    assert out[1] == f"{FILLER} 0" and out[-1] == GAP


def test_one_long_line_is_cut_by_sentences():
    text = "Notes. " + " ".join(f"Sentence number {i} talks about the garden and the weather." for i in range(30)) + \
        " The locker code for the gym is kept with Ravi."
    out = focus(text, "who keeps the gym locker code?", 40)
    assert "The locker code for the gym is kept with Ravi." in out
    assert len(out.split()) < len(text.split()) / 4


def test_query_stems_drop_stopwords_and_plural_endings():
    assert query_stems("When does the launch happen? Launches, launched!") == {"launch", "happen"}


def test_text_stems_meet_the_query_stems():
    line = "The rocket Launches at noon; it launched twice before."
    assert text_stems(line) >= {"rocket", "launch", "noon", "twice"}
    assert query_stems("When does the launch happen?") & text_stems(line) == {"launch"}


def _long(filler: str, hit: str) -> str:
    """60 lines of six phrases each, as Thai or Chinese is written (no spaces inside a phrase), the
    30th holding `hit`."""
    lines = [f"[2024-06-03 10:29] {filler} {filler}", *[" ".join([filler] * 6) for _ in range(2, 61)]]
    lines[29] = f"{filler} {filler} {hit} {filler} {filler} {filler}"
    return "\n".join(lines)


THAI = _long("วันนี้อากาศดีมากและฉันอยู่บ้านทั้งวัน", "ฉันไปตลาดกับแม่เมื่อวานนี้")  # the weather; I went to the market
CHINESE = _long("今天天气很好我一直待在家里", "我的女儿在上海学习钢琴")  # the weather; my daughter learns the piano


def test_the_line_holding_a_word_inside_a_thai_or_chinese_run_is_kept():
    """A query word inside a run of letters written without spaces is kept by its line, as full text
    found it (by its cluster or letter pairs), not the opening lines in its place."""
    for text, word in ((THAI, "ตลาด"), (THAI, "ไปตลาด"), (CHINESE, "钢琴"), (CHINESE, "学习钢琴"), (CHINESE, "琴")):
        line = text.split("\n")[29]
        room = 2 * word_count(line)  # room for two lines, each letter or cluster a word
        assert line in focus(text, word, room).split("\n"), word


def test_a_thai_or_chinese_line_shares_the_query_words_it_holds():
    assert query_stems("ตลาด") <= text_stems("ฉันไปตลาดกับแม่เมื่อวานนี้")
    assert query_stems("钢琴") <= text_stems("我的女儿在上海学习钢琴。")
    assert not query_stems("แม่") & text_stems("แมวนอนบนเตียง")  # mother, cat: a tone mark apart
    assert not query_stems("钢琴") & text_stems("我买了一支新钢笔。他在公园里弹琴。")  # each letter, not the word
