"""MirixSession and mirix_tools with the real OpenAI Agents SDK: an `Agent` run by `Runner` with a
scripted `Model`, over an embedded engine and over a live REST server."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from agents import Agent, Runner, set_tracing_disabled
from agents.items import ModelResponse
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

from mirix_py.boundary.inputs import normalize_add
from mirix_py.engine import Mirix
from mirix_py.errors import InvalidInput
from mirix_py.integrations.openai_agents import MirixSession, mirix_tools

set_tracing_disabled(True)  # nothing leaves the machine


def _get(item: Any, key: str) -> Any:
    return item.get(key) if isinstance(item, dict) else getattr(item, key, None)


class ScriptedModel(Model):
    """Replies from a function of the input items; records every input it was given."""

    def __init__(self, script: Any) -> None:
        self.script, self.inputs = script, []

    async def get_response(self, system_instructions, input, model_settings, tools, output_schema, handoffs,
                           tracing, **kwargs) -> ModelResponse:
        items = [{"role": "user", "content": input}] if isinstance(input, str) else list(input)
        self.inputs.append(items)
        n = len(self.inputs)
        out = self.script(items)
        if isinstance(out, tuple):  # (tool name, arguments)
            item: Any = ResponseFunctionToolCall(id=f"fc{n}", call_id=f"call{n}", type="function_call",
                                                 name=out[0], arguments=json.dumps(out[1]))
        else:
            item = ResponseOutputMessage(id=f"m{n}", type="message", role="assistant", status="completed",
                                         content=[ResponseOutputText(type="output_text", text=out, annotations=[])])
        return ModelResponse(output=[item], usage=Usage(), response_id=None)

    def stream_response(self, *args, **kwargs):
        raise NotImplementedError


def script(items: list[Any]) -> Any:
    last = items[-1]
    if _get(last, "type") == "function_call_output":
        return f"From memory: {_get(last, 'output')}"
    text = str(_get(last, "content"))
    if text.startswith("Please remember"):
        return ("add_memory", {"content": text.removeprefix("Please remember: ")})
    if text.startswith("What"):
        return ("search_memory", {"query": text, "max_results": 2})
    return "Hello!"


def run(agent, text, session):
    return asyncio.run(Runner.run(agent, text, session=session)).final_output


@pytest.fixture
def mx(tmp_path, embedder):
    engine = Mirix(tmp_path / "data", embedder=embedder)
    yield engine
    engine.close()


def test_session_keeps_items_and_turns_become_memories(mx):
    model = ScriptedModel(script)
    session = MirixSession("chat-1", user_id="ada", mx=mx)
    agent = Agent(name="assistant", instructions="Use memory.", model=model, tools=mirix_tools("ada", mx=mx))

    assert run(agent, "Hi, I'm Ada and my brother Tom is a pilot.", session) == "Hello!"
    assert run(agent, "Please remember: I am allergic to peanuts.", session).startswith("From memory: Remembered")
    answer = run(agent, "What am I allergic to?", session)
    assert answer.startswith("From memory: - [") and "allergic to peanuts" in answer
    assert "What am I allergic to" not in answer  # a run's input is remembered after its reply, not before

    # the SDK replays the whole conversation from the session: the third call saw the first turn
    assert any("brother Tom is a pilot" in str(_get(i, "content")) for i in model.inputs[-2])
    items = asyncio.run(session.get_items())
    assert [_get(i, "role") for i in items[:2]] == ["user", "assistant"]
    assert any(_get(i, "type") == "function_call" for i in items)
    assert len(asyncio.run(session.get_items(limit=2))) == 2

    # the turns became memories of the user, tagged with the session
    hits = mx.search("what does Tom do", user_id="ada")
    assert "pilot" in hits[0].text and "openai-agents:chat-1" in hits[0].memory.source_ids

    # a new process sees the same conversation (kept in the data dir); popping and clearing keep memories
    again = MirixSession("chat-1", user_id="ada", mx=mx)
    assert asyncio.run(again.get_items()) == items
    last = asyncio.run(again.pop_item())
    assert last == items[-1] and len(asyncio.run(again.get_items())) == len(items) - 1
    asyncio.run(again.clear_session())
    assert asyncio.run(again.get_items()) == [] and mx.search("pilot", user_id="ada")
    session.close()
    again.close()


def said(role: str, text: str) -> dict[str, str]:
    return {"role": role, "content": text}


def remembered(mx: Mirix, user_id: str, words: str) -> list[str]:
    """The user's episodic memories (offline: one per message) that hold `words`."""
    return [m.summary for m in mx.list(user_id=user_id, memory_types=["episodic"], limit=100) if words in m.summary]


