"""What a weak or misbehaving model can do to the LLM flows, and what the engine does about it:
bounded calls, protocol features a server refuses, grounding, stand-ins by the rules, chat that
always answers. Driven by scripted models through autogen's model-client interface."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest
from autogen_core.models import CreateResult, RequestUsage

from mirix_py.llm.scripted import ScriptRequest

WHEN = datetime(2024, 4, 2, 18, 30, tzinfo=timezone.utc)
MESSAGES = [
    {"role": "user", "name": "Ada", "id": "m1", "content": "Yesterday I went climbing with my brother Tom."},
    {"role": "user", "name": "Ada", "id": "m2", "content": "The wifi code at the cabin is 7781-kestrel."},
]


class ServerRefused(Exception):
    """What the openai client raises for a 4xx/5xx answer: an exception with `status_code`."""

    def __init__(self, status_code: int, message: str) -> None:
        super().__init__(message)
        self.status_code = status_code


def good(req: ScriptRequest):
    """A model that does everything right."""
    if req.agent == "meta_memory_manager":
        return [("trigger_memory_managers", {"memory_types": ["episodic"]})]
    if req.agent == "episodic_memory_manager":
        return [("insert_episodic", {"summary": "Ada went climbing with Tom", "actor": "Ada",
                                     "source_ids": ["m1", "m2"]})]
    if req.agent == "knowledge_vault_manager":
        return [("nothing_to_record", {"reason": "nothing new"})]
    if req.agent == "topic_extractor":
        return '{"topics": ["climbing", "Tom"], "start": null, "end": null}'
    if req.agent == "chat_agent":
        return "You went climbing with Tom."
    return [("nothing_to_record", {})]


def model_episodes(mx):
    """The episodes the model wrote (summaries), not the turns kept word for word."""
    return [m for m in mx.list(user_id="ada", memory_types=["episodic"]) if m.event_type == "summary"]


def turn_episode(mx, message_id):
    return next(m for m in mx.list(user_id="ada", memory_types=["episodic"])
                if m.event_type == "message" and message_id in m.source_ids)


def _every_message_kept(mx):
    memories = mx.list(user_id="ada", limit=1000)
    cited = {s for m in memories for s in m.source_ids}
    assert {"m1", "m2"} <= cited
    for message in MESSAGES:  # findable by what was said
        hits = mx.search(message["content"].split()[1] + " " + message["content"].split()[-1], user_id="ada")
        assert any(message["id"] in h.memory.source_ids for h in hits), message["id"]


def test_every_call_carries_its_bound_and_the_router_is_forced(scripted_mx):
    mx, client = scripted_mx(good)
    result = mx.add(MESSAGES, user_id="ada", occurred_at=WHEN)
    assert result.status.value == "processed", result.error
    router = next(r for r in client.requests if r.agent == "meta_memory_manager")
    manager = next(r for r in client.requests if r.agent == "episodic_memory_manager")
    assert router.tool_choice == "trigger_memory_managers" and manager.tool_choice == "required"
    assert router.extra_create_args["max_tokens"] == 80 and manager.extra_create_args["max_tokens"] == 200
    assert all(r.extra_create_args["timeout"] == 120.0 for r in client.requests)


def test_a_runaway_reply_is_a_failed_round_with_its_reason(scripted_mx):
    def runaway(req):
        if req.agent == "episodic_memory_manager":
            return CreateResult(finish_reason="length", content='{"tool_calls": [{"name": "insert_episodic", "ar',
                                usage=RequestUsage(prompt_tokens=10, completion_tokens=400), cached=False)
        return good(req)

    mx, client = scripted_mx(runaway)
    result = mx.add(MESSAGES, user_id="ada", occurred_at=WHEN)
    assert result.status.value == "degraded"
    assert "bound of 200 completion tokens" in result.error
    assert [r.agent for r in client.requests].count("episodic_memory_manager") == 2  # one correction round
    _every_message_kept(mx)


def test_a_call_that_hangs_times_out_and_the_batch_degrades(scripted_mx):
    # every call takes 1.5 s, past the 0.3 s bound (+1 s of slack for the client's own timeout)
    mx, client = scripted_mx(good, timeout_s=0.3, delay_s=1.5)
    result = mx.add(MESSAGES, user_id="ada", occurred_at=WHEN)
    assert result.status.value == "degraded" and "timed out after 0.3 s" in result.error
    assert [r.agent for r in client.requests] == ["meta_memory_manager"] * 2
    _every_message_kept(mx)


def test_a_server_that_refuses_required_gets_the_managers_write_tool_forced_alone(scripted_mx):
    """llama-cpp-python answers `tool_choice: required` with 500, and under `auto` may name a
    function and stop (`functions.NAME:`), a second call: the engine forces the routed manager's
    write tool instead, and sends it alone (one call, fewer prompt tokens)."""
    def server(req):
        if req.tool_choice == "required":
            raise ServerRefused(500, "")
        if req.agent == "episodic_memory_manager" and req.tool_choice == "auto":
            return "functions.insert_episodic:"
        return good(req)

    mx, client = scripted_mx(server)
    result = mx.add(MESSAGES, user_id="ada", occurred_at=WHEN)
    assert result.status.value == "processed", result.error
    calls = [r for r in client.requests if r.agent == "episodic_memory_manager"]
    assert [r.tool_choice for r in calls] == ["required", "insert_episodic"]
    assert calls[1].tool_names == ["insert_episodic"]
    mx.add([{"role": "user", "id": "m3", "content": "Climbing again next week with Tom and the guide."},
            {"role": "user", "id": "m4", "content": "Tom booked the hut."}], user_id="ada")
    later = [r.tool_choice for r in client.requests if r.agent == "episodic_memory_manager"][2:]
    assert later[0] == "insert_episodic"  # learnt: not asked with `required` again


def test_text_mode_replies_are_schema_constrained_where_the_server_allows(scripted_mx):
    """`json_schema` refused (as llama-cpp-python does) -> `json_object` with the schema, kept for later calls."""
    formats = []

    def server(req):
        fmt = req.extra_create_args.get("response_format")
        formats.append(fmt["type"] if fmt else None)
        if fmt and fmt["type"] == "json_schema":
            raise ServerRefused(500, "response_format: Input should be 'text' or 'json_object'")
        assert fmt and fmt["type"] == "json_object" and "tool_calls" in fmt["schema"]["properties"]
        if req.agent == "meta_memory_manager":
            names = fmt["schema"]["properties"]["tool_calls"]["items"]["properties"]["name"]["enum"]
            assert names == ["trigger_memory_managers"]
            return '{"tool_calls": [{"name": "trigger_memory_managers", "arguments": {"memory_types": ["episodic"]}}]}'
        return ('{"tool_calls": [{"name": "insert_episodic", "arguments": {"summary": "Ada went climbing", '
                '"source_ids": ["m1", "m2"]}}]}')

    mx, client = scripted_mx(server, function_calling=False)
    result = mx.add(MESSAGES, user_id="ada", occurred_at=WHEN)
    assert result.status.value == "processed", result.error
    assert formats == ["json_schema", "json_object", "json_object"]


def _vault_rounds(scripted_mx, *replies):
    """A batch routed to the vault whose manager answers `replies` in turn; (engine, result, vault
    prompts seen, stored values)."""
    answers = iter(replies)
    seen: list[str] = []

    def script(req):
        if req.agent == "meta_memory_manager":
            return [("trigger_memory_managers", {"memory_types": ["episodic", "knowledge_vault"]})]
        if req.agent == "knowledge_vault_manager":
            seen.append(req.task_text)
            return next(answers)
        return good(req)

    mx, _ = scripted_mx(script)
    result = mx.add(MESSAGES, user_id="ada", occurred_at=WHEN)
    values = {mx.get(m.id, user_id="ada", reveal=True).secret_value
              for m in mx.list(user_id="ada", memory_types=["knowledge_vault"])}
    return mx, result, seen, values


def test_an_invented_secret_is_rejected_and_never_stored(scripted_mx):
    mx, result, seen, values = _vault_rounds(
        scripted_mx,
        [("insert_knowledge_vault", {"entry_type": "password", "caption": "Caroline's password",
                                     "secret_value": "your_secret_password_for_caroline"})],
        [("nothing_to_record", {})])
    assert result.status.value == "processed", result.error
    # the tool's schema enumerates the batch's values: the correction names the ones it may store
    assert "secret_value: Input should be '7781-kestrel'" in seen[1]
    assert len(result.rejected) == 1 and result.rejected[0].startswith("knowledge_vault_manager (round 1)")
    assert "your_secret_password_for_caroline" not in values


def test_plain_words_are_not_a_vault_value(scripted_mx):
    """The local model vaulted "Transgender" from a LoCoMo turn: it occurs in the batch, but it is no secret."""
    mx, result, seen, values = _vault_rounds(
        scripted_mx,
        [("insert_knowledge_vault", {"entry_type": "password", "caption": "a word", "secret_value": "climbing"})],
        [("insert_knowledge_vault", {"entry_type": "password", "caption": "cabin wifi",
                                     "secret_value": "7781-kestrel"})])
    assert result.status.value == "processed", result.error
    assert "secret_value: Input should be '7781-kestrel'" in seen[1]
    assert "climbing" not in values and "7781-kestrel" in values


def test_a_message_copied_into_core_memory_is_skipped_as_a_repeat_of_its_turn(scripted_mx):
    """The turn is kept word for word already: a copy of it adds nothing, whatever memory it is
    written to. Nothing is written, no second call is made, and the model's work stands."""
    def script(req):
        if req.agent == "meta_memory_manager":
            return [("trigger_memory_managers", {"memory_types": ["episodic", "core"]})]
        if req.agent == "core_memory_manager":
            return [("core_memory_append", {"label": "human", "text": MESSAGES[0]["content"]})]
        return good(req)

    mx, client = scripted_mx(script)
    result = mx.add(MESSAGES, user_id="ada", occurred_at=WHEN)
    assert [r.agent for r in client.requests].count("core_memory_manager") == 1
    assert result.status.value == "processed", result.error
    assert any("near repeat of" in r and "core_memory_manager" in r for r in result.rejected)
    human = mx.core_memory(user_id="ada")["human"]
    assert human is None or MESSAGES[0]["content"] not in human.value


