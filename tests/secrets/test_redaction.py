"""Texts that are not memories (errors, log lines, rejected writes, chat questions) carry placeholders."""

from __future__ import annotations

import logging
import re
from pathlib import Path

from mirix_py.errors import InvalidInput
from mirix_py.secrets.redaction import LOGGERS, RedactingFilter, guard_logs, scrub, scrub_data

WIFI = "CorrectHorse!42"
PACKAGE = Path(__file__).resolve().parents[2] / "mirix_py"


def test_scrub_replaces_every_secret_and_points_at_known_entries():
    text = f"My bank PIN is 4921 and the wifi password at home is {WIFI}"
    assert scrub(text) == "My bank PIN is [redacted:password] and the wifi password at home is [redacted:password]"
    assert scrub(text, {WIFI: "kv_1"}).endswith("[vault:kv_1]")
    assert scrub("nothing to hide here") == "nothing to hide here"
    assert scrub_data({"detail": [{"msg": f"pass: {WIFI}"}], "n": 3}) == {
        "detail": [{"msg": "pass: [redacted:password]"}], "n": 3}


def test_an_id_whose_digits_pass_the_card_check_is_not_redacted():
    """A memory id is hex: a run of its digits can pass Luhn ("…af6724455545730"), and an error naming
    the id showed "[redacted:card_number]" in its place. A card number stands apart from letters."""
    message = "cannot undo input in_6ce2: epi_6745c4fe312649d09af6724455545730 (changed later by api)"
    assert scrub(message) == message
    assert scrub("card: 4111 1111 1111 1111, and 4111111111111111.") == \
        "card: [redacted:card_number], and [redacted:card_number]."


def test_every_package_logger_is_guarded():
    used = set()
    for path in PACKAGE.rglob("*.py"):
        used.update(re.findall(r"getLogger\(\"([^\"]+)\"\)", path.read_text(encoding="utf-8")))
    assert used <= set(LOGGERS), sorted(used - set(LOGGERS))


def test_log_lines_and_tracebacks_hold_placeholders(caplog):
    guard_logs()
    guard_logs()  # idempotent: one filter per logger
    logger = logging.getLogger("mirix_py.store")
    assert sum(isinstance(f, RedactingFilter) for f in logger.filters) == 1
    with caplog.at_level(logging.WARNING, logger="mirix_py.store"):
        logger.warning("write failed for %r", f"Door code: 7781 and pass: {WIFI}")
        try:
            raise InvalidInput(f"bad value 'the wifi password at home is {WIFI}'")
        except InvalidInput:
            logger.exception("apply failed")
    text = caplog.text + "".join(r.exc_text or "" for r in caplog.records)
    assert WIFI not in text and "7781" not in text
    assert "[redacted:password]" in text and "InvalidInput" in text


def test_chat_question_is_redacted_before_topics_and_kept_for_the_vault(mx, user_id):
    response = mx.chat(f"remember: the wifi password at home is {WIFI}", user_id=user_id)
    assert WIFI not in response.model_dump_json()
    mx.flush()
    vault = [mx.get(v.id, user_id=user_id, reveal=True).secret_value
             for v in mx.list(user_id=user_id, memory_types=["knowledge_vault"])]
    assert WIFI in vault


def test_failed_input_error_is_stored_redacted(mx, user_id):
    from mirix_py.records import InputStatus

    result = mx.add("hello there", user_id=user_id)
    mx.inputs.mark(result.input_ids, InputStatus.failed, f"model said: the wifi password at home is {WIFI}")
    record = mx.input_status(result.input_ids[0])
    assert WIFI not in (record.error or "") and "[redacted:password]" in record.error


def test_window_title_secret_goes_to_the_vault(user_id):
    from mirix_py.agents.offline.managers import prepare_batch
    from mirix_py.records import InputKind, InputRecord, Message, utcnow

    record = InputRecord(user_id=user_id, kind=InputKind.screenshot, messages=[Message(role="user", content="Inbox")],
                         occurred_at=utcnow(),
                         metadata={"app": "Notes", "window_title": f"pass: {WIFI} - Notes"})
    batch = prepare_batch(user_id, [record])
    assert WIFI not in str(batch.messages[0].metadata)
    assert [op.memory.secret_value for op in batch.vault_ops] == [WIFI]


def test_sdk_errors_that_quote_the_input_hold_placeholders(mx, user_id):
    import pytest

    with pytest.raises(InvalidInput) as bad_date:
        mx.add("hello", user_id=user_id, occurred_at=f"the wifi password at home is {WIFI}")
    episode = mx.add("met Bob", user_id=user_id).changes[0].memory_id
    with pytest.raises(InvalidInput) as bad_field:
        mx.update(episode, user_id=user_id, event_type={"said": f"pass: {WIFI}"})
    for exc in (bad_date.value, bad_field.value):
        assert WIFI not in str(exc) and "[redacted:password]" in str(exc)


def test_rest_error_bodies_hold_placeholders():
    from mirix_py.server.errors import error_response

    body = error_response(422, "invalid_input", f"bad value: pass: {WIFI}", [{"msg": "Door code: 7781", "input": f"wifi password is {WIFI}"}]).body
    assert WIFI.encode() not in body and b"7781" not in body and b"[redacted:password]" in body
