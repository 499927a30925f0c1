"""The LLM update flow, driven by a scripted model through autogen's ChatCompletionClient interface."""

from __future__ import annotations

import re
from datetime import datetime, timezone

import pytest

from mirix_py.engine import Mirix
from mirix_py.tools.ops import InsertOp
from mirix_py.records import SemanticMemory
from mirix_py.llm.scripted import ScriptedChatCompletionClient, ScriptRequest

WHEN = datetime(2024, 4, 2, 18, 30, tzinfo=timezone.utc)
MESSAGES = [
    {"role": "user", "name": "Ada", "id": "m1", "content": "Yesterday I went climbing with my brother Tom."},
    {"role": "user", "name": "Ada", "id": "m2", "content": "Tom is a pilot for a regional airline."},
]


def minimal_script(route=("episodic", "semantic"), **overrides):
    """A model that routes to `route` and has each manager insert one valid memory."""
    def script(req: ScriptRequest):
        if req.agent in overrides:
            return overrides[req.agent](req)
        if req.agent == "meta_memory_manager":
            return [("trigger_memory_managers", {"memory_types": list(route)})]
        if req.agent == "episodic_memory_manager":
            if "[id=m1]" not in req.task_text:
                return [("nothing_to_record", {})]
            return [("insert_episodic", {"summary": "Ada went climbing with Tom", "actor": "Ada",
                                         "occurred_at": "2024-04-01T18:00:00+00:00", "source_ids": ["m1", "m2"]})]
        if req.agent == "semantic_memory_manager":
            return [("insert_semantic", {"name": "Tom", "summary": "Tom, Ada's brother, flies for a regional airline",
                                         "source_ids": ["m1", "m2"]})]
        if req.agent == "core_memory_manager":
            return [("core_memory_append", {"label": "human", "text": "has a brother, Tom"})]
        if req.agent == "procedural_memory_manager":
            return "Nothing to record."
        raise AssertionError(f"unexpected agent {req.agent!r}")
    return script


@pytest.fixture
def make_mx(tmp_path, embedder):
    engines = []

    def make(script, **client_kwargs):
        client = ScriptedChatCompletionClient(script, **client_kwargs)
        mx = Mirix(tmp_path / f"d{len(engines)}", embedder=embedder, model_client=client)
        engines.append(mx)
        return mx, client

    yield make
    for mx in engines:
        mx.close()


def agents_called(client):
    return [r.agent for r in client.requests]


def written_by(mx, actor, memory_type="episodic", user_id="ada"):
    """The memories of a type whose history names only this actor."""
    return [m for m in mx.list(user_id=user_id, memory_types=[memory_type])
            if {e.actor for e in mx.history(m.id, user_id=user_id)} == {actor}]


def test_every_turn_is_kept_word_for_word_before_the_model_runs(make_mx):
    seen = []

    def script(req):
        if req.agent == "meta_memory_manager":  # the turns' episodes are written before the first call
            seen.extend(e.summary for e in written_by(mx, "verbatim_turns"))
        return minimal_script()(req)

    mx, client = make_mx(script)
    mx.add(MESSAGES, user_id="ada", occurred_at=WHEN)
    assert sorted(seen) == sorted(m["content"] for m in MESSAGES)
    for message in MESSAGES:  # each found by its own words and by its id
        phrase = " ".join(message["content"].split()[-4:])
        hits = mx.search(phrase, user_id="ada", method="string", memory_types=["episodic"])
        assert any(message["id"] in h.memory.source_ids and h.memory.summary.endswith(phrase) for h in hits)