def test_a_core_line_the_block_holds_already_is_skipped(scripted_mx):
    """A weak model writes a line it was shown in the block again, in a batch that does not mention
    it: a repeat (nothing written), not an ungrounded line (refused, the rules standing in)."""
    def script(req):
        if req.agent == "meta_memory_manager":
            return [("trigger_memory_managers", {"memory_types": ["core"]})]
        if req.agent == "core_memory_manager":
            return [("core_memory_append", {"label": "human", "text": "goes climbing with her brother Tom"})]
        return good(req)

    mx, client = scripted_mx(script)
    first = mx.add(MESSAGES[:1], user_id="ada", occurred_at=WHEN)
    assert first.status.value == "processed", first.error
    later = [{"role": "user", "name": "Ada", "id": "m9", "content": "Booked the dentist for Friday morning."}]
    second = mx.add(later, user_id="ada", occurred_at=WHEN)
    assert second.status.value == "processed", second.error
    assert any("near repeat of the human block" in r for r in second.rejected)
    assert mx.core_memory(user_id="ada")["human"].value.count("climbing") == 1


def test_a_core_text_of_copied_pieces_and_held_lines_writes_only_what_is_new(scripted_mx):
    """The local model wrote a photo's caption before two held lines, a message's one-word sentence
    under its speaker's label, and a sentence with its apostrophe as "&#39;": each piece is a copy
    or a repeat and is skipped; the new fact among them is written."""
    photo = {"role": "user", "name": "Ada", "id": "m3",
             "content": "Wow! It's so rewarding! [shares a photo: a rope coiled on a granite ledge]"}

    def script(req):
        if req.agent == "meta_memory_manager":
            return [("trigger_memory_managers", {"memory_types": ["core"]})]
        if req.agent == "core_memory_manager":
            return [("core_memory_append", {"label": "human", "text": (
                "Ada (messages): Wow!\nIt&#39;s so rewarding!\n"
                "[shares a photo: a rope coiled on a granite ledge] climbs with her brother Tom\n"
                "has a brother named Tom")})]
        return good(req)

    mx, _ = scripted_mx(script)
    before = mx.core_memory(user_id="ada")
    result = mx.add([*MESSAGES[:1], photo], user_id="ada", occurred_at=WHEN)
    assert result.status.value == "processed", result.error
    human = mx.core_memory(user_id="ada")["human"].value
    added = [line for line in human.splitlines()
             if line not in (before["human"].value.splitlines() if "human" in before else [])]
    assert all(not line.startswith(("Ada (messages)", "It", "[")) and "&#39;" not in line for line in human.splitlines())
    assert {"climbs with her brother Tom", "has a brother named Tom"} <= set(added), human
    skipped = [r for r in result.rejected if "near repeat of m3" in r]
    assert [r.split(": ", 2)[-1] for r in skipped] == [
        "Ada (messages): Wow!", "It's so rewarding!", "[shares a photo: a rope coiled on a granite ledge]"]


