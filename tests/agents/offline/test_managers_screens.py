"""Offline managers on screenshots: what is new per window, one resource per window, no core facts,
one vault entry per secret."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from mirix_py.agents.offline import managers
from mirix_py.agents.offline.screens import is_clock_line, line_key, new_lines, same_lines, shell_prompts
from mirix_py.tools.ops import InsertOp, UpdateOp
from mirix_py.records import InputKind, InputRecord, MemoryType, Message, ResourceMemory

T0 = datetime(2024, 6, 3, 9, 14, 5, tzinfo=timezone.utc)


def _shot(text: str, seconds: float = 0, app: str = "Slack", window: str = "#team") -> InputRecord:
    when = T0 + timedelta(seconds=seconds)
    return InputRecord(user_id="u", kind=InputKind.screenshot, occurred_at=when, source_id=f"f{seconds:g}.png",
                       messages=[Message(role="user", content=text)], metadata={"app": app, "window_title": window})


def test_live_clock_is_masked_other_times_are_not():
    assert line_key("Mon 03 Jun 09:14", T0) == "mon 03 jun <clock>"
    assert line_key("Mon 03 Jun 09:15", T0) == "mon 03 jun <clock>"  # a minute later, same clock
    assert line_key("15:00 Dentist appointment", T0) == "15:00 dentist appointment"
    assert is_clock_line(line_key("Mon 03 Jun 09:14", T0)) and not is_clock_line("15:00 dentist")
    seen: set[str] = set()
    assert new_lines("Mon 03 Jun 09:14\nPriya: hi", seen, T0) == ["Priya: hi"]
    assert new_lines("Mon 03 Jun 09:15\nPriya: hi\nTom: lunch?", seen, T0 + timedelta(minutes=1)) == ["Tom: lunch?"]


def test_one_episode_per_visit_holds_what_was_new_during_it():
    records = [_shot("Priya: the demo moved to Friday"), _shot("Priya: the demo moved to Friday", 2),
               _shot("Priya: the demo moved to Friday\nTom: lunch at 12:30?", 4)]
    batch = managers.prepare_batch("u", records)
    (op,) = managers.episodic_ops(batch)
    assert op.memory.occurred_at == T0 and op.memory.event_type == "screen_activity"
    assert op.memory.summary == ("Viewed Slack — #team (09:14:05–09:14:09): Priya: the demo moved to Friday "
                                 "Tom: lunch at 12:30?")
    assert {"f0.png", "f2.png", "f4.png"} <= set(op.memory.source_ids)  # every frame of the visit
    # a visit whose first frames repeat what is known starts at the first frame that showed something new
    known = ResourceMemory(id="res_1", user_id="u", title="Screenshot of Slack — #team", content="Priya: hi")
    later = managers.prepare_batch("u", [_shot("Priya: hi", 60), _shot("Priya: hi\nTom: lunch?", 62)],
                                   find_resource=lambda title: known)
    (op,) = managers.episodic_ops(later)
    assert op.memory.occurred_at == T0 + timedelta(seconds=62)
    assert op.memory.summary == "Viewed Slack — #team: Tom: lunch?"


def test_coming_back_to_a_window_is_an_event_even_without_new_text():
    records = [_shot("inbox text"), _shot("calendar text", 3, app="Calendar", window="June"), _shot("inbox text", 6)]
    ops = managers.episodic_ops(managers.prepare_batch("u", records))
    assert [op.memory.summary for op in ops] == ["Viewed Slack — #team: inbox text",
                                                 "Viewed Calendar — June: calendar text",
                                                 "Viewed Slack — #team again"]


def test_long_new_text_lands_in_details_so_it_is_searchable():
    text = "\n".join(f"line {i} of the page with words" for i in range(40)) + "\n15:00 Dentist appointment"
    (op,) = managers.episodic_ops(managers.prepare_batch("u", [_shot(text)]))
    assert "Dentist appointment" in op.memory.details and "Dentist" in op.memory.search_text()
    # the lines the summary holds in full are not repeated in the details
    assert "line 0 of the page" in op.memory.summary and "line 0 of the page" not in op.memory.details
    assert all(f"line {i} of" in op.memory.search_text() for i in range(40))


def test_one_resource_per_window_holding_it_as_last_seen():
    records = [_shot("Priya: hi"), _shot("Priya: hi\nTom: lunch?", 2), _shot("Q2 numbers", 3, app="Excel", window="Q2")]
    batch = managers.prepare_batch("u", records)
    ops = managers.resource_ops(batch)
    assert [op.memory.title for op in ops] == ["Screenshot of Slack — #team", "Screenshot of Excel — Q2"]
    # dated by the frame that first showed the text it holds: "Tom: lunch?" was not on screen at T0
    assert ops[0].memory.content == "Priya: hi\nTom: lunch?" and ops[0].memory.occurred_at == T0 + timedelta(seconds=2)
    assert ops[0].memory.source_ids[-1] == "f2.png" and "f0.png" in ops[0].memory.source_ids
    existing = ResourceMemory(id="res_1", user_id="u", title="Screenshot of Slack — #team", resource_type="screenshot",
                              content="Priya: hi\nTom: lunch?")
    later = managers.prepare_batch("u", [_shot("Tom: lunch?\nAna: yes!", 60)],
                                   find_resource=lambda title: existing if title == existing.title else None)
    (update,) = managers.resource_ops(later)  # scrolled: the resource follows the screen, history keeps the rest
    assert isinstance(update, UpdateOp) and update.memory_id == "res_1"
    assert update.fields["content"] == "Tom: lunch?\nAna: yes!"
    (event,) = managers.episodic_ops(later)
    assert event.memory.summary == "Viewed Slack — #team: Ana: yes!"
    unchanged = managers.prepare_batch("u", [_shot("priya:  hi\nTom: lunch?", 90)], find_resource=lambda t: existing)
    assert managers.resource_ops(unchanged) == []


def test_a_changed_value_keeps_its_label_in_the_episode():
    seen_before = "Mon 3 Jun\n15:00\nDentist appointment with Dr.\nWeber\n09:30\nStandup"
    existing = ResourceMemory(id="res_c", user_id="u", title="Screenshot of Calendar — June", content=seen_before)
    moved = "Mon 3 Jun\n09:30\nStandup\n16:30\nDentist appointment with Dr.\nWeber"
    batch = managers.prepare_batch("u", [_shot(moved, app="Calendar", window="June")], find_resource=lambda t: existing)
    (event,) = managers.episodic_ops(batch)
    assert event.memory.summary == "Viewed Calendar — June: 16:30"
    assert event.memory.details == "Standup\n16:30\nDentist appointment with Dr."


def test_text_on_screen_is_not_the_user_speaking():
    batch = managers.prepare_batch("u", [_shot("My name is Bob and I love golf.")])
    assert MemoryType.core not in managers.route(batch)


def test_a_secret_on_every_frame_is_one_vault_entry_and_a_known_one_none():
    frames = [_shot("From: Ana <ana.lee@acme.com>", s) for s in (0, 2, 4)]
    batch = managers.prepare_batch("u", frames)
    (op,) = batch.vault_ops
    assert op.memory.secret_value == "ana.lee@acme.com" and len(op.memory.source_ids) == 6
    assert all(f"[vault:{op.memory.id}]" in m.text for m in batch.messages)
    calls = []

    def known():
        calls.append(1)
        return {("email", "ana.lee@acme.com"): "kv_existing"}

    again = managers.prepare_batch("u", frames, known_secrets=known)
    assert again.vault_ops == [] and "[vault:kv_existing]" in again.messages[0].text and calls == [1]
    managers.prepare_batch("u", [_shot("no secrets here")], known_secrets=known)
    assert calls == [1]  # only asked when the batch holds a secret


def test_terminal_commands_become_a_script():
    text = ("ada@laptop:~/falcon$ git pull --rebase\nAlready up to date.\nada@laptop:~/falcon$ make test\n"
            "120 passed\nada@laptop:~/falcon$ ./deploy.sh --env staging\ndeployed\nada@laptop:~/falcon$")
    (op,) = managers.procedural_ops(managers.prepare_batch("u", [_shot(text, app="Terminal", window="ada@laptop")]))
    assert isinstance(op, InsertOp) and op.memory.entry_type == "script"
    assert op.memory.steps == ["$ git pull --rebase", "$ make test", "$ ./deploy.sh --env staging"]
    assert op.memory.summary == "Commands run in Terminal — ada@laptop"
    assert shell_prompts("just one line") == "just one line"


def test_same_lines_ignores_order_case_spacing_and_clocks():
    assert same_lines("Mon 09:14\nA  b", "a b\nMon 10:20") and not same_lines("a", "a\nb")


def test_same_lines_takes_a_changed_time_for_news_unless_it_is_the_live_clock():
    later = T0 + timedelta(days=1)  # 09:14 the next day
    before = "Dentist appointment Thursday 6 June at 15:00\nLast synced 16:02"
    assert not same_lines(before, "Dentist appointment Thursday 6 June at 16:30\nLast synced 16:02", later)
    assert not same_lines("Board meeting starts at 3:00 PM", "Board meeting starts at 4:30 PM", later)
    assert same_lines(before, "Dentist appointment Thursday 6 June at 15:00\nLast synced 09:14", later)
    assert same_lines(before, "dentist appointment  Thursday 6 June at 15:00\nLast synced 16:02", later)
    assert same_lines(before, "Dentist appointment Thursday 6 June at 16:30\nLast synced 16:02")  # no capture time


def test_a_window_whose_only_change_is_a_time_updates_its_resource():
    """The calendar's resource kept "15:00" after the window showed 16:30, and ranked first."""
    existing = ResourceMemory(id="res_d", user_id="u", title="Screenshot of Calendar — June",
                              content="Dentist appointment Thursday 6 June at 15:00")
    moved = _shot("Dentist appointment Thursday 6 June at 16:30", 86_400, app="Calendar", window="June")
    (update,) = managers.resource_ops(managers.prepare_batch("u", [moved], find_resource=lambda t: existing))
    assert isinstance(update, UpdateOp) and update.fields["content"] == "Dentist appointment Thursday 6 June at 16:30"
    ticking = ResourceMemory(id="res_e", user_id="u", title="Screenshot of Mail — Inbox",
                             content="Inbox (3)\nUpdated 08:02")
    again = _shot("Inbox (3)\nUpdated 09:14", 0, app="Mail", window="Inbox")  # captured at 09:14: a live clock
    assert managers.resource_ops(managers.prepare_batch("u", [again], find_resource=lambda t: ticking)) == []