def test_the_batch_leads_every_prompt_of_a_batch_with_the_same_words(make_mx):
    """`batch_first` (the default): router and managers start from one text, the batch, so a server
    that keeps its last prompt's state reads it once; each agent's own part follows it."""
    mx, client = make_mx(minimal_script())
    mx.add(MESSAGES, user_id="ada", occurred_at=WHEN)
    assert set(agents_called(client)) == {"meta_memory_manager", "episodic_memory_manager", "semantic_memory_manager"}
    (lead,) = {r.lead for r in client.requests}
    assert lead.startswith("New inputs (2)") and all(f"[id={m['id']}]" in lead for m in MESSAGES)
    for request in client.requests:
        assert request.system.startswith(lead + "\n\n# agent: " + request.agent)
        assert "New inputs (" not in request.last_text  # the task does not repeat it
    semantic = next(r for r in client.requests if r.agent == "semantic_memory_manager")
    assert semantic.last_text.startswith("Existing semantic memories")  # the manager's own context, then the ask


def test_instructions_first_puts_the_batch_back_in_the_task(tmp_path, embedder):
    from mirix_py.settings import Settings

    client = ScriptedChatCompletionClient(minimal_script())
    with Mirix(settings=Settings(data_dir=tmp_path / "d", llm_prompt_order="instructions_first"), embedder=embedder,
               model_client=client) as mx:
        assert mx.add(MESSAGES, user_id="ada", occurred_at=WHEN).status.value == "processed"
    assert client.requests and all(r.lead == "" and r.system.startswith("# agent: ") for r in client.requests)
    assert all("[id=m1]" in r.last_text for r in client.requests)


def test_an_unknown_prompt_order_is_refused_when_the_settings_are_made(tmp_path):
    from pydantic import ValidationError

    from mirix_py.settings import Settings

    with pytest.raises(ValidationError, match="batch_first"):
        Settings(data_dir=tmp_path, llm_prompt_order="batch_last")


def test_router_triggers_only_the_managers_it_names(make_mx):
    mx, client = make_mx(minimal_script())
    result = mx.add(MESSAGES, user_id="ada", occurred_at=WHEN)
    assert result.mode == "llm" and result.status.value == "processed", result.error
    assert sorted(agents_called(client)) == ["episodic_memory_manager", "meta_memory_manager",
                                             "semantic_memory_manager"]
    assert [t.value for t in result.routed] == ["episodic", "semantic"]
    assert sorted(e.summary for e in written_by(mx, "verbatim_turns")) == sorted(m["content"] for m in MESSAGES)
    (episode,) = written_by(mx, "episodic_memory_manager")  # the model's summary cites the turns
    assert episode.source_ids == ["m1", "m2", result.input_ids[0]] and episode.actor == "Ada"
    assert episode.occurred_at == datetime(2024, 4, 1, 18, 0, tzinfo=timezone.utc)
    (fact,) = written_by(mx, "semantic_memory_manager", "semantic")
    assert set(fact.source_ids) == {"m1", "m2", result.input_ids[0]}
    assert written_by(mx, "semantic_rules", "semantic")  # the rules wrote theirs before the model ran
    assert mx.list(user_id="ada", memory_types=["procedural"]) == []


def test_managers_run_concurrently(make_mx):
    mx, client = make_mx(minimal_script(route=("episodic", "semantic", "core")), delay_s=0.3)
    result = mx.add(MESSAGES, user_id="ada", occurred_at=WHEN)
    assert result.status.value == "processed", result.error
    spans = {agent: (start, end) for agent, start, end in client.intervals}
    managers = [spans[a] for a in ("episodic_memory_manager", "semantic_memory_manager", "core_memory_manager")]
    latest_start = max(start for start, _ in managers)
    earliest_end = min(end for _, end in managers)
    assert latest_start < earliest_end, "manager calls did not overlap"
    assert spans["meta_memory_manager"][1] <= min(start for start, _ in managers)
    assert result.usage.llm_calls == 4 and result.usage.sequential_rounds == 2
    assert result.usage.prompt_tokens > 0 and result.usage.tokens_estimated


def _actors(mx, memory):
    return {e.actor for e in mx.history(memory.id, user_id="ada")}


