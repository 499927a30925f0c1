"""Pure LoCoMo helpers: parsing, evidence normalisation, budget filling, recall, BM25, RRF.

The fixture is a hand-made conversation in the original LoCoMo format; expected values are
computed by hand in the comments.
"""

from __future__ import annotations

import json
import math
from datetime import datetime, timedelta, timezone

import pytest

from mirix_py.eval.locomo import (
    BM25, EvidenceReport, RawTurnBaselines, bm25_rank, collect, cosine_rank, evaluate, evidence_recall,
    fill_budget, load_locomo, normalize_evidence, parse_conversation, parse_session_date, rrf_rank, score,
    session_messages, shown_within, tokenize,
)

UTC = timezone.utc

FIXTURE = {
    "sample_id": "conv-x",
    "conversation": {
        "speaker_a": "Ann",
        "speaker_b": "Bo",
        # session 2 listed before session 1: parsing must order sessions by number
        "session_2_date_time": "12:09 am on 13 September, 2023",
        "session_2": [
            {"speaker": "Bo", "dia_id": "D2:1", "text": "My dog Rex learned to fetch."},
            {"speaker": "Ann", "dia_id": "D2:2", "text": "Look at this!", "blip_caption": "a photo of a cake",
             "img_url": ["http://example.invalid/cake.jpg"], "query": "cake"},
        ],
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "Ann", "dia_id": "D1:1", "text": "I went to the pottery class yesterday."},
            {"speaker": "Bo", "dia_id": "D1:2", "text": "Nice! I painted a sunrise."},
            {"speaker": "Ann", "dia_id": "D1:3", "text": "Pottery calms me down."},
        ],
        "session_3_date_time": "10:04 am on 19 December, 2023",  # a date with no session: ignored
    },
    "qa": [
        {"question": "When did Ann go to pottery class?", "answer": "7 May 2023", "evidence": ["D1:1"], "category": 2},
        {"question": "What did Bo paint and what did Rex learn?", "answer": "a sunrise; to fetch",
         "evidence": ["D1:2; D2:1"], "category": 1},
        {"question": "What does Ann bake?", "answer": "cake", "evidence": ["D:2:2", "D"], "category": 4},
        {"question": "Would Ann like clay?", "answer": "yes", "evidence": [], "category": 3},
        {"question": "What did Bo say about Ann's cat?", "adversarial_answer": "nothing", "evidence": ["D2:1"],
         "category": 5},
    ],
}


@pytest.fixture()
def conv():
    return parse_conversation(FIXTURE)


# ------------------------------------------------------------------ dates


@pytest.mark.parametrize("raw, expected", [
    ("1:56 pm on 8 May, 2023", datetime(2023, 5, 8, 13, 56, tzinfo=UTC)),
    ("12:09 am on 13 September, 2023", datetime(2023, 9, 13, 0, 9, tzinfo=UTC)),  # 12 am is midnight
    ("12:30 pm on 1 January, 2024", datetime(2024, 1, 1, 12, 30, tzinfo=UTC)),  # 12 pm is noon
    ("10:04 am on 19 December, 2023", datetime(2023, 12, 19, 10, 4, tzinfo=UTC)),
    ("  9:00 am on 2 June 2022 ", datetime(2022, 6, 2, 9, 0, tzinfo=UTC)),  # no comma, stray spaces
])
def test_parse_session_date(raw, expected):
    parsed = parse_session_date(raw)
    assert parsed == expected
    assert parsed.tzinfo is not None and parsed.utcoffset() == timedelta(0)


def test_parse_session_date_rejects_garbage():
    with pytest.raises(ValueError):
        parse_session_date("sometime last week")


# ------------------------------------------------------------------ evidence


def test_normalize_evidence_well_formed_untouched():
    assert normalize_evidence(["D1:3", "D12:40"]) == (["D1:3", "D12:40"], [], [])


def test_normalize_evidence_split_in_one_string():
    assert normalize_evidence(["D8:6; D9:17"]) == (["D8:6", "D9:17"], ["D8:6; D9:17"], [])


def test_normalize_evidence_repairs_extra_colon_and_drops_bare_d():
    ids, malformed, dropped = normalize_evidence(["D1:18", "D", "D:11:26"])
    assert ids == ["D1:18", "D11:26"]
    assert malformed == ["D", "D:11:26"]
    assert dropped == ["D"]


def test_normalize_evidence_dedupes_and_strips():
    ids, malformed, dropped = normalize_evidence(["D2:4", " D2:4", "D02:4"])
    assert ids == ["D2:4"]
    assert malformed == [" D2:4", "D02:4"]
    assert dropped == []


# ------------------------------------------------------------------ loading