def test_every_core_write_refused_leaves_the_rules_lines_without_a_correction_round(scripted_mx):
    """A weak model asked again for better content repeats it: a refused write costs no second call.
    When every write of a manager is refused the batch is still processed: the rules wrote the type
    before the model ran, and the refusal is kept with the input."""
    def script(req):
        if req.agent == "meta_memory_manager":
            return [("trigger_memory_managers", {"memory_types": ["episodic", "core"]})]
        if req.agent == "core_memory_manager":
            return [("core_memory_append", {"label": "human", "text": "I'm sorry, but I can't help with that."})]
        return good(req)

    mx, client = scripted_mx(script)
    result = mx.add(MESSAGES, user_id="ada", occurred_at=WHEN)
    assert [r.agent for r in client.requests].count("core_memory_manager") == 1
    assert result.status.value == "processed", result.error
    assert any("(refused)" in r and "speaks as the user" in r for r in result.rejected)
    assert any("speaks as the user" in r for r in mx.input_status(result.input_ids[0]).refused)
    assert all("sorry" not in block.value for block in mx.core_memory(user_id="ada").values())


def test_a_core_line_of_names_and_thanks_alone_is_refused(scripted_mx):
    """The local model wrote "Melanie, thanks!" to the persona block from "Caroline, thanks!": a line
    that holds no word besides the people's names and a greeting states nothing, yet every chat prompt
    would carry it. A line with a fact beside a name is written."""
    def script(req):
        if req.agent == "meta_memory_manager":
            return [("trigger_memory_managers", {"memory_types": ["episodic", "core"]})]
        if req.agent == "core_memory_manager":
            return [("core_memory_append", {"label": "persona", "text": "Ada, thanks!"}),
                    ("core_memory_append", {"label": "human", "text": "Ada: climbs with her brother Tom"})]
        return good(req)

    mx, client = scripted_mx(script)
    result = mx.add(MESSAGES, user_id="ada", occurred_at=WHEN)
    assert result.status.value == "processed", result.error
    assert any("states no fact" in r for r in result.rejected)
    blocks = mx.core_memory(user_id="ada")
    assert blocks.get("persona") is None or "thanks" not in blocks["persona"].value
    assert "climbs with her brother Tom" in blocks["human"].value


def test_a_refused_write_leaves_the_rounds_other_writes(scripted_mx):
    def script(req):
        if req.agent == "meta_memory_manager":
            return [("trigger_memory_managers", {"memory_types": ["episodic", "core"]})]
        if req.agent == "core_memory_manager":
            return [("core_memory_append", {"label": "human", "text": "I climb with my brother"}),
                    ("core_memory_append", {"label": "human", "text": "has a brother, Tom"})]
        return good(req)

    mx, client = scripted_mx(script)
    result = mx.add(MESSAGES, user_id="ada", occurred_at=WHEN)
    assert result.status.value == "processed", result.error
    assert mx.core_memory(user_id="ada")["human"].value == "has a brother, Tom"
    assert any("speaks as the user" in r for r in result.rejected)
    # the input log keeps the refusals with the input
    assert mx.input_status(result.input_ids[0]).refused == result.rejected


def test_each_line_of_a_core_text_is_judged_on_its_own(scripted_mx):
    """The local model wrote a block line again, a message copied and a reply in one text: the
    repeats are skipped, the reply refused, and a new fact among them still written."""
    text = ("climbs with her brother Tom\nAda: Tom is a pilot for a regional airline. "
            "Hope you are well? Keeps a climbing diary.")

    def script(req):
        if req.agent == "meta_memory_manager":
            return [("trigger_memory_managers", {"memory_types": ["core"]})]
        if req.agent == "core_memory_manager":
            return [("core_memory_append", {"label": "human", "text": text})]
        return good(req)

    mx, client = scripted_mx(script)
    mx.core_append("human", "climbs with her brother Tom", user_id="ada")
    turns = MESSAGES[:1] + [{"role": "user", "name": "Ada", "id": "m4",
                            "content": "Tom is a pilot for a regional airline. I keep a climbing diary."}]
    result = mx.add(turns, user_id="ada", occurred_at=WHEN)
    assert result.status.value == "processed", result.error
    lines = mx.core_memory(user_id="ada")["human"].value.splitlines()
    assert lines.count("climbs with her brother Tom") == 1 and "Keeps a climbing diary." in lines
    assert not any("pilot" in line or "you" in line for line in lines)
    assert any("near repeat of the human block" in r for r in result.rejected)
    assert any("near repeat of" in r and "pilot" in r for r in result.rejected)  # the message, copied
    assert any("talks to someone" in r for r in result.rejected)


def model_facts(mx):
    """The facts the model's semantic manager wrote (the rules write theirs first)."""
    return [m for m in mx.list(user_id="ada", memory_types=["semantic"])
            if {e.actor for e in mx.history(m.id, user_id="ada")} == {"semantic_memory_manager"}]


def _semantic(fact_script):
    def script(req):
        if req.agent == "meta_memory_manager":
            return [("trigger_memory_managers", {"memory_types": ["semantic"]})]
        if req.agent == "semantic_memory_manager":
            return fact_script(req)
        return good(req)
    return script


def test_only_listed_ids_may_be_edited(scripted_mx):
    mx, client = scripted_mx(_semantic(lambda req: [("insert_semantic", {"name": "Tom", "summary": "Tom went climbing with Ada"})]))
    mx.add(MESSAGES, user_id="ada", occurred_at=WHEN)
    (fact,) = model_facts(mx)
    errors = []

    def semantic(req):
        errors.append(req.task_text)
        if len(errors) == 1:  # an id shaped like the listed one, but not listed for this batch
            return [("update_memory", {"memory_id": fact.id.replace(fact.id[-4:], "0000"), "fields": {"details": "x"}})]
        return [("update_memory", {"memory_id": fact.id, "fields": {"details": "Tom booked a guide"}})]

    client._script = _semantic(semantic)
    result = mx.add([{"role": "user", "id": "m3", "content": "Tom booked a guide."}], user_id="ada")
    assert result.status.value == "processed", result.error
    assert "was not listed" in errors[1]