def test_one_failing_manager_leaves_the_rules_memories_and_is_retried(make_mx):
    broken = {"semantic_memory_manager": lambda req: [("insert_semantic", {"name": "Tom"})]}  # summary missing
    mx, client = make_mx(minimal_script(**broken))
    result = mx.add(MESSAGES, user_id="ada", occurred_at=WHEN)
    assert result.status.value == "degraded"
    assert "semantic_memory_manager" in result.error and "summary" in result.error
    assert len(written_by(mx, "episodic_memory_manager")) == 1  # the model's own episode stays
    rules = mx.list(user_id="ada", memory_types=["semantic"])
    assert rules and all(_actors(mx, m) == {"semantic_rules"} for m in rules)  # written before the model ran
    assert agents_called(client).count("semantic_memory_manager") == 2  # one correction round
    record = mx.input_status(result.input_ids[0])
    assert record.status.value == "degraded" and "summary" in record.error

    client._script = minimal_script()
    (retried,) = mx.retry_failed(user_id="ada")
    assert retried.status.value == "processed", retried.error
    (fact,) = written_by(mx, "semantic_memory_manager", "semantic")
    assert fact.summary == "Tom, Ada's brother, flies for a regional airline"
    assert written_by(mx, "semantic_rules", "semantic") == rules  # the rules' facts stay, not written twice
    assert len(written_by(mx, "episodic_memory_manager")) == 1  # not written twice
    assert len(written_by(mx, "verbatim_turns")) == len(MESSAGES)
    assert mx.input_status(result.input_ids[0]).status.value == "processed"


def test_a_retry_removes_what_an_older_version_stood_in_with(make_mx):
    """Stores written before the rules ran first hold the rules' stand-ins under fallback actors."""
    mx, client = make_mx(minimal_script(semantic_memory_manager=lambda req: [("insert_semantic", {"name": "Tom"})]))
    result = mx.add(MESSAGES, user_id="ada", occurred_at=WHEN)
    (input_id,) = result.input_ids
    legacy = "semantic_memory_manager (offline fallback)"
    mx.store.apply([InsertOp(memory=SemanticMemory(user_id="ada", name="Tom", summary="Tom flies planes",
                                                    source_ids=[input_id]))],
                    user_id="ada", actor=legacy, input_id=input_id)
    client._script = minimal_script()
    (retried,) = mx.retry_failed(user_id="ada")
    assert retried.status.value == "processed", retried.error
    assert not written_by(mx, legacy, "semantic")
    assert [m.summary for m in mx.list(user_id="ada", memory_types=["semantic"])
            if m.summary == "Tom flies planes"] == []


def _text_reply(text):
    return {"semantic_memory_manager": lambda req: text}


@pytest.mark.parametrize("text", [
    '{"name": "insert_semantic", "arguments": {"name": "Tom", "summary": "Tom climbs with Ada"}}',
    '<tool_call>\n{"name": "insert_semantic", "arguments": {"name": "Tom", "summary": "Tom climbs with Ada",}}\n</tool_call>',
    '```json\n[{"name": "insert_semantic", "arguments": "{\\"name\\": \\"Tom\\", \\"summary\\": \\"Tom climbs with Ada\\"}"}]\n```',
    '{"name": "insert_semantic", "arguments": {"name": "Tom", "summary": "Tom climbs with Ada"',
])
def test_tool_calls_written_as_text_are_parsed(make_mx, text):
    mx, client = make_mx(minimal_script(**_text_reply(text)))
    result = mx.add(MESSAGES, user_id="ada", occurred_at=WHEN)
    assert result.status.value == "processed", result.error
    (fact,) = written_by(mx, "semantic_memory_manager", "semantic")
    assert fact.summary == "Tom climbs with Ada"
    assert agents_called(client).count("semantic_memory_manager") == 1


def test_unknown_id_gets_one_correction_round(make_mx):
    replies = iter([
        [("update_memory", {"memory_id": "sem_" + "0" * 32, "fields": {"details": "x"}})],
        [("insert_semantic", {"name": "Tom", "summary": "Tom climbs with Ada"})],
    ])
    seen = []

    def semantic(req):
        seen.append(req.task_text)
        return next(replies)

    mx, client = make_mx(minimal_script(semantic_memory_manager=semantic))
    result = mx.add(MESSAGES, user_id="ada", occurred_at=WHEN)
    assert result.status.value == "processed", result.error
    assert len(seen) == 2
    assert len(written_by(mx, "semantic_memory_manager", "semantic")) == 1


