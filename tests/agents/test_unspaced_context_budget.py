"""A long Chinese or Thai memory enters `/context` and the chat prompt cut to a long memory's share of
the words (`FOCUS_WORDS`), each letter or cluster a word, as a long English one does."""

from __future__ import annotations

import pytest

from mirix_py.agents.chat import prompt_lines
from mirix_py.engine import Mirix
from mirix_py.integrations.context import retrieve_context
from mirix_py.records import ResourceMemory
from mirix_py.text.passages import FOCUS_WORDS, GAP
from mirix_py.text.words import word_count
from mirix_py.tools.ops import InsertOp

SENTENCE = "今天我们在会议室里讨论了下个季度的预算安排和人员招聘计划。"
ANSWER = "我的女儿每个星期六在上海的音乐学校学习钢琴。"
NOTES = "\n".join([f"会议记录 {SENTENCE}", *[SENTENCE * 3 for _ in range(12)], ANSWER,
                   *[SENTENCE * 3 for _ in range(12)]])  # some 2,300 letters
QUESTION = "我女儿在哪里学习钢琴？"


@pytest.fixture
def mx(tmp_path):
    engine = Mirix(tmp_path / "data", embedder=None)  # full text only
    engine.store.apply([InsertOp(memory=ResourceMemory(user_id="mei", title="会议记录", content=NOTES))],
                       user_id="mei", actor="test")
    yield engine
    engine.close()


def _cut(text: str) -> bool:
    """Within a long memory's share, the gap marks aside, and holding the line that answers."""
    return word_count(text.replace(GAP, "")) <= FOCUS_WORDS and len(text) < len(NOTES) / 5 and ANSWER in text


def test_context_cuts_a_long_chinese_memory_to_its_share(mx):
    context = retrieve_context(mx, "mei", QUESTION)
    [hit] = [h for h in context.hits if isinstance(h.memory, ResourceMemory)]
    assert hit.memory.content == NOTES  # the record is whole
    assert _cut(hit.text)
    assert len(context.prompt) < len(NOTES) / 4


def test_the_chat_prompt_cuts_a_long_chinese_memory_to_its_share(mx):
    hits = mx.search(QUESTION, user_id="mei")
    [line] = [line for line in prompt_lines(hits, mx.store, QUESTION) if "会议记录" in line]
    assert _cut(line)