def test_a_summary_that_repeats_a_turn_is_skipped_without_a_correction_round(scripted_mx):
    """Every turn is kept word for word before the model runs: a summary that only repeats one adds
    nothing, so it is not written, and the refusal is counted, without another call."""
    def script(req):
        if req.agent == "episodic_memory_manager":
            return [("insert_episodic", {"summary": "Yesterday Ada went climbing with her brother Tom",
                                         "source_ids": ["m1"]})]
        return good(req)

    mx, client = scripted_mx(script)
    result = mx.add(MESSAGES, user_id="ada", occurred_at=WHEN)
    assert result.status.value == "processed", result.error
    assert model_episodes(mx) == []
    assert [r.agent for r in client.requests].count("episodic_memory_manager") == 1
    assert len(result.rejected) == 1 and "near repeat of" in result.rejected[0]
    _every_message_kept(mx)


def test_a_fact_that_repeats_a_short_turn_under_its_speakers_name_is_skipped(scripted_mx):
    """A short turn copied as a fact about whoever said it ("Joanna: Later, take care!") is the turn
    again: its speaker's name is no new content."""
    mx, _ = scripted_mx(_semantic(lambda req: [("insert_semantic", {
        "name": "Joanna", "summary": "Later, take care!", "source_ids": ["m3"]})]))
    turn = {"role": "user", "name": "Joanna", "id": "m3", "content": "Later, take care!"}
    result = mx.add([*MESSAGES, turn], user_id="ada", occurred_at=WHEN)
    assert result.status.value == "processed", result.error
    assert [f.summary for f in mx.list(user_id="ada", memory_types=["semantic"])] == ["Tom is Ada's brother"]  # the rules'
    assert any("near repeat of m3" in r for r in result.rejected), result.rejected
    _every_message_kept(mx)


def test_a_summary_that_is_one_whole_sentence_of_a_turn_is_skipped(scripted_mx):
    """A summary whose words are one sentence of a turn, however short, copies it: the turn's photo
    caption beside it does not make the copy new."""
    def script(req):
        if req.agent == "episodic_memory_manager":
            return [("insert_episodic", {"summary": "Speaking of which, here they go again!", "actor": "Nate",
                                         "source_ids": ["m3"]})]
        return good(req)

    mx, _ = scripted_mx(script)
    turn = {"role": "user", "name": "Nate", "id": "m3", "content": "Speaking of which, here they go again! "
            "[shares a photo: a photo of a turtle and a strawberry in a bowl]"}
    result = mx.add([*MESSAGES, turn], user_id="ada", occurred_at=WHEN)
    assert result.status.value == "processed", result.error
    assert model_episodes(mx) == []
    # a repeat of the turn, or of its episode (kept word for word before the model ran)
    assert any("near repeat of" in r and "Speaking of which" in r for r in result.rejected), result.rejected
    _every_message_kept(mx)


def test_a_failed_summary_round_leaves_the_turns_and_no_stand_in(scripted_mx):
    mx, result = None, None
    replies = iter([[("insert_episodic", {"summary": "x", "source_ids": ["not-in-batch"]})]] * 2)

    def script(req):
        if req.agent == "episodic_memory_manager":
            return next(replies)
        return good(req)

    mx, client = scripted_mx(script)
    result = mx.add(MESSAGES, user_id="ada", occurred_at=WHEN)
    assert result.status.value == "degraded" and "episodic_memory_manager" in result.error
    episodes = mx.list(user_id="ada", memory_types=["episodic"])
    assert sorted(e.summary for e in episodes) == sorted(m["content"] for m in MESSAGES)  # the turns, once each
    _every_message_kept(mx)


def test_a_model_that_fails_every_call_loses_no_input(scripted_mx):
    def broken(req):
        raise ConnectionError("connection refused")

    mx, client = scripted_mx(broken)
    result = mx.add(MESSAGES, user_id="ada", occurred_at=WHEN)
    assert result.status.value == "degraded" and "ConnectionError" in result.error
    _every_message_kept(mx)
    assert mx.input_status(result.input_ids[0]).status.value == "degraded"
    client._script = good
    (retried,) = mx.retry_failed(user_id="ada")
    assert retried.status.value == "processed", retried.error
    assert [e.summary for e in model_episodes(mx)] == ["Ada went climbing with Tom"]
    assert len(mx.list(user_id="ada", memory_types=["episodic"])) == len(MESSAGES) + 1  # the turns stay, once


def test_a_chat_answer_written_as_a_call_is_asked_again_without_tools(scripted_mx):
    def script(req):
        if req.agent == "chat_agent":
            return "functions.search_in_memory:" if req.tool_names else "You went climbing with Tom."
        return good(req)

    mx, client = scripted_mx(script)
    mx.add(MESSAGES, user_id="ada", occurred_at=WHEN)
    response = mx.chat("Who did I go climbing with?", user_id="ada")
    assert response.fallback is None and response.answer == "You went climbing with Tom."
    assert [r.tool_names for r in client.requests if r.agent == "chat_agent"] == [["search_in_memory"], []]


@pytest.mark.parametrize("answer, why", [
    (lambda req: "", "empty"),
    (lambda req: "functions.search_in_memory:", "tool call written as text"),
    (lambda req: (_ for _ in ()).throw(ConnectionError("reset")), "ConnectionError"),
])
def test_chat_never_raises_on_what_a_model_returns(scripted_mx, answer, why):
    def script(req):
        if req.agent == "chat_agent":
            return answer(req)
        return good(req)

    mx, client = scripted_mx(script)
    mx.add(MESSAGES, user_id="ada", occurred_at=WHEN)
    response = mx.chat("Who did I go climbing with?", user_id="ada")
    assert why in response.fallback
    assert response.answer.startswith("No usable answer from the model")
    assert response.memory_ids and set(response.memory_ids) <= set(response.retrieved_ids)


def test_a_time_without_a_zone_takes_the_batchs_zone(scripted_mx):
    def script(req):
        if req.agent == "episodic_memory_manager":
            return [("insert_episodic", {"summary": "Ada went climbing with Tom", "occurred_at": "2024-04-01T18:00",
                                         "source_ids": ["m1", "m2"]})]
        return good(req)

    mx, client = scripted_mx(script)
    result = mx.add(MESSAGES, user_id="ada", occurred_at=WHEN)
    assert result.status.value == "processed", result.error
    (episode,) = model_episodes(mx)
    assert episode.occurred_at == datetime(2024, 4, 1, 18, 0, tzinfo=timezone.utc)