def test_invented_memory_type_is_corrected(make_mx):
    replies = iter([[("trigger_memory_managers", {"memory_types": ["episodic", "emotional"]})],
                    [("trigger_memory_managers", {"memory_types": ["episodic", "semantic"]})]])
    mx, client = make_mx(minimal_script(meta_memory_manager=lambda req: next(replies)))
    result = mx.add(MESSAGES, user_id="ada", occurred_at=WHEN)
    assert result.status.value == "processed", result.error
    assert [t.value for t in result.routed] == ["episodic", "semantic"]
    corrections = [r.task_text for r in client.requests if r.agent == "meta_memory_manager"]
    assert len(corrections) == 2 and "emotional" in corrections[1]


@pytest.mark.parametrize("bad_reply", [
    lambda req: '{"name": "insert_semantic", "arguments": {"name": "Tom", "summary": }}',  # malformed both times
    lambda req: [("insert_semantic", {"name": "Tom", "summary": "ok"}), ("insert_semantic", {"name": ""})],
    lambda req: [("delete_memory", {"memory_id": "epi_" + "1" * 32})],  # unknown id
    lambda req: [("insert_semantic", {"name": "Tom", "summary": "x", "source_ids": ["not-in-batch"]})],
    lambda req: [("drop_all_tables", {})],  # a tool that does not exist
])
def test_persistent_bad_output_leaves_no_model_write_and_the_rules_memories(make_mx, bad_reply):
    mx, client = make_mx(minimal_script(semantic_memory_manager=bad_reply))
    result = mx.add(MESSAGES, user_id="ada", occurred_at=WHEN)
    assert result.status.value == "degraded" and "semantic_memory_manager" in result.error
    semantic = mx.list(user_id="ada", memory_types=["semantic"])
    assert semantic and all(_actors(mx, m) == {"semantic_rules"} for m in semantic)
    assert agents_called(client).count("semantic_memory_manager") == 2
    assert mx.input_status(result.input_ids[0]).error == result.error


def test_router_failing_twice_leaves_the_rules_memories(make_mx):
    mx, client = make_mx(minimal_script(meta_memory_manager=lambda req: "I think episodic maybe?"))
    result = mx.add(MESSAGES, user_id="ada", occurred_at=WHEN)
    assert result.status.value == "degraded" and "meta_memory_manager" in result.error
    assert agents_called(client) == ["meta_memory_manager"] * 2  # no manager ran on a failed routing
    episodes = mx.list(user_id="ada", memory_types=["episodic"])
    assert sorted(e.summary for e in episodes) == sorted(m["content"] for m in MESSAGES)  # every message kept
    assert all(_actors(mx, m) <= {"verbatim_turns", "semantic_rules", "core_rules"} for m in mx.list(user_id="ada"))
    assert [t.value for t in result.routed] == ["episodic", "semantic"]  # what the rules routed to


def test_models_without_tool_calling_answer_in_json(make_mx):
    def script(req):
        assert req.tool_names == []  # tools are described in the prompt instead
        assert "tool_calls" in req.system
        if req.agent == "meta_memory_manager":
            return '{"tool_calls": [{"name": "trigger_memory_managers", "arguments": {"memory_types": ["semantic"]}}]}'
        return '{"tool_calls": [{"name": "insert_semantic", "arguments": {"name": "Tom", "summary": "climbs with Ada"}}]}'

    mx, client = make_mx(script, function_calling=False)
    result = mx.add(MESSAGES, user_id="ada", occurred_at=WHEN)
    assert result.status.value == "processed", result.error
    assert [m.summary for m in written_by(mx, "semantic_memory_manager", "semantic")] == ["climbs with Ada"]


