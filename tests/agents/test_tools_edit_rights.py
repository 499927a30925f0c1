"""What a model may change of what memory holds: only what a model wrote, a vault entry never its value,
kind or sensitivity, and never a memory's provenance. Driven through the engine by scripted models."""

from __future__ import annotations

import re
from datetime import datetime, timezone

import pytest

from mirix_py.engine import Mirix
from mirix_py.llm.scripted import ScriptedChatCompletionClient, ScriptRequest
from mirix_py.settings import Settings

WHEN = datetime(2024, 4, 2, 18, 30, tzinfo=timezone.utc)
TOKEN = "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
PEOPLE = [("Tom", "brother", "pilot"), ("Lena", "sister", "chemist"), ("Omar", "cousin", "teacher")]


@pytest.fixture
def make_mx(tmp_path, embedder):
    engines = []

    def make(script):
        client = ScriptedChatCompletionClient(script)
        mx = Mirix(settings=Settings(data_dir=tmp_path / f"d{len(engines)}"), embedder=embedder, model_client=client)
        engines.append(mx)
        return mx, client

    yield make
    for mx in engines:
        mx.close()


def listed(req: ScriptRequest, prefix: str) -> list[str]:
    """The ids the manager was shown as editable."""
    return re.findall(rf"^\[({prefix}_[0-9a-f]+)\] ", req.system + "\n" + req.task_text, re.M)


def routed_to(memory_type: str, manager):
    def script(req: ScriptRequest):
        if req.agent == "meta_memory_manager":
            offered = req.tool_schemas[0]["parameters"]["properties"]["memory_types"]["items"]["enum"]
            return [("trigger_memory_managers", {"memory_types": [memory_type] if memory_type in offered else []})]
        if req.agent.endswith("_manager"):
            return manager(req) if req.agent.startswith(memory_type) else [("nothing_to_record", {})]
        return "ok"
    return script


def nothing(req: ScriptRequest):
    if req.agent == "meta_memory_manager":
        return [("trigger_memory_managers", {"memory_types": []})]
    return [("nothing_to_record", {})]


def test_a_model_cannot_delete_or_rewrite_the_facts_the_rules_kept_of_the_users_words(make_mx):
    """A model deleting every fact it was shown took a store's facts to none, batch by batch; one
    rewrote "Tom is a pilot" as "Tom drank coffee" and cut a procedure's steps to one."""
    mx, client = make_mx(nothing)
    for name, relation, job in PEOPLE:
        mx.add(f"My {relation} {name} is a {job}.", user_id="ada", occurred_at=WHEN)
    mx.add("How to restart the home server:\n1. Log in as admin\n2. Stop the backup job\n"
           "3. Run sudo systemctl restart homelab\n4. Check the dashboard is green", user_id="ada", occurred_at=WHEN)
    facts = {m.id: m.search_text() for m in mx.list(user_id="ada", memory_types=["semantic"])}
    (procedure,) = mx.list(user_id="ada", memory_types=["procedural"])
    assert len(facts) == len(PEOPLE)
    shown: list[str] = []

    def semantic(req: ScriptRequest):
        ids = listed(req, "sem")
        shown.extend(ids)
        return [("delete_memory", {"memory_id": i}) for i in ids[:1]] + \
               [("update_memory", {"memory_id": i, "fields": {"name": "Tom", "summary": "Tom drank coffee"}})
                for i in ids[1:]] or [("nothing_to_record", {})]

    client._script = routed_to("semantic", semantic)
    rejected = []
    for name, _, _ in PEOPLE:
        result = mx.add(f"I had lunch with {name} today.", user_id="ada", occurred_at=WHEN)
        assert result.status.value == "processed", result.error
        rejected += result.rejected
    assert shown  # the model was shown the rules' facts, and tried
    assert {m.id: m.search_text() for m in mx.list(user_id="ada", memory_types=["semantic"])
            if m.id in facts} == facts
    assert any("semantic_rules, not by a model" in r and "insert a new semantic memory" in r for r in rejected)

    client._script = routed_to("procedural", lambda req: [
        ("update_memory", {"memory_id": i, "fields": {"steps": ["Stop the backup job"]}}) for i in listed(req, "proc")]
        or [("nothing_to_record", {})])
    mx.add("To restart the home server I first stop the backup job, then:\n1. Run sudo systemctl restart homelab\n"
           "2. Check the dashboard", user_id="ada", occurred_at=WHEN)
    assert len(mx.get(procedure.id, user_id="ada").steps) == 4


def test_a_model_cannot_change_what_a_caller_imported(make_mx, tmp_path):
    mx, _ = make_mx(nothing)
    mx.add("My brother Tom is a pilot.", user_id="ada", occurred_at=WHEN)
    mx.export(tmp_path / "ada.jsonl", user_id="ada")

    def semantic(req: ScriptRequest):
        return [("update_memory", {"memory_id": i, "fields": {"summary": "Tom flew to Lisbon"}})
                for i in listed(req, "sem")] or [("nothing_to_record", {})]

    imported, _ = make_mx(routed_to("semantic", semantic))
    imported.import_(tmp_path / "ada.jsonl")
    (fact,) = imported.list(user_id="ada", memory_types=["semantic"])
    result = imported.add("Tom flew to Lisbon today.", user_id="ada", occurred_at=WHEN)
    assert imported.get(fact.id, user_id="ada").summary == fact.summary
    assert any("import, not by a model" in r for r in result.rejected), result.rejected