def test_an_update_alone_still_keeps_the_new_messages(scripted_mx):
    """The local model updated one memory batch after batch: the new messages' words must still be found."""
    mx, client = scripted_mx(_semantic(lambda req: [("insert_semantic", {"name": "Tom", "summary": "Tom went climbing with Ada"})]))
    mx.add(MESSAGES, user_id="ada", occurred_at=WHEN)
    (fact,) = model_facts(mx)
    client._script = _semantic(lambda req: [("update_memory", {"memory_id": fact.id,
                                                               "fields": {"details": "Tom booked a mountain guide"}})])
    later = [{"role": "user", "id": "m3", "content": "Tom booked a mountain guide named Ines for June."}]
    result = mx.add(later, user_id="ada", occurred_at=WHEN)
    assert result.status.value == "processed", result.error
    hits = mx.search("mountain guide Ines", user_id="ada")
    assert any("Ines" in h.text and "m3" in h.memory.source_ids for h in hits)


def test_the_vault_is_not_offered_when_no_word_could_be_stored(scripted_mx):
    """The local model routed nearly every LoCoMo batch to the vault and then invented a secret; with
    no word shaped like a vault value in the batch, the router's schema does not offer the vault, and
    a router that names it anyway is told what it may choose."""
    offered = []

    def script(req):
        if req.agent == "meta_memory_manager":
            (schema,) = req.tool_schemas
            offered.append(schema["parameters"]["properties"]["memory_types"]["items"]["enum"])
            types = ["episodic", "knowledge_vault"] if len(offered) == 1 else ["episodic"]
            return [("trigger_memory_managers", {"memory_types": types})]
        return good(req)

    mx, client = scripted_mx(script)
    chat = [{"role": "user", "name": "Ada", "id": "m1", "content": "Hey Mel! Kids & work, 2 jobs since 2023!"},
            {"role": "user", "name": "Ada", "id": "m2", "content": "I went climbing with Tom at 8:30pm."}]
    result = mx.add(chat, user_id="ada", occurred_at=WHEN)
    assert result.status.value == "processed", result.error
    assert offered[0] == ["core", "episodic", "semantic"]  # chat feeds no procedure, document or secret
    # refused with the choices it has, then corrected
    assert result.rejected == ["meta_memory_manager (round 1): trigger_memory_managers: memory_types.1: Input "
                               "should be 'core', 'episodic' or 'semantic' (got 'knowledge_vault')"]
    assert "knowledge_vault_manager" not in [r.agent for r in client.requests]
    assert [t.value for t in result.routed] == ["episodic"]


def test_the_vault_tool_enumerates_the_values_of_the_batch(scripted_mx):
    """A server that constrains output to the schema cannot write a secret that is not in the batch."""
    schemas = []

    def script(req):
        if req.agent == "meta_memory_manager":
            return [("trigger_memory_managers", {"memory_types": ["episodic", "knowledge_vault"]})]
        if req.agent == "knowledge_vault_manager":
            schemas.extend(s for s in req.tool_schemas if s["name"] == "insert_knowledge_vault")
            return [("nothing_to_record", {})]
        return good(req)

    mx, _ = scripted_mx(script)
    mx.add(MESSAGES, user_id="ada", occurred_at=WHEN)
    (schema,) = schemas
    properties = schema["parameters"]["properties"]
    assert properties["secret_value"].get("const") == "7781-kestrel"
    assert properties["source_ids"]["anyOf"][0]["items"]["enum"] == ["m1", "m2"]


def test_a_model_cannot_delete_an_episode(scripted_mx):
    """Episodes hold what was said; the local model deleted two and lost turns of earlier batches."""
    mx, client = scripted_mx(good)
    mx.add(MESSAGES, user_id="ada", occurred_at=WHEN)
    episode = turn_episode(mx, "m1")
    seen = []

    def script(req):
        if req.agent == "episodic_memory_manager":
            seen.append((req.tool_names, req.task_text))
            return [("delete_memory", {"memory_id": episode.id})] if len(seen) == 1 else \
                [("nothing_to_record", {})]
        return good(req)

    client._script = script
    result = mx.add([{"role": "user", "id": "m3", "content": "Booked a guide."},
                     {"role": "user", "id": "m4", "content": "Paid the deposit."}], user_id="ada")
    assert result.status.value == "processed", result.error
    assert "delete_memory" not in seen[0][0]  # not offered to the episodic manager
    assert "rejected" in seen[1][1] and "delete_memory" in seen[1][1]  # refused, whatever the model tried
    assert episode.id in {m.id for m in mx.list(user_id="ada", memory_types=["episodic"])}


def test_a_value_the_vault_manager_finds_is_redacted_from_the_batchs_other_memories(scripted_mx):
    """The rules missed the cabin's wifi code and the model vaulted it: the episodic manager, which runs
    after the vault's, is shown the placeholder, and the copy it still writes is redacted by the store."""
    episodic_prompts = []

    def script(req):
        if req.agent == "meta_memory_manager":
            return [("trigger_memory_managers", {"memory_types": ["episodic", "knowledge_vault"]})]
        if req.agent == "knowledge_vault_manager":
            return [("insert_knowledge_vault", {"entry_type": "password", "caption": "cabin wifi",
                                                "secret_value": "7781-kestrel"})]
        if req.agent == "episodic_memory_manager":
            episodic_prompts.append(req.task_text)
            return [("insert_episodic", {"summary": "Ada went climbing with Tom and shared the cabin wifi code "
                                                    "7781-kestrel"})]
        return good(req)

    mx, _ = scripted_mx(script)
    result = mx.add(MESSAGES, user_id="ada", occurred_at=WHEN)
    assert result.status.value == "processed", result.error
    (vault,) = mx.list(user_id="ada", memory_types=["knowledge_vault"])
    (episode,) = model_episodes(mx)
    assert "7781-kestrel" not in episode.summary and f"[vault:{vault.id}]" in episode.summary
    turn = turn_episode(mx, "m2")  # kept before the model ran, then redacted once the value was vaulted
    assert "7781-kestrel" not in turn.summary + turn.details and f"[vault:{vault.id}]" in turn.summary
    assert "7781-kestrel" not in episodic_prompts[0] and f"[vault:{vault.id}]" in episodic_prompts[0]
    assert all("7781-kestrel" not in h.text for h in mx.search("cabin wifi code", user_id="ada"))