def test_secrets_are_redacted_before_any_model_sees_them(make_mx):
    mx, client = make_mx(minimal_script(route=("episodic",)))
    mx.add([{"role": "user", "content": "my bank password is Zebra-991-Qx"}], user_id="ada", occurred_at=WHEN)
    assert all("Zebra-991-Qx" not in r.task_text for r in client.requests)
    (vault,) = mx.list(user_id="ada", memory_types=["knowledge_vault"])
    assert mx.get(vault.id, user_id="ada", reveal=True).secret_value == "Zebra-991-Qx"


def test_existing_memories_are_offered_for_update(make_mx):
    """What a model wrote it may update; what the rules kept of the user's words it may not."""
    def semantic(req):
        ids = re.findall(r"\[(sem_[0-9a-f]{32})\]", req.task_text)
        return [("update_memory", {"memory_id": i, "fields": {"details": "flies ATR 72s"}}) for i in ids]

    mx, client = make_mx(minimal_script(route=("episodic", "semantic")))
    first = mx.add(MESSAGES, user_id="ada", occurred_at=WHEN)
    (fact,) = written_by(mx, "semantic_memory_manager", "semantic")  # the model's fact about Tom
    (rules_fact,) = written_by(mx, "semantic_rules", "semantic")  # the rules' fact about Tom
    client._script = minimal_script(route=("semantic",), semantic_memory_manager=semantic)
    second = mx.add([{"role": "user", "content": "Tom the pilot flies ATR 72s now."}], user_id="ada")
    assert second.status.value == "processed", second.error
    fact = mx.get(fact.id, user_id="ada")
    assert fact.details == "flies ATR 72s"
    events = mx.history(fact.id, user_id="ada")
    assert (events[0].operation.value, events[0].actor) == ("insert", "semantic_memory_manager")
    assert ("update", "semantic_memory_manager") in [(e.operation.value, e.actor) for e in events]
    assert second.input_ids[0] in fact.source_ids and first.input_ids[0] in fact.source_ids
    assert mx.get(rules_fact.id, user_id="ada").details != "flies ATR 72s"
    assert any(f"{rules_fact.id} was written by semantic_rules" in r for r in second.rejected), second.rejected


def test_wait_false_batches_queued_inputs(make_mx):
    mx, client = make_mx(minimal_script(route=("episodic",)))
    results = [mx.add(f"note number {i}", user_id="ada", wait=False) for i in range(3)]
    assert all(r.status.value == "pending" for r in results)
    mx.flush(timeout=60)
    statuses = {mx.input_status(r.input_ids[0]).status.value for r in results}
    assert statuses == {"processed"}
    assert agents_called(client).count("meta_memory_manager") == 1  # one batch for the three inputs
    routing_prompt = next(r.task_text for r in client.requests if r.agent == "meta_memory_manager")
    assert all(f"note number {i}" in routing_prompt for i in range(3))


def test_stats_report_llm_usage(make_mx):
    mx, client = make_mx(minimal_script())
    mx.add(MESSAGES, user_id="ada", occurred_at=WHEN)
    usage = mx.stats(user_id="ada")["llm_usage"]["update"]
    assert usage["runs"] == 1 and usage["llm_calls"] == 3 and usage["prompt_tokens"] > 0
    assert mx.describe()["mode"] == "llm"


# ---------------------------------------------------------------- screenshot batches and vision models


def _screenshot_batch(mx, n=2):
    """n screenshot inputs logged as the ingestor logs them, with a 1280x720 frame each."""
    from PIL import Image

    from mirix_py.boundary.inputs import normalize_add

    records = [normalize_add(f"Calendar\n15:0{i} Dentist appointment\nMeeting notes page {i}", user_id="ada",
                             occurred_at=WHEN, source_id=f"frame{i}.png", kind="screenshot", max_chars=10_000,
                             metadata={"app": "Calendar", "window_title": "June"}) for i in range(n)]
    mx.inputs.append(records, claimed_by=mx.worker_id)
    images = {r.id: Image.new("RGB", (1280, 720), "white") for r in records}
    return records, images