def test_users_with_the_same_session_id_see_only_their_own_items(mx):
    ada = MirixSession("chat-1", user_id="ada", mx=mx, remember=False)
    bob = MirixSession("chat-1", user_id="bob", mx=mx, remember=False)
    asyncio.run(ada.add_items([said("user", "My password is hunter2."), said("assistant", "Noted.")]))
    assert asyncio.run(bob.get_items()) == [] and asyncio.run(bob.pop_item()) is None

    asyncio.run(bob.add_items([said("user", "Hi, I'm Bob.")]))
    assert asyncio.run(bob.get_items()) == [said("user", "Hi, I'm Bob.")]
    asyncio.run(bob.clear_session())
    assert asyncio.run(bob.get_items()) == []
    assert asyncio.run(ada.get_items()) == [said("user", "My password is hunter2."), said("assistant", "Noted.")]


def test_delete_user_deletes_their_session_items_and_leaves_no_trace(mx):
    ada = MirixSession("chat-1", user_id="ada", mx=mx)
    bob = MirixSession("chat-1", user_id="bob", mx=mx)
    asyncio.run(ada.add_items([said("user", "My password is hunter2."), said("assistant", "Noted.")]))
    asyncio.run(bob.add_items([said("user", "I like tea."), said("assistant", "Noted.")]))

    files = [f for f in Path(mx.settings.data_dir).iterdir() if "session" in f.name]
    assert files and not any(b"hunter2" in f.read_bytes() for f in files)  # encrypted at rest, as the input log
    with closing(sqlite3.connect(Path(mx.settings.data_dir) / "agent_sessions.sqlite")) as db:
        tokens = [row[0] for row in db.execute("SELECT item FROM session_items WHERE user_id = 'ada'")]
    assert [json.loads(mx.store.cipher.decrypt(t))["content"] for t in tokens] == ["My password is hunter2.", "Noted."]

    mx.delete_user("ada")
    assert asyncio.run(MirixSession("chat-1", user_id="ada", mx=mx).get_items()) == []
    assert asyncio.run(MirixSession("chat-1", user_id="bob", mx=mx).get_items()) == [said("user", "I like tea."),
                                                                                     said("assistant", "Noted.")]
    files = [f for f in Path(mx.settings.data_dir).iterdir() if "session" in f.name]  # the file and its -wal
    assert not any(t.encode() in f.read_bytes() for f in files for t in tokens)


def test_a_refused_session_opens_nothing_and_a_long_reply_is_kept_and_remembered(mx):
    with pytest.raises(InvalidInput, match="user_id"):
        MirixSession("chat-1", user_id="", mx=mx)

    session = MirixSession("pets", user_id="ada", mx=mx)
    asyncio.run(session.add_items([said("user", "I adopted a cat named Miso.")]))
    assert remembered(mx, "ada", "Miso") == []  # not yet answered
    long_reply = "Great name. " + "x" * mx.settings.max_input_chars  # over the engine's limit on one input
    asyncio.run(session.add_items([said("assistant", long_reply)]))
    assert asyncio.run(session.get_items()) == [said("user", "I adopted a cat named Miso."),
                                                said("assistant", long_reply)]
    assert len(remembered(mx, "ada", "I adopted a cat named Miso.")) == 1
    assert len(remembered(mx, "ada", "Great name.")) == 1