def test_a_memory_copied_from_the_prompts_examples_is_rejected(scripted_mx):
    """The local model wrote the procedural prompt's example ("Deploy the trail-map site") as a memory
    of a LoCoMo greeting; it is refused as ungrounded, without a correction round, and the rules stand in."""
    replies = iter([[("insert_procedural", {"summary": "Deploy the trail-map site",
                                            "steps": ["export the sales report", "email it to Priya"]})],
                    [("nothing_to_record", {})]])

    def script(req):
        if req.agent == "meta_memory_manager":
            return [("trigger_memory_managers", {"memory_types": ["episodic", "procedural"]})]
        if req.agent == "procedural_memory_manager":
            return next(replies)
        return good(req)

    mx, client = scripted_mx(script)
    steps = [*MESSAGES, {"role": "user", "name": "Ada", "id": "m3", "content": "How to pack: first the rope, then the boots."}]
    result = mx.add(steps, user_id="ada", occurred_at=WHEN)
    assert result.status.value == "processed", result.error
    assert len(result.rejected) == 1 and "procedural memory is not grounded" in result.rejected[0]
    assert [r.agent for r in client.requests].count("procedural_memory_manager") == 1  # no correction round
    assert not any("Deploy" in m.search_text() for m in mx.list(user_id="ada", limit=100))


def test_a_memory_copying_its_tools_description_is_rejected(scripted_mx):
    """The local model filed "Who did what, in the words of the messages." (the episode tool's own
    description of `summary`) as an episode of a LoCoMo batch; it is refused for copying the schema,
    without a correction round, and nothing of it is written."""
    def script(req):
        if req.agent == "meta_memory_manager":
            return [("trigger_memory_managers", {"memory_types": ["episodic"]})]
        if req.agent == "episodic_memory_manager":
            return [("insert_episodic", {"summary": "Who did what, in the words of the messages.",
                                         "source_ids": ["m1", "m2"]})]
        return good(req)

    mx, client = scripted_mx(script)
    result = mx.add(MESSAGES, user_id="ada", occurred_at=WHEN)
    assert result.status.value == "processed", result.error
    assert len(result.rejected) == 1 and "copies a tool's description" in result.rejected[0]
    assert [r.agent for r in client.requests].count("episodic_memory_manager") == 1  # no correction round
    assert not any("in the words of the messages" in m.search_text() for m in mx.list(user_id="ada", limit=100))
    assert model_episodes(mx) == []


DIALOGUE = [
    {"role": "user", "name": "Joanna", "id": "d1", "content": "I finally finished my first full screenplay and printed it!"},
    {"role": "user", "name": "Nate", "id": "d2", "content": "Congrats! I won my first video game tournament last week."},
]


def test_one_speakers_news_written_about_the_other_is_rejected(scripted_mx):
    """The local model filed Joanna's screenplay under Nate, as an episode, a fact and a core line;
    each is refused with who said it, without a correction round, and nothing of it is written,
    while Nate's own news is kept."""
    def script(req):
        if req.agent == "meta_memory_manager":
            return [("trigger_memory_managers", {"memory_types": ["episodic", "semantic", "core"]})]
        if req.agent == "episodic_memory_manager":
            return [("insert_episodic", {"summary": "Nate printed the full screenplay he finished on Friday.",
                                         "source_ids": ["d1", "d2"]}),
                    ("insert_episodic", {"summary": "Nate won a tournament of video games.",
                                         "source_ids": ["d2"]})]
        if req.agent == "semantic_memory_manager":
            return [("insert_semantic", {"name": "Nate", "summary": "Wrote a full screenplay and got it printed",
                                         "source_ids": ["d1"]})]
        if req.agent == "core_memory_manager":
            return [("core_memory_append", {"label": "human", "text": "Nate: has written a full screenplay, now printed"})]
        return good(req)

    mx, client = scripted_mx(script)
    result = mx.add(DIALOGUE, user_id="ada", occurred_at=WHEN)
    assert result.status.value == "processed", result.error
    misfiled = [r for r in result.rejected if "what Joanna said of themself" in r]
    assert len(misfiled) == 3, result.rejected
    assert [r.agent for r in client.requests].count("episodic_memory_manager") == 1  # no correction round
    assert [e.summary for e in model_episodes(mx)] == ["Nate won a tournament of video games."]
    assert not any("screenplay" in m.search_text() and m.memory_type.value != "episodic"
                   for m in mx.list(user_id="ada", limit=100))


def test_a_day_written_in_words_is_read_as_the_episode_time_and_garbage_goes_back_to_the_model(scripted_mx):
    """The messages show resolved dates in words ("yesterday (1 April 2024)"); the local model copied
    them into `occurred_at`. That form is read (at the batch's time of day); anything else is refused."""
    def episode_at(occurred_at):
        def script(req):
            if req.agent == "episodic_memory_manager":
                return [("insert_episodic", {"summary": "Ada went climbing with her brother Tom and got the cabin "
                                                        "wifi code", "occurred_at": occurred_at,
                                             "source_ids": ["m1", "m2"]})]
            return good(req)
        return script

    mx, _ = scripted_mx(episode_at("1 April 2024"))
    result = mx.add(MESSAGES, user_id="ada", occurred_at=WHEN)
    assert result.status.value == "processed", result.error
    (episode,) = model_episodes(mx)
    assert episode.occurred_at == datetime(2024, 4, 1, 18, 30, tzinfo=timezone.utc)

    mx2, _ = scripted_mx(episode_at("the day before"))
    result = mx2.add(MESSAGES, user_id="ada", occurred_at=WHEN)
    assert result.status.value == "degraded" and "occurred_at" in result.error


def fill_human_block(mx):
    """A human block that could not take another long line: the rewrite is offered from then on."""
    lines = [f"logged climb number {i} at the crag" for i in range(140)]
    mx.core_rewrite("human", "\n".join(lines), user_id="ada")