def screen_script(**overrides):
    semantic = lambda req: [("insert_semantic", {"name": "Dentist", "summary": "Dentist appointment at 15:00"})]  # noqa: E731
    return minimal_script(**{"semantic_memory_manager": semantic, **overrides})


def _parts(req):
    """(texts, images) of the last user message of a request."""
    from autogen_core import Image as AGImage

    content = req.messages[-1].content
    content = [content] if isinstance(content, str) else content
    return [p for p in content if isinstance(p, str)], [p for p in content if isinstance(p, AGImage)]


@pytest.mark.parametrize("vision", [True, False])
def test_screenshot_frames_go_to_the_router_and_managers_only_for_vision_models(make_mx, vision):
    mx, client = make_mx(screen_script(), vision=vision)
    records, images = _screenshot_batch(mx)
    result = mx.runner.process(records, images=images)
    assert result.status.value == "processed", result.error
    first = {}
    for req in client.requests:
        first.setdefault(req.agent, req)
    assert set(first) == {"meta_memory_manager", "episodic_memory_manager", "semantic_memory_manager"}
    for agent, req in first.items():
        texts, frames = _parts(req)
        joined = "\n".join([req.lead, *texts])  # without vision the batch leads the system prompt
        assert vision != bool(req.lead), agent
        assert "15:00 Dentist appointment" in joined and "15:01 Dentist appointment" in joined, agent
        assert "[Calendar — June]" in joined
        if vision:
            assert [f.image.size for f in frames] == [(1280, 720), (1280, 720)], agent
            # each frame right after its input's line
            kinds = ["image" if not isinstance(p, str) else "text" for p in req.messages[-1].content]
            assert kinds[:4] == ["text", "image", "text", "image"], agent
            assert texts[0].endswith("Meeting notes page 0") and texts[1].endswith("Meeting notes page 1")
        else:
            assert frames == [] and len(texts) == 1
    if vision:
        assert _parts(first["semantic_memory_manager"])[0][0].startswith("Existing semantic memories")  # stable part first


def test_a_vision_batch_keeps_the_correction_round(make_mx):
    replies = iter([
        '{"tool_calls": [{"name": "insert_semantic", "arguments": {"name": "Dentist", "summary": }}]}',  # malformed
        [("insert_semantic", {"name": "Dentist", "summary": "Dentist appointment at 15:00"})],
    ])
    mx, client = make_mx(screen_script(semantic_memory_manager=lambda req: next(replies)), vision=True)
    records, images = _screenshot_batch(mx)
    result = mx.runner.process(records, images=images)
    assert result.status.value == "processed", result.error
    semantic = [r for r in client.requests if r.agent == "semantic_memory_manager"]
    assert len(semantic) == 2
    assert len(_parts(semantic[0])[1]) == 2  # the frames went with the first round
    correction_texts, correction_images = _parts(semantic[1])
    assert correction_images == [] and "could not read your tool calls" in correction_texts[0]
    assert [m.name for m in mx.list(user_id="ada", memory_types=["semantic"])] == ["Dentist"]


def test_a_vision_batch_without_frames_sends_text(make_mx):
    """A batch resumed after a crash has no frames (they are never stored): OCR text alone."""
    mx, client = make_mx(screen_script(), vision=True)
    records, _ = _screenshot_batch(mx)
    assert mx.runner.process(records).status.value == "processed"
    assert all(_parts(r)[1] == [] for r in client.requests)


def test_a_long_batch_sends_at_most_max_images_evenly_spaced(make_mx):
    from mirix_py.agents.offline.managers import prepare_batch
    from mirix_py.agents.update_flow import MAX_IMAGES, pick_images

    mx, _ = make_mx(minimal_script())
    records, images = _screenshot_batch(mx, n=MAX_IMAGES * 2 + 1)
    picked = pick_images(prepare_batch("ada", records), images)
    ids = [r.id for r in records]
    assert len(picked) == MAX_IMAGES and ids[0] in picked and ids[-1] in picked