def test_popped_and_cleared_turns_are_not_remembered(mx):
    session = MirixSession("chat-1", user_id="ada", mx=mx)
    asyncio.run(session.add_items([said("user", "My favourite city is Quito.")]))
    assert asyncio.run(session.pop_item()) == said("user", "My favourite city is Quito.")
    asyncio.run(session.add_items([said("user", "What's the weather like?"), said("assistant", "Sunny.")]))

    asyncio.run(session.add_items([said("user", "My locker code is blue-seven.")]))
    asyncio.run(session.clear_session())
    asyncio.run(session.add_items([said("user", "Hello again."), said("assistant", "Hi.")]))
    session.close()

    assert remembered(mx, "ada", "weather") and remembered(mx, "ada", "Hello again")
    assert remembered(mx, "ada", "Quito") == [] and remembered(mx, "ada", "locker") == []


class StrictMemory:
    """Takes inputs as the engine would (`normalize_add`, its limit), failing the first `fail` adds; no
    vault, so the session keeps its items in memory."""

    def __init__(self, data_dir: Path, max_input_chars: int = 200_000, fail: int = 0, taken_first: int = 0) -> None:
        self.settings = SimpleNamespace(data_dir=data_dir, max_input_chars=max_input_chars)
        self.fail, self.taken_first, self.inputs = fail, taken_first, []

    def add(self, content, *, user_id, source_id, wait):
        record = normalize_add(content, user_id=user_id, occurred_at=None, source_id=source_id, kind="text",
                               max_chars=self.settings.max_input_chars)
        if self.fail and len(self.inputs) >= self.taken_first:
            self.fail -= 1
            raise ConnectionError("server unreachable")
        self.inputs.append([m.content for m in record.messages])


def test_turns_stay_pending_until_the_engine_takes_them(tmp_path):
    memory = StrictMemory(tmp_path, fail=1)
    session = MirixSession("chat-1", user_id="ada", mx=memory)
    asyncio.run(session.add_items([said("user", "I live in Oslo.")]))
    with pytest.raises(ConnectionError):
        asyncio.run(session.add_items([said("assistant", "Nice city.")]))
    asyncio.run(session.add_items([said("user", "And I cycle.")]))
    asyncio.run(session.add_items([said("assistant", "Good for you.")]))
    assert memory.inputs == [["I live in Oslo.", "Nice city."], ["And I cycle.", "Good for you."]]


def test_a_run_longer_than_one_input_is_remembered_in_several(tmp_path):
    memory = StrictMemory(tmp_path, max_input_chars=40)
    session = MirixSession("chat-1", user_id="ada", mx=memory)
    asyncio.run(session.add_items([said("user", "a" * 30), said("assistant", "b" * 30)]))
    assert memory.inputs == [["a" * 30], ["b" * 30]]


def test_a_turn_longer_than_one_input_is_kept_and_remembered_in_pieces(tmp_path):
    memory = StrictMemory(tmp_path, max_input_chars=40)
    session = MirixSession("chat-1", user_id="ada", mx=memory)
    question = "Where did it land?\n\nI saw it over the bay. It was silver and slow."
    answer = "It came down on the old airfield north of the harbour, by the lighthouse."
    asyncio.run(session.add_items([said("user", question), said("assistant", answer)]))
    assert asyncio.run(session.get_items()) == [said("user", question), said("assistant", answer)]
    # cut at the paragraph, then a sentence, then a word; every character in order, each input within the limit
    assert memory.inputs == [["Where did it land?\n\n"], ["I saw it over the bay. "], ["It was silver and slow."],
                             ["It came down on the old airfield north "], ["of the harbour, by the lighthouse."]]