def test_a_visits_details_show_each_context_line_once():
    base = "\n".join(f"Channel line {i} with some words" for i in range(30))  # > 300 characters
    frames = [_shot(base), _shot(base + "\nDana: lunch at 12:30?\nMessage #team", 2),
              _shot(base + "\nDana: lunch at 12:30?\nMessage #team\nOmar: yes", 4)]
    (op,) = managers.episodic_ops(managers.prepare_batch("u", frames))
    details = op.memory.details.splitlines()
    assert details.count("Dana: lunch at 12:30?") == 1 and details.count("Message #team") == 1
    assert "Omar: yes" in details


def test_a_visits_span_and_live_clock_are_read_on_the_screens_own_clock():
    def shot(text: str, seconds: float) -> InputRecord:  # captured in Lisbon in summer (+01:00)
        return InputRecord(user_id="u", kind=InputKind.screenshot, occurred_at=T0 + timedelta(seconds=seconds),
                           messages=[Message(role="user", content=text, said_offset_minutes=60)],
                           metadata={"app": "Slack", "window_title": "#team"})
    batch = managers.prepare_batch("u", [shot("Mon 03 Jun 10:14\nPriya: the demo moved to Friday", 0),
                                         shot("Mon 03 Jun 10:14\nPriya: the demo moved to Friday\nTom: lunch?", 4)])
    (op,) = managers.episodic_ops(batch)
    assert op.memory.summary == "Viewed Slack — #team (10:14:05–10:14:09): Priya: the demo moved to Friday Tom: lunch?"
    assert op.memory.search_text().startswith("[3 June 2024, 10:14] user: Viewed Slack")


def test_an_updated_window_is_dated_by_the_frame_that_first_showed_its_new_text():
    """The update kept the window's first sighting's time, days before its new text was on screen."""
    existing = ResourceMemory(id="res_d", user_id="u", title="Screenshot of Calendar — June",
                              content="Dentist at 15:00\nSynced 09:14", occurred_at=T0)
    frames = [_shot("Dentist at 15:00\nSynced 09:14", 3 * 86_400, app="Calendar", window="June"),  # 09:14:05
              _shot("Dentist at 16:30\nSynced 09:15", 3 * 86_400 + 60, app="Calendar", window="June"),
              _shot("Dentist at 16:30\nSynced 09:17", 3 * 86_400 + 180, app="Calendar", window="June")]  # clock ticks
    (update,) = managers.resource_ops(managers.prepare_batch("u", frames, find_resource=lambda t: existing))
    assert isinstance(update, UpdateOp) and update.fields["content"] == "Dentist at 16:30\nSynced 09:17"
    assert update.fields["occurred_at"] == T0 + timedelta(days=3, seconds=60)