def test_the_rules_extract_typed_operations_and_write_nothing(tmp_path, embedder):
    """The offline rules as an `Extractor`: routed types and their operations, nothing stored."""
    import asyncio

    from mirix_py.boundary.inputs import normalize_add
    from mirix_py.llm.meter import Meter
    from mirix_py.tools.ops import InsertOp
    from mirix_py.records import MemoryType

    with Mirix(tmp_path / "d", embedder=embedder) as mx:
        record = normalize_add(MESSAGES, user_id="ada", occurred_at=WHEN, source_id=None, kind="text",
                               max_chars=10_000)
        batch = mx.offline_flow.prepare("ada", [record])
        extraction = asyncio.run(mx.offline_flow.extract(batch, related=[], meter=Meter()))
        assert MemoryType.episodic in extraction.routed and not extraction.failed
        turns = [op.memory.summary for op in extraction.ops[MemoryType.episodic] if isinstance(op, InsertOp)]
        assert sorted(turns) == sorted(m["content"] for m in MESSAGES)
        only = asyncio.run(mx.offline_flow.extract(batch, related=[], meter=Meter(), types=[MemoryType.semantic]))
        assert set(only.routed) <= {MemoryType.semantic}
        assert mx.list(user_id="ada") == []  # extraction writes nothing


def test_a_batch_runs_at_most_max_managers_core_left_out_first(make_mx):
    """The router picks four types; three managers run, the batch's steps among them, core left out."""
    steps = {"role": "user", "name": "Ada", "id": "m3",
             "content": "To start the boat:\n1. open the fuel valve\n2. pull the cord twice"}
    mx, client = make_mx(minimal_script(route=("core", "episodic", "semantic", "procedural"),
                                        procedural_memory_manager=lambda req: [("nothing_to_record", {})]))
    result = mx.add([*MESSAGES, steps], user_id="ada", occurred_at=WHEN)
    assert result.status.value == "processed", result.error
    assert sorted(agents_called(client)) == ["episodic_memory_manager", "meta_memory_manager",
                                             "procedural_memory_manager", "semantic_memory_manager"]
    assert [t.value for t in result.routed] == ["episodic", "semantic", "procedural"]
    assert [t.value for t in result.left_out] == ["core"]  # said, not hidden


def test_max_managers_is_a_setting(tmp_path, embedder):
    from mirix_py.settings import Settings

    mx = Mirix(settings=Settings(data_dir=tmp_path / "d", llm_max_managers=1), embedder=embedder,
               model_client=ScriptedChatCompletionClient(minimal_script(route=("core", "episodic", "semantic"))))
    with mx:
        result = mx.add(MESSAGES, user_id="ada", occurred_at=WHEN)
        assert [t.value for t in result.routed] == ["episodic"]
        assert sorted(t.value for t in result.left_out) == ["core", "semantic"]
    with pytest.raises(ValueError):
        Settings(data_dir=tmp_path / "e", llm_max_managers=0)


def test_a_models_episode_is_dated_on_the_speakers_clock(make_mx):
    """The model is shown the batch's time as the speaker's clock read it, and what it writes at that time
    states the speaker's day."""
    def summary(req: ScriptRequest):
        if "[id=m1]" not in req.task_text:
            return [("nothing_to_record", {})]
        return [("insert_episodic", {"summary": "Ada went climbing with Tom", "actor": "Ada", "source_ids": ["m1"]})]

    mx, client = make_mx(minimal_script(route=("episodic",), episodic_memory_manager=summary))
    mx.add(MESSAGES, user_id="ada", occurred_at="2024-04-02T23:30:00-07:00")  # 06:30 UTC on 3 April
    shown = next(r.task_text for r in client.requests if r.agent == "episodic_memory_manager")
    assert "[id=m1] 2024-04-02T23:30-07:00 Ada" in shown
    (written,) = [m for m in mx.list(user_id="ada", memory_types=["episodic"]) if m.event_type == "summary"]
    assert written.occurred_at == datetime(2024, 4, 3, 6, 30, tzinfo=timezone.utc)
    assert written.search_text() == "[2 April 2024, 23:30] Ada: Ada went climbing with Tom"