def test_pieces_stay_pending_until_the_engine_takes_them(tmp_path):
    memory = StrictMemory(tmp_path, max_input_chars=40, fail=1, taken_first=1)
    session = MirixSession("chat-1", user_id="ada", mx=memory)
    long_reply = "Oslo is on a fjord. It has long summer days and a lot of snow in the winter."
    asyncio.run(session.add_items([said("user", "Tell me about Oslo.")]))
    with pytest.raises(ConnectionError):  # the engine took the question with the reply's first piece only
        asyncio.run(session.add_items([said("assistant", long_reply)]))
    assert memory.inputs == [["Tell me about Oslo.", "Oslo is on a fjord. "]]
    asyncio.run(session.add_items([said("user", "Thanks."), said("assistant", "You're welcome.")]))
    assert memory.inputs[1:] == [["It has long summer days and a lot of "], ["snow in the winter.", "Thanks."],
                                 ["You're welcome."]]  # the rest of the reply once, in order


def test_core_memory_tools(mx):
    tools = {t.name: t for t in mirix_tools("ada", mx=mx)}
    assert set(tools) == {"search_memory", "add_memory", "read_core_memory", "core_memory_append"}
    assert tools["core_memory_append"].params_json_schema["properties"]["label"]["enum"] == ["human", "persona"]

    def core_script(items):
        last = items[-1]
        if _get(last, "type") == "function_call_output":
            return str(_get(last, "output"))
        if _get(last, "content") == "Note that I prefer tea":
            return ("core_memory_append", {"label": "human", "text": "Prefers tea."})
        return ("read_core_memory", {})

    agent = Agent(name="a", model=ScriptedModel(core_script), tools=list(tools.values()))
    assert asyncio.run(Runner.run(agent, "Note that I prefer tea")).final_output == "[human] Prefers tea."
    assert "Prefers tea." in asyncio.run(Runner.run(agent, "What is in core memory?")).final_output
    assert mx.core_memory(user_id="ada")["human"].value == "Prefers tea."


def test_over_rest(tmp_path, embedder):
    from mirix_py.server import KeyStore, create_app
    from mirix_py.server.thread import ServerThread

    mx = Mirix(tmp_path / "data", embedder=embedder)
    keys = KeyStore(mx.engine)
    key = keys.create(["ada"]).key
    with ServerThread(create_app(mx, keys=keys)) as server:
        session = MirixSession("chat-9", user_id="ada", base_url=server.url, api_key=key)
        agent = Agent(name="assistant", model=ScriptedModel(script),
                      tools=mirix_tools("ada", base_url=server.url, api_key=key))
        run(agent, "Hi, my brother Tom is a pilot.", session)
        assert run(agent, "Please remember: I am allergic to peanuts.", session).startswith("From memory: Remembered")
        assert "allergic to peanuts" in run(agent, "What am I allergic to?", session)
        assert len(asyncio.run(session.get_items())) >= 6  # kept in memory over REST
        session.close()
    assert "pilot" in mx.search("what does Tom do", user_id="ada")[0].text
    mx.close()


def test_example_runs(tmp_path):
    repo = Path(__file__).resolve().parents[2]
    env = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "ANONYMIZED_TELEMETRY": "False",
           "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    out = subprocess.run([sys.executable, str(repo / "examples" / "openai_agents_session.py"), "--data-dir",
                          str(tmp_path / "mem")], capture_output=True, text=True, timeout=300, env=env, cwd=repo)
    assert out.returncode == 0, out.stderr
    assert "allergic to peanuts" in out.stdout.split("> What am I allergic to?")[1]


# ------------------------------------------------------------ erasing a turn (`delete(..., erase=True)`)

SECRET = "Zorblattqueen"


@pytest.fixture
def mx_on(tmp_path, embedder, backend):
    engine = Mirix(tmp_path / "data", embedder=embedder, database_url=backend)
    yield engine
    engine.close()


