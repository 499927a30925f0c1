"""A vault entry answers questions about its own subject: another person's number, or another
system's password, follows what matches the question otherwise."""

from mirix_py.records import KnowledgeVaultMemory
from mirix_py.secrets.detection import find_secrets
from mirix_py.store.vault_subject import about_another, weigh_down_other_subjects


def _entry(text: str, memory_id: str = "kv_1") -> KnowledgeVaultMemory:
    [match] = find_secrets(text)
    return KnowledgeVaultMemory(id=memory_id, user_id="u", entry_type=match.entry_type, caption=match.caption,
                                secret_value=match.value)


DANA = _entry("Dana Natarajan works at Acme as a product manager. You can reach me at +1 415 555 0222 any time.")
STAGING = _entry("Priya: the staging password is xvhfauPEzD-PxWy")


def test_a_question_about_someone_else_is_not_answered_by_this_entry():
    assert about_another("What is Mei Chen's phone number?", DANA)
    assert about_another("What is the production database password?", STAGING)


def test_a_question_about_its_subject_or_only_its_kind_is():
    assert not about_another("What is Dana's phone number?", DANA)
    assert not about_another("phone number", DANA)
    assert not about_another("What is my phone number?", DANA)
    assert not about_another("What's the staging password?", STAGING)
    assert not about_another("password", STAGING)


def _phone(around: str) -> KnowledgeVaultMemory:
    return KnowledgeVaultMemory(id="kv_3", user_id="u", entry_type="phone_number",
                                caption=f"phone number mentioned: '{around}'", secret_value="081 234 5678")


def test_a_chinese_or_thai_question_meets_the_words_around_the_value_as_full_text_does():
    """A word inside a run written without spaces is matched by its letter or cluster pairs, on the
    question's side and the caption's alike."""
    wang = _phone("王伟的手机号是 [secret]")  # Wang Wei's mobile number is
    assert not about_another("王伟的号码", wang)  # Wang Wei's number
    assert not about_another("王伟", wang)
    assert about_another("李娜的号码", wang)  # Li Na's number
    somchai = _phone("เบอร์โทรของสมชายคือ [secret]")  # Somchai's phone number is
    assert not about_another("เบอร์ของสมชาย", somchai)
    assert not about_another("สมชาย", somchai)
    assert about_another("มานี", somchai)  # Manee


def test_a_caption_written_otherwise_is_read_whole():
    entry = KnowledgeVaultMemory(id="kv_2", user_id="u", entry_type="password", caption="Wi-Fi at the Lisbon flat",
                                 secret_value="x")
    assert not about_another("What is the wifi password in Lisbon?", entry)
    assert about_another("What is the wifi password in Porto?", entry)


def test_only_entries_about_another_subject_move_down_and_the_rest_keep_their_order():
    records = {"kv_1": DANA, "kv_2": _entry("Mei Chen: call me on 415 555 0199", "kv_2"), "epi_1": object()}
    ranked = [("kv_1", 0.9), ("kv_2", 0.8), ("epi_1", 0.5)]
    assert [i for i, _ in weigh_down_other_subjects(ranked, records, "What is Mei Chen's phone number?")] == [
        "kv_2", "epi_1", "kv_1"]
    assert weigh_down_other_subjects(ranked, records, "phone number") == ranked