def test_the_rewrite_is_offered_only_when_a_block_is_full(scripted_mx):
    """The local model rewrote blocks that had room as a message, dropping the lines they held: a
    rewrite is for a block that cannot take another line."""
    offered = []

    def script(req):
        if req.agent == "meta_memory_manager":
            return [("trigger_memory_managers", {"memory_types": ["core"]})]
        if req.agent == "core_memory_manager":
            offered.append(sorted(req.tool_names))
            return [("nothing_to_record", {})]
        return good(req)

    mx, client = scripted_mx(script)
    mx.add(MESSAGES, user_id="ada", occurred_at=WHEN)
    fill_human_block(mx)
    mx.add([{"role": "user", "name": "Ada", "id": "m7", "content": "Tom flies to Oslo on Monday."}],
           user_id="ada", occurred_at=WHEN)
    assert offered == [["core_memory_append", "nothing_to_record"],
                       ["core_memory_append", "core_memory_rewrite", "nothing_to_record"]]


def test_a_core_block_rewritten_from_the_tools_own_words_is_refused(scripted_mx):
    """The local model rewrote the human block as the tool's description of its parameter: refused
    for copying it (before 2026-12-02 for being ungrounded)."""
    def script(req):
        if req.agent == "meta_memory_manager":
            return [("trigger_memory_managers", {"memory_types": ["core"]})]
        if req.agent == "core_memory_manager":
            return [("core_memory_rewrite", {"label": "human", "value": "The whole block rewritten: merged, "
                                                                         "deduplicated, newest facts winning, under the limit."})]
        return good(req)

    mx, _ = scripted_mx(script)
    fill_human_block(mx)
    result = mx.add(MESSAGES, user_id="ada", occurred_at=WHEN)
    assert any("copies a tool's description" in r and "deduplicated" in r for r in result.rejected), result.rejected
    human = mx.core_memory(user_id="ada")["human"]
    assert human is None or "deduplicated" not in human.value


def test_an_empty_core_line_records_nothing(scripted_mx):
    """Where the server takes no `tool_choice="required"`, the append tool is forced alone: an empty
    line is how the model says the batch holds nothing for the core blocks."""
    def script(req):
        if req.agent == "meta_memory_manager":
            return [("trigger_memory_managers", {"memory_types": ["episodic", "core"]})]
        if req.agent == "core_memory_manager":
            return [("core_memory_append", {"label": "human", "text": "  "})]
        return good(req)

    mx, client = scripted_mx(script)
    result = mx.add(MESSAGES, user_id="ada", occurred_at=WHEN)
    assert result.status.value == "processed", result.error
    assert [r.agent for r in client.requests].count("core_memory_manager") == 1
    assert mx.core_memory(user_id="ada")["human"].value == ""


def test_a_core_block_rewritten_as_a_copied_message_is_refused(scripted_mx):
    """The local model rewrote the persona block as a message of the batch: a rewrite's new lines are
    held to what an appended line is."""
    def script(req):
        if req.agent == "meta_memory_manager":
            return [("trigger_memory_managers", {"memory_types": ["episodic", "core"]})]
        if req.agent == "core_memory_manager":
            return [("core_memory_rewrite", {"label": "persona", "value": MESSAGES[0]["content"]})]
        return good(req)

    mx, client = scripted_mx(script)
    fill_human_block(mx)
    result = mx.add(MESSAGES, user_id="ada", occurred_at=WHEN)
    assert any("(refused)" in r and "repeats m1" in r for r in result.rejected), result.rejected
    assert MESSAGES[0]["content"] not in mx.core_memory(user_id="ada")["persona"].value


def test_a_rewrite_that_empties_a_core_block_is_refused(scripted_mx):
    def script(req):
        if req.agent == "meta_memory_manager":
            return [("trigger_memory_managers", {"memory_types": ["core"]})]
        if req.agent == "core_memory_manager":
            return [("core_memory_rewrite", {"label": "human", "value": " "})]
        return good(req)

    mx, client = scripted_mx(script)
    fill_human_block(mx)
    result = mx.add(MESSAGES, user_id="ada", occurred_at=WHEN)
    assert any("empties the block" in r for r in result.rejected), result.rejected
    assert "logged climb number 7 at the crag" in mx.core_memory(user_id="ada")["human"].value


DOC = ("Sourdough starter care sheet. 1. Discard half of the starter every morning. 2. Feed it fifty grams "
       "of rye flour and fifty grams of water. The starter is named Clint and lives in a blue jar on the shelf.\n"
       "It smells of green apples when healthy and of nail polish remover when hungry.")


def _listed(req: ScriptRequest, prefix: str) -> list[str]:
    import re

    return re.findall(rf"^\[({prefix}_[0-9a-f]{{32}})\]", req.system + "\n" + str(req.messages[1].content), re.M)


@pytest.mark.parametrize("call", ["summarised", "one_word"])
def test_a_model_cannot_take_a_documents_words_away(scripted_mx, call):
    """A document's resource is where its words live (its episode is a stub): a model may add to the
    content of one it wrote, never drop its lines, and never edit the rules' one; the refusal is
    reported and the words stay found."""
    def script(req: ScriptRequest):
        if req.agent == "meta_memory_manager":
            return [("trigger_memory_managers", {"memory_types": ["resource"]})]
        if req.agent == "resource_memory_manager":
            ids = _listed(req, "res")
            if not ids:
                return [("nothing_to_record", {})]
            content = "Sourdough starter care sheet." if call == "summarised" else "deleted"
            return [("update_memory", {"memory_id": ids[0], "fields": {"content": content}})]
        return [("nothing_to_record", {})]

    mx, _ = scripted_mx(script)
    result = mx.add(DOC, user_id="ada", kind="document", occurred_at=WHEN)
    assert result.status.value in ("processed", "degraded")
    assert any("document" in r or "resource_rules, not by a model" in r for r in result.rejected), result.rejected
    for words in ("green apples", "nail polish remover", "rye flour"):
        assert any(words in h.memory.search_text() for h in mx.search(words, user_id="ada")), words


def test_a_model_may_add_to_a_documents_content(scripted_mx):
    def script(req: ScriptRequest):
        if req.agent == "meta_memory_manager":
            return [("trigger_memory_managers", {"memory_types": ["resource"]})]
        if req.agent == "resource_memory_manager":
            ids = _listed(req, "res")
            if ids:
                current = mx.get(ids[0], user_id="ada").content
                return [("update_memory", {"memory_id": ids[0],
                                           "fields": {"content": current + "\nIn summer feed it twice a day."}})]
        return [("nothing_to_record", {})]

    mx, _ = scripted_mx(script)
    mx.add(DOC + "\nIn summer feed it twice a day.", user_id="ada", kind="document", occurred_at=WHEN)
    (resource,) = mx.list(user_id="ada", memory_types=["resource"])
    assert "green apples" in resource.content and "twice a day" in resource.content