def test_parse_conversation(conv):
    assert conv.sample_id == "conv-x" and conv.user_id == "locomo:conv-x"
    assert [s.number for s in conv.sessions] == [1, 2]  # sorted; session_3 has a date but no turns
    assert conv.sessions[0].date == datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    assert [t.dia_id for t in conv.turns] == ["D1:1", "D1:2", "D1:3", "D2:1", "D2:2"]
    photo = conv.turns[-1]
    assert photo.content == "Look at this! [shares a photo: a photo of a cake]"
    assert photo.document == "Ann: Look at this! [shares a photo: a photo of a cake]"
    q = conv.questions
    assert [x.evidence for x in q] == [("D1:1",), ("D1:2", "D2:1"), ("D2:2",), (), ("D2:1",)]
    assert [x.scored for x in q] == [True, True, True, False, False]  # no evidence; category 5
    assert q[4].answer == "nothing"  # adversarial questions carry adversarial_answer


def test_load_locomo_reports_malformed(tmp_path):
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps([FIXTURE]), encoding="utf-8")
    report = EvidenceReport()
    convs = load_locomo(path, report)
    assert len(convs) == 1
    assert report.entries == 5  # 1 + 1 + 2 + 0 + 1 raw entries
    assert report.malformed == ["conv-x#1: 'D1:2; D2:1'", "conv-x#2: 'D:2:2'", "conv-x#2: 'D'"]
    assert report.dropped == ["conv-x#2: 'D'"]
    assert report.unknown == []
    assert report.no_evidence == 1


def test_session_messages(conv):
    msgs = session_messages(conv.sessions[1])
    start = datetime(2023, 9, 13, 0, 9, tzinfo=UTC)
    assert msgs == [
        {"role": "user", "name": "Bo", "id": "D2:1", "content": "My dog Rex learned to fetch.", "occurred_at": start},
        {"role": "user", "name": "Ann", "id": "D2:2", "content": "Look at this! [shares a photo: a photo of a cake]",
         "occurred_at": start + timedelta(seconds=1)},
    ]


# ------------------------------------------------------------------ budget and recall


def test_fill_budget_stops_at_first_hit_that_does_not_fit():
    hits = [("one two three", ["a"]), ("1 2 3 4 5", ["b"]), ("w x y z", ["c"]), ("tiny", ["d"])]
    filled = fill_budget(hits, 10)
    # 3 + 5 = 8 words; the 4-word hit would make 12 > 10: stop there, although "tiny" (1) would fit
    assert filled.items == [("one two three", ("a",)), ("1 2 3 4 5", ("b",))]
    assert filled.words == 8
    assert filled.source_ids == {"a", "b"}


def test_fill_budget_exact_fit_and_edges():
    hits = [("a b c", ["x"]), ("d e f g h", ["y", "z"])]
    assert fill_budget(hits, 8).words == 8 and fill_budget(hits, 8).source_ids == {"x", "y", "z"}
    assert fill_budget(hits, 0).items == []
    assert fill_budget([("far too many words here", ["x"]), ("ok", ["y"])], 3).items == []  # first too long
    assert fill_budget([], 750).words == 0
    # words are whitespace-separated tokens: punctuation and newlines do not add words
    assert fill_budget([("[2023-05-08 13:56] Ann:\nhi  there!", [])], 750).words == 5


def test_shown_within_counts_a_day_once_as_a_reader_is_shown_it():
    texts = ["[8 May 2023, 13:56] Ann: hi there", "[8 May 2023, 14:02] Bob: yes", "[9 May 2023, 09:00] Ann: ok"]
    assert shown_within(texts, 10) == 2  # 7 words, then 3 ("[14:02] Bob: yes" under the day already stated)
    assert shown_within(texts, 9) == 1 and shown_within(texts, 15) == 2 and shown_within(texts, 16) == 3
    assert shown_within(texts[::-1], 11) == 1 and shown_within(texts[::-1], 12) == 2  # each day stated by its first
    assert shown_within([], 750) == 0


def test_evidence_recall():
    assert evidence_recall(["D1:3", "D2:5"], {"D1:3", "in_abc"}) == 0.5
    assert evidence_recall(["D1:3", "D1:3"], ["D1:3"]) == 1.0  # distinct evidence ids
    assert evidence_recall(["D1:3"], []) == 0.0
    assert evidence_recall(["D1:3", "D2:1", "D3:4"], ("D3:4", "D2:1")) == pytest.approx(2 / 3)
    assert math.isnan(evidence_recall([], ["D1:3"]))


# ------------------------------------------------------------------ BM25 and fusion


def test_tokenize():
    assert tokenize("Ann's  CAT, 2 dogs!") == ["ann", "s", "cat", "2", "dogs"]
    assert tokenize("What did the cat do?", stopwords=frozenset({"what", "did", "the", "do"})) == ["cat"]