def session_rows(mx: Mirix, user_id: str) -> list[str]:
    """The user's session items as stored (encrypted), in order."""
    with closing(sqlite3.connect(Path(mx.settings.data_dir) / "agent_sessions.sqlite")) as db:
        return [row[0] for row in db.execute("SELECT item FROM session_items WHERE user_id = ? ORDER BY position",
                                             (user_id,))]


def session_files_holding(mx: Mirix, tokens: list[str]) -> list[str]:
    """The session file and its write-ahead log, those holding any of these stored items' bytes."""
    return [f.name for f in Path(mx.settings.data_dir).iterdir()
            if f.name.startswith("agent_sessions") and any(t.encode() in f.read_bytes() for t in tokens)]


def test_an_erased_turn_leaves_the_session_that_carried_it(mx_on):
    mx = mx_on
    session = MirixSession("chat-1", user_id="ada", mx=mx)
    asyncio.run(session.add_items([said("user", f"My childhood nickname was {SECRET}. I live in Quixhaven."),
                                   said("assistant", "Noted, I'll remember that.")]))
    asyncio.run(session.add_items([said("user", "I like tea."), said("assistant", "Tea it is.")]))
    other = MirixSession("chat-1", user_id="bob", mx=mx)  # the same words in another user's session stay
    asyncio.run(other.add_items([said("user", f"My childhood nickname was {SECRET}. I live in Quixhaven."),
                                 said("assistant", "Noted.")]))
    before = session_rows(mx, "ada")
    carried = [t for t in before if SECRET in mx.store.cipher.decrypt(t)]
    episode = next(m for m in mx.list(user_id="ada", memory_types=["episodic"]) if SECRET in m.summary)

    mx.delete(episode.id, user_id="ada", erase=True)

    # the item stays in its place with its text replaced; the reply, the other turns and bob's items stay
    items = asyncio.run(MirixSession("chat-1", user_id="ada", mx=mx).get_items())
    assert items == [said("user", "[erased]"), said("assistant", "Noted, I'll remember that."),
                     said("user", "I like tea."), said("assistant", "Tea it is.")]
    assert SECRET in json.dumps(asyncio.run(other.get_items()))
    # no stored row decrypts to the words, and the row as it was is in neither the file nor its log
    assert not any(SECRET in mx.store.cipher.decrypt(t) for t in session_rows(mx, "ada"))
    assert carried and session_files_holding(mx, carried) == []
    # what the message restated went with it (the turn had a message id: the core line cites it alone)
    assert not any("Quixhaven" in m.model_dump_json() for m in mx.list(user_id="ada"))
    assert mx.search("tea", user_id="ada") and remembered(mx, "ada", "Noted, I'll remember that.")
    session.close()
    other.close()


def test_a_session_with_an_erased_reply_still_runs(mx):
    model = ScriptedModel(lambda items: f"Your code word is {SECRET}." if len(items) == 1 else "Hello again!")
    session = MirixSession("chat-1", user_id="ada", mx=mx)
    agent = Agent(name="assistant", instructions="Be brief.", model=model)
    run(agent, "Give me a code word.", session)
    reply = next(m for m in mx.list(user_id="ada", memory_types=["episodic"]) if SECRET in m.summary)

    mx.delete(reply.id, user_id="ada", erase=True)

    # the SDK's output message keeps its id, type, role and status; its text part reads "[erased]"
    kept = asyncio.run(session.get_items())[-1]
    assert (kept["type"], kept["role"], kept["id"], kept["status"]) == ("message", "assistant", "m1", "completed")
    assert kept["content"] == [{"type": "output_text", "text": "[erased]", "annotations": []}]
    assert run(agent, "Hi again.", session) == "Hello again!"  # the SDK replays the session as it is
    assert SECRET not in json.dumps(model.inputs[-1], default=str)
    assert [_get(i, "role") for i in model.inputs[-1]] == ["user", "assistant", "user"]
    session.close()