def test_a_model_edits_what_a_model_wrote_but_never_its_provenance(make_mx):
    """A model's own fact stays its to correct; the ids of the inputs it came from are the engine's."""
    def insert(req: ScriptRequest):
        return [("insert_semantic", {"name": "Tom", "summary": "Tom went climbing with Ada"})]

    mx, client = make_mx(routed_to("semantic", insert))
    first = mx.add([{"role": "user", "name": "Ada", "content": "Yesterday I went climbing with my brother Tom."}],
                   user_id="ada", occurred_at=WHEN)
    (fact,) = [m for m in mx.list(user_id="ada", memory_types=["semantic"]) if m.summary == "Tom went climbing with Ada"]
    rounds: list[str] = []

    def update(req: ScriptRequest):
        rounds.append(req.task_text)
        fields = {"details": "Tom booked a mountain guide"}
        if len(rounds) == 1:  # made-up provenance, dropping the input the fact came from
            fields["source_ids"] = ["D9:9", "not-an-input"]
        return [("update_memory", {"memory_id": fact.id, "fields": fields})]

    client._script = routed_to("semantic", update)
    second = mx.add([{"role": "user", "name": "Ada", "content": "Tom booked a mountain guide for June."}],
                    user_id="ada", occurred_at=WHEN)
    assert second.status.value == "processed", second.error
    assert any("cannot change ['source_ids']" in r for r in second.rejected), second.rejected
    after = mx.get(fact.id, user_id="ada")
    assert after.details == "Tom booked a mountain guide"
    assert first.input_ids[0] in after.source_ids and "D9:9" not in after.source_ids


def test_a_model_cannot_lower_a_secrets_sensitivity_or_overwrite_its_value(make_mx):
    """A vault entry downgraded to low sensitivity had its value put into every chat prompt; one
    overwritten lost the secret it held. A new value is a new entry; a caption changes only to what a
    message naming the entry says."""
    shown: list[list[str]] = []

    def vault(req: ScriptRequest):
        ids = listed(req, "kv")
        if "7781-kestrel" in req.system + req.task_text:  # the rules do not find this one: the model does
            return [("insert_knowledge_vault", {"entry_type": "password", "caption": "cabin wifi code",
                                                "secret_value": "7781-kestrel", "sensitivity": "high"})]
        if "router" not in req.system + req.task_text:
            return [("nothing_to_record", {})]
        shown.append(ids)
        return [("update_memory", {"memory_id": i, "fields": fields}) for i in ids for fields in (
            {"sensitivity": "low"}, {"secret_value": "admin#2024"}, {"entry_type": "api_key"},
            {"caption": "github token for the cabin"})] or [("nothing_to_record", {})]

    mx, client = make_mx(routed_to("knowledge_vault", vault))
    mx.add(f"My github token is {TOKEN}.", user_id="ada", occurred_at=WHEN)  # the rules vault this one
    mx.add("The wifi code at the cabin is 7781-kestrel.", user_id="ada", occurred_at=WHEN)
    before = {m.id: mx.get(m.id, user_id="ada", reveal=True)
              for m in mx.list(user_id="ada", memory_types=["knowledge_vault"])}
    assert {m.secret_value for m in before.values()} == {TOKEN, "7781-kestrel"}

    # names neither entry's value: nothing about them may change
    result = mx.add("The cabin router login is admin#2024 now, and the wifi still works.", user_id="ada",
                    occurred_at=WHEN)
    assert result.status.value == "processed", result.error
    assert shown and set(before) <= set(shown[0])
    assert {m.id: mx.get(m.id, user_id="ada", reveal=True) for m in before.values()} == before
    reasons = "\n".join(result.rejected)
    assert "sensitivity may not be lowered from high" in reasons
    assert "keeps its secret_value" in reasons and "keeps its entry_type" in reasons
    assert "its caption stays" in reasons and "knowledge_vault_rules, not by a model" in reasons
    assert "admin#2024" not in reasons

    prompts: list[str] = []

    def chat(req: ScriptRequest):
        if req.agent == "chat_agent":
            prompts.append(req.system + "\n" + "\n".join(str(m.content) for m in req.messages))
            return "Here it is."
        return nothing(req)

    client._script = chat
    mx.chat("What is my github token and the cabin wifi code?", user_id="ada", remember=False)
    assert prompts and not any(TOKEN in p or "7781-kestrel" in p for p in prompts)


def test_a_model_recaptions_its_own_secret_from_a_message_that_names_it(make_mx):
    def vault(req: ScriptRequest):
        ids = listed(req, "kv")
        if not ids:
            return [("insert_knowledge_vault", {"entry_type": "password", "caption": "cabin wifi code",
                                                "secret_value": "7781-kestrel", "sensitivity": "high"})]
        return [("update_memory", {"memory_id": ids[0], "fields": {"caption": "cabin wifi code, also the shed door",
                                                                   "sensitivity": "high"}})]

    mx, _ = make_mx(routed_to("knowledge_vault", vault))
    mx.add("The wifi code at the cabin is 7781-kestrel.", user_id="ada", occurred_at=WHEN)
    result = mx.add("The cabin wifi code 7781-kestrel also opens the shed door.", user_id="ada", occurred_at=WHEN)
    assert result.status.value == "processed", result.error
    (entry,) = mx.list(user_id="ada", memory_types=["knowledge_vault"])
    assert entry.caption == "cabin wifi code, also the shed door"
    assert mx.get(entry.id, user_id="ada", reveal=True).secret_value == "7781-kestrel"