def test_a_rewrite_that_empties_most_of_a_core_block_is_refused(scripted_mx):
    def script(req: ScriptRequest):
        if req.agent == "meta_memory_manager":
            return [("trigger_memory_managers", {"memory_types": ["core"]})]
        if req.agent == "core_memory_manager":
            return [("core_memory_rewrite", {"label": "human", "value": "Keeps bee hive number 5 in the orchard row 35 "
                                                                      "behind the old stone barn of the farm 65."})]
        return [("nothing_to_record", {})]

    mx, _ = scripted_mx(script)
    n = 0
    while len(mx.core_memory(user_id="ada")["human"].value) + 1 + 200 <= 5000:  # full: the rewrite is offered
        n += 1
        mx.core_append("human", f"Keeps bee hive number {n} in the orchard row {n * 7} behind the old stone barn "
                                f"of the farm {n * 13}.", user_id="ada")
    before = mx.core_memory(user_id="ada")["human"].value
    result = mx.add("I'm allergic to peanuts and I keep bees.", user_id="ada", occurred_at=WHEN)
    lines = len(before.splitlines())  # and the rules' own line of this input, written before the model's turn
    assert lines > 40 and any(f"drops {lines} of the block's {lines + 1} lines" in r for r in result.rejected), \
        result.rejected
    assert all(line in mx.core_memory(user_id="ada")["human"].value for line in before.splitlines())


def test_a_value_longer_than_the_messages_is_a_runaway_and_refused(scripted_mx):
    def script(req: ScriptRequest):
        if req.agent == "meta_memory_manager":
            return [("trigger_memory_managers", {"memory_types": ["semantic"]})]
        if req.agent == "semantic_memory_manager":
            return [("insert_semantic", {"name": "Tom", "summary": "Tom works as a glaciologist " * 2000})]
        return [("nothing_to_record", {})]

    mx, _ = scripted_mx(script)
    result = mx.add([{"role": "user", "name": "Ada", "content": "My brother Tom works as a glaciologist."}],
                    user_id="ada", occurred_at=WHEN)
    assert any("more than the messages hold" in r for r in result.rejected), result.rejected
    assert max(len(m.search_text()) for m in mx.list(user_id="ada")) < 1000
    assert mx.search("glaciologist", user_id="ada")  # the turn keeps the words


def test_the_calls_of_one_reply_past_its_bound_are_not_run(scripted_mx):
    def script(req: ScriptRequest):
        if req.agent == "meta_memory_manager":
            return [("trigger_memory_managers", {"memory_types": ["semantic"]})]
        if req.agent == "semantic_memory_manager":
            return [("insert_semantic", {"name": "Tom", "summary": f"Tom works as a glaciologist {i}"})
                    for i in range(400)]
        return [("nothing_to_record", {})]

    mx, client = scripted_mx(script, function_calling=True)
    result = mx.add([{"role": "user", "name": "Ada", "content": "My brother Tom works as a glaciologist."}],
                    user_id="ada", occurred_at=WHEN)
    assert any("past the first 32 of one reply were not run" in r for r in result.rejected), result.rejected
    assert len(result.rejected) < 100


@pytest.mark.parametrize("answer", ["Tom is a pilot\x00 [m1].", "Tom is a pilot \ud800 [m1].", "Tom is a pilot\x1b[31m."])
def test_an_answer_holding_what_no_backend_stores_is_cleaned_and_the_question_kept(scripted_mx, answer):
    def script(req: ScriptRequest):
        if req.agent == "chat_agent":
            return answer
        return good(req)

    mx, _ = scripted_mx(script)
    mx.add([{"role": "user", "name": "Ada", "content": "My brother Tom is a pilot."}], user_id="ada", occurred_at=WHEN)
    response = mx.chat("What does Tom do, zebra-marker?", user_id="ada")
    assert response.answer.startswith("Tom is a pilot") and "\x00" not in response.answer
    mx.flush()
    assert any("zebra-marker" in m.search_text() for m in mx.list(user_id="ada"))


def test_a_chat_answer_cut_at_its_token_bound_falls_back_and_is_not_remembered(scripted_mx):
    def script(req: ScriptRequest):
        if req.agent == "chat_agent":
            return CreateResult(finish_reason="length", content="Tom is a pil",
                                usage=RequestUsage(prompt_tokens=0, completion_tokens=400), cached=False)
        return good(req)

    mx, _ = scripted_mx(script)
    mx.add([{"role": "user", "name": "Ada", "content": "My brother Tom is a pilot."}], user_id="ada", occurred_at=WHEN)
    response = mx.chat("What does Tom do, zebra-marker?", user_id="ada")
    assert response.fallback and "cut at its bound" in response.fallback
    mx.flush()
    memories = [m.search_text() for m in mx.list(user_id="ada")]
    assert any("zebra-marker" in text for text in memories)
    assert not any(text.rstrip().endswith("Tom is a pil") for text in memories)


@pytest.mark.parametrize("agent", ["meta_memory_manager", "episodic_memory_manager"])
def test_a_call_the_client_cancels_degrades_the_batch_and_reports_the_rules_writes(scripted_mx, agent):
    """A CancelledError raised by the client (not by the engine's own shutdown) is a failed call."""
    import asyncio

    def script(req: ScriptRequest):
        if req.agent == agent:
            raise asyncio.CancelledError()
        return good(req)

    mx, _ = scripted_mx(script)
    result = mx.add(MESSAGES, user_id="ada", occurred_at=WHEN)
    assert result.status.value == "degraded" and "cancelled" in result.error
    stored = {m.id for m in mx.list(user_id="ada")}
    assert stored and {c.memory_id for c in result.changes} == stored


def test_a_chat_call_the_client_cancels_falls_back_to_the_offline_answer(scripted_mx):
    import asyncio

    def script(req: ScriptRequest):
        if req.agent == "chat_agent":
            raise asyncio.CancelledError()
        return good(req)

    mx, _ = scripted_mx(script)
    mx.add([{"role": "user", "name": "Ada", "content": "My brother Tom is a pilot."}], user_id="ada", occurred_at=WHEN)
    response = mx.chat("What does Tom do?", user_id="ada")
    assert response.fallback and "pilot" in response.answer