def test_items_kept_before_message_ids_were_recorded_are_found_by_their_text(mx):
    """A session file of an earlier version (no `said_as`) and the input its adapter logged (messages
    without ids): the erased message's item is found by its text, within the user."""
    path = Path(mx.settings.data_dir) / "agent_sessions.sqlite"
    words = f"My childhood nickname was {SECRET}."
    with closing(sqlite3.connect(path)) as db, db:
        db.execute("CREATE TABLE session_items (position INTEGER PRIMARY KEY, user_id TEXT NOT NULL, "
                   "session_id TEXT NOT NULL, item TEXT NOT NULL)")
        db.executemany("INSERT INTO session_items (user_id, session_id, item) VALUES (?, ?, ?)",
                       [(user, "chat-1", mx.store.cipher.encrypt(json.dumps(item))) for user, item in [
                           ("ada", said("user", words)), ("ada", said("assistant", "Noted.")),
                           ("bob", said("user", words))]])
    mx.add([said("user", words), said("assistant", "Noted.")], user_id="ada", source_id="openai-agents:chat-1")
    episode = next(m for m in mx.list(user_id="ada", memory_types=["episodic"]) if SECRET in m.summary)

    mx.delete(episode.id, user_id="ada", erase=True)

    assert asyncio.run(MirixSession("chat-1", user_id="ada", mx=mx).get_items()) == [
        said("user", "[erased]"), said("assistant", "Noted.")]
    assert asyncio.run(MirixSession("chat-1", user_id="bob", mx=mx).get_items()) == [said("user", words)]


def test_a_session_that_fails_to_erase_leaves_the_store_unerased(mx, monkeypatch):
    from mirix_py.store.agent_sessions import SessionStore

    session = MirixSession("chat-1", user_id="ada", mx=mx)
    asyncio.run(session.add_items([said("user", f"My childhood nickname was {SECRET}."), said("assistant", "Noted.")]))
    episode = next(m for m in mx.list(user_id="ada", memory_types=["episodic"]) if SECRET in m.summary)

    def fail(self, user_id, messages):
        raise OSError("disk full")

    monkeypatch.setattr(SessionStore, "erase_said", fail)
    with pytest.raises(OSError, match="disk full"):
        mx.delete(episode.id, user_id="ada", erase=True)
    assert mx.get(episode.id, user_id="ada").summary.endswith(f"{SECRET}.")  # the store erased nothing
    logged = mx.inputs.get(next(s for s in episode.source_ids if s.startswith("in_")))
    assert logged is not None and any(SECRET in m.content for m in logged.messages)

    monkeypatch.undo()
    mx.delete(episode.id, user_id="ada", erase=True)  # asked again, it erases both
    assert SECRET not in json.dumps(asyncio.run(session.get_items()))
    session.close()


def test_erasing_one_piece_of_a_long_turn_erases_the_item_that_carried_it(tmp_path, embedder, monkeypatch):
    monkeypatch.setenv("MIRIX_MAX_INPUT_CHARS", "60")
    mx = Mirix(tmp_path / "data", embedder=embedder)
    session = MirixSession("chat-1", user_id="ada", mx=mx)
    long_turn = f"I grew up by the sea in a small town.\n\nMy childhood nickname was {SECRET}, after a song."
    asyncio.run(session.add_items([said("user", long_turn), said("assistant", "Lovely.")]))
    piece = next(m for m in mx.list(user_id="ada", memory_types=["episodic"]) if SECRET in m.summary)
    assert "grew up" not in piece.summary  # the turn was remembered in pieces

    mx.delete(piece.id, user_id="ada", erase=True)

    assert asyncio.run(session.get_items()) == [said("user", "[erased]"), said("assistant", "Lovely.")]
    assert remembered(mx, "ada", "I grew up by the sea")  # the other piece's memory stays
    session.close()
    mx.close()
