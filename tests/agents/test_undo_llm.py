"""Undo of what a model wrote: a bad batch's updates, deletions and inserts (and the turns kept beside them), made through the LLM
update flow by a scripted model (autogen's model-client interface), are all taken back."""

from __future__ import annotations

from datetime import datetime, timezone

from mirix_py.engine import Mirix
from mirix_py.llm.scripted import ScriptedChatCompletionClient, ScriptRequest
from mirix_py.settings import Settings

WHEN = datetime(2024, 4, 2, 18, 30, tzinfo=timezone.utc)


def _state(mx) -> dict[str, dict]:
    return {m.id: m.model_dump(exclude={"updated_at", "created_at"})
            for m in mx.store.list(user_id="ada", limit=1000, reveal=True)}


def test_undo_takes_back_a_models_updates_deletions_and_inserts(tmp_path, embedder):
    facts: dict[str, str] = {}

    def script(req: ScriptRequest):
        if req.agent == "meta_memory_manager":  # one message is kept as its episode: no episode to sum up
            return [("trigger_memory_managers", {"memory_types": ["semantic"] if "[id=m3]" in req.task_text
                                                 else ["episodic", "semantic"]})]
        if req.agent == "episodic_memory_manager":  # a summary only inserts: the turns are kept as they are
            return [("insert_episodic", {"summary": "Ada went climbing with Tom and the guide Ines", "actor": "Ada",
                                         "source_ids": ["m1", "m2"]})]
        if req.agent == "semantic_memory_manager":
            if "tom" in facts and facts["tom"] in req.task_text and facts["ines"] in req.task_text:
                return [("update_memory", {"memory_id": facts["tom"], "fields": {"summary": "Tom is a pilot"}}),
                        ("delete_memory", {"memory_id": facts["ines"]}),
                        ("insert_semantic", {"name": "Ines", "summary": "Ines quit guiding", "source_ids": ["m3"]})]
            return [("insert_semantic", {"name": "Tom", "summary": "Tom is Ada's brother and a climber",
                                         "source_ids": ["m1"]}),
                    ("insert_semantic", {"name": "Ines", "summary": "Ines is a mountain guide who climbs with Tom",
                                         "source_ids": ["m2"]})]
        return [("nothing_to_record", {"reason": "nothing new"})]

    client = ScriptedChatCompletionClient(script)
    with Mirix(settings=Settings(data_dir=tmp_path / "d"), embedder=embedder, model_client=client) as mx:
        first = mx.add([{"role": "user", "name": "Ada", "id": "m1", "content": "I went climbing with my brother Tom."},
                        {"role": "user", "name": "Ada", "id": "m2", "content": "Our guide Ines is a mountain guide."}],
                       user_id="ada", occurred_at=WHEN)
        assert first.status.value == "processed", first.error
        for memory in mx.list(user_id="ada", limit=100):
            if getattr(memory, "event_type", "") == "message" or \
                    mx.history(memory.id, user_id="ada")[0].actor.endswith("_rules"):
                continue  # a turn kept word for word, or what the rules kept of it (a model may not edit those)
            key = {"episodic": "episode"}.get(memory.memory_type.value) or memory.name.lower()
            facts[key] = memory.id
        assert set(facts) == {"episode", "tom", "ines"}
        good_state = _state(mx)

        bad = mx.add([{"role": "user", "name": "Ada", "id": "m3",
                       "content": "Tom and I argued about Ines the guide while climbing."}], user_id="ada", occurred_at=WHEN)
        assert bad.status.value == "processed", bad.error
        assert {c.operation.value for c in bad.changes} >= {"update", "delete", "insert"}  # the model did write
        assert _state(mx) != good_state

        undone = mx.undo(bad.input_ids[0], user_id="ada")

        assert _state(mx) == good_state
        assert {c.actor for c in undone} == {f"undo:{bad.input_ids[0]}"}
        assert [e.actor for e in mx.history(facts["ines"], user_id="ada")][-1] == f"undo:{bad.input_ids[0]}"


def test_retry_failed_leaves_an_undone_degraded_input_alone(tmp_path, embedder):
    def script(req: ScriptRequest):
        if req.agent == "meta_memory_manager":
            raise RuntimeError("the server is down")
        return [("nothing_to_record", {"reason": "nothing new"})]

    client = ScriptedChatCompletionClient(script)
    with Mirix(settings=Settings(data_dir=tmp_path / "d"), embedder=embedder, model_client=client) as mx:
        result = mx.add([{"role": "user", "name": "Ada", "content": "My brother Tom is a glaciologist."}],
                        user_id="ada", occurred_at=WHEN)
        assert result.status.value == "degraded" and _state(mx)
        mx.undo(result.input_ids[0], user_id="ada")
        assert _state(mx) == {}
        assert mx.retry_failed(user_id="ada") == []
        assert _state(mx) == {}
        assert mx.input_status(result.input_ids[0]).status.value == "degraded"