TOY = [["apple", "banana"], ["apple", "apple", "cherry"], ["cherry", "date", "elderberry", "fig"]]


def test_bm25_single_rare_term():
    # N=3, df(banana)=1: idf = ln((3-1+0.5)/(1+0.5)) = ln(5/3) = 0.510826; avgdl = 9/3 = 3
    # d0: tf=1, dl=2 -> 0.510826 * 1*2.5 / (1 + 1.5*(0.25 + 0.75*2/3)) = 0.510826 * 2.5/2.125 = 0.600971
    index = BM25(TOY)
    scores = index.scores(["banana"])
    assert scores[0] == pytest.approx(0.600971, abs=1e-6)
    assert scores[1] == scores[2] == 0.0
    assert index.rank(["banana"]) == [0]


def test_bm25_common_terms_get_the_epsilon_floor():
    # apple and cherry are in 2 of 3 docs: raw idf ln(1.5/2.5) = -0.510826 < 0, so both take
    # 0.25 x mean raw idf = 0.25 * (4*0.510826 - 2*0.510826)/6 = 0.042569 (rank_bm25's rule)
    # d1 ("apple apple cherry", dl 3): apple 0.042569*2*2.5/3.5 + cherry 0.042569*2.5/2.5 = 0.103382
    # d0 ("apple banana", dl 2):       apple 0.042569*2.5/2.125                        = 0.050081
    # d2 (dl 4):                       cherry 0.042569*2.5/(1+1.5*1.25)                = 0.037016
    index = BM25(TOY)
    scores = index.scores(["apple", "cherry"])
    assert scores == pytest.approx([0.050081, 0.103382, 0.037016], abs=1e-5)
    assert index.rank(["apple", "cherry"]) == [1, 0, 2]
    assert index.rank(["zucchini"]) == []


def test_bm25_lucene_idf_is_positive():
    # ln(1 + 1.5/2.5) = 0.470004 for apple; d1 = 0.470004 * 2*2.5/3.5 = 0.671434
    scores = BM25(TOY, idf="lucene").scores(["apple"])
    assert scores[1] == pytest.approx(0.671434, abs=1e-6)
    assert scores[2] == 0.0


def test_bm25_rank_on_raw_strings():
    docs = ["Apple, banana.", "APPLE apple cherry!", "Cherry date elderberry fig"]
    assert bm25_rank("banana?", docs) == [0]
    assert bm25_rank("Apple & cherry", docs) == [1, 0, 2]


def test_cosine_and_rrf():
    assert cosine_rank([1.0, 0.0], [[0.0, 1.0], [2.0, 0.1], [1.0, 1.0]]) == [1, 2, 0]
    # item 1 is rank 2 and 1 -> 1/62 + 1/61; item 0 is rank 1 and 3 -> 1/61 + 1/63 (less); item 2: 1/63 + 1/62
    assert rrf_rank([[0, 1, 2], [1, 2, 0]], k=60) == [1, 0, 2]


# ------------------------------------------------------------------ evaluation plumbing


def test_bm25_baseline_and_evaluate(conv):
    baselines = RawTurnBaselines([conv])  # no embedder: bm25 only
    retrieve = baselines.retriever("bm25")
    hits = retrieve(conv, conv.questions[0])
    assert hits[0] == ("Ann: I went to the pottery class yesterday.", ("D1:1",))
    with pytest.raises(ValueError):
        baselines.retriever("rrf")

    # a fake retriever with fixed hits: recall and words are fully determined
    def fake(c, q):
        return [("Ann: I went to the pottery class yesterday.", ("D1:1",)),  # 8 words
                ("Bo: My dog Rex learned to fetch.", ("D2:1",)),  # 7 words
                ("Bo: Nice! I painted a sunrise.", ("D1:2",))]  # 6 words

    report = evaluate([conv], fake, budget_words=15)  # 8 + 7 words fit, the 6-word third hit does not
    by_q = {r.index: r for r in report.results}
    assert set(by_q) == {0, 1, 2, 4}  # question 3 has no evidence
    assert by_q[0].recall == 1.0 and by_q[0].words == 15 and by_q[0].hits_kept == 2
    assert by_q[1].recall == 0.5  # D2:1 kept, D1:2 past the budget
    assert by_q[2].recall == 0.0
    overall = report.overall()
    assert overall["n"] == 3 and overall["recall"] == pytest.approx(0.5)
    assert report.by_category()[5]["recall"] == 1.0
    # one retrieval, several budgets
    got = collect([conv], fake)
    assert score(got, 7).overall()["recall"] == 0.0  # the first hit (8 words) does not fit: nothing kept
    assert score(got, 8).overall()["recall"] == pytest.approx(1 / 3)
    assert score(got, 21).overall()["recall"] == pytest.approx((1 + 1 + 0) / 3)
