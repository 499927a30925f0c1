"""The store's secret guard: whatever writes a memory (API, import, a model, the rules), its texts
hold placeholders and the secrets go into the vault."""

from __future__ import annotations

import io
import json
import re
from datetime import datetime, timezone

import pytest

from mirix_py.secrets.detection import find_secrets
from mirix_py.tools.ops import InsertOp
from mirix_py.records import CoreMemory, EpisodicMemory, KnowledgeVaultMemory, ProceduralMemory, SemanticMemory
from mirix_py.secrets.guard import Known, SecretGuard

WIFI = "CorrectHorse!42"
GUARD = SecretGuard(find_secrets)


def _has(text: str, value: str) -> bool:
    """`value` as a whole token (a short one may sit inside a random hex id or a ciphertext)."""
    return re.search(r"(?<![A-Za-z0-9])" + re.escape(value) + r"(?![A-Za-z0-9])", text) is not None


def _vault(mx, user_id):
    return {mx.get(v.id, user_id=user_id, reveal=True).secret_value: v
            for v in mx.list(user_id=user_id, memory_types=["knowledge_vault"], limit=1000)}


def test_clean_moves_each_secret_into_a_new_vault_entry():
    memory = EpisodicMemory(id="ep_1", user_id="u", summary=f"wifi password is {WIFI}",
                            details="login: ada / pass: tr0ub4dor&3")
    cleaned, vault = GUARD.clean(memory, Known())
    assert {v.secret_value for v in vault} == {WIFI, "tr0ub4dor&3"}
    assert WIFI not in cleaned.summary and "tr0ub4dor&3" not in cleaned.details
    assert f"[vault:{vault[0].id}]" in cleaned.summary + cleaned.details
    assert all(v.secret_value not in v.caption for v in vault)


def test_clean_reuses_known_values_and_leaves_placeholders_alone():
    known = Known()
    known.add("Zebra-Lamp-77", "kv_known")  # a value a model vaulted that the rules would not find
    memory = ProceduralMemory(user_id="u", id="pr_1", summary="Unlock the NAS",
                              steps=["type Zebra-Lamp-77 at the prompt", "keep [vault:kv_4111111111111111] as is"])
    cleaned, vault = GUARD.clean(memory, known)
    assert vault == []
    assert cleaned.steps == ["type [vault:kv_known] at the prompt", "keep [vault:kv_4111111111111111] as is"]


def test_clean_rewrites_the_lines_a_core_block_dates_as_it_rewrites_the_block():
    line = f"wifi password is {WIFI}"
    when = datetime(2026, 5, 2, tzinfo=timezone.utc)
    block = CoreMemory(id="core_1", user_id="u", label="human", value=f"likes tea\n{line}", said={line: when})
    cleaned, vault = GUARD.clean(block, Known())
    assert [v.secret_value for v in vault] == [WIFI]
    cleaned_line = cleaned.value.splitlines()[1]
    assert WIFI not in cleaned_line and cleaned.said == {cleaned_line: when}  # the block's line and its date still meet


def test_clean_vault_caption_never_holds_a_secret():
    entry = KnowledgeVaultMemory(user_id="u", id="kv_1", entry_type="password", secret_value=WIFI,
                                 caption=f"home wifi {WIFI}, door code: 7781")
    cleaned, vault = GUARD.clean(entry, Known())
    assert vault == [] and cleaned.secret_value == WIFI
    assert cleaned.caption == "home wifi [secret], door code: [secret]"


def test_api_writes_are_guarded(mx, user_id):
    episode = mx.store.apply([InsertOp(memory=EpisodicMemory(user_id=user_id, summary="met Bob"))],
                             user_id=user_id, actor="api")[0].memory_id
    updated = mx.update(episode, user_id=user_id, summary=f"Bob: the wifi password at home is {WIFI}")
    assert WIFI not in updated.summary and "[vault:kv_" in updated.summary
    core = mx.core_append("human", "My bank PIN is 4921", user_id=user_id)
    assert not _has(core.value, "4921") and "[vault:kv_" in core.value
    assert {WIFI, "4921"} <= set(_vault(mx, user_id))
    for event in mx.history(episode, user_id=user_id):
        assert WIFI not in json.dumps([event.before, event.after])


def test_a_new_secret_where_an_earlier_one_was_gets_an_entry_of_its_own(mx, user_id):
    """The guard names a new entry by the memory, the field and the place in it: a second update
    with another secret in the same place took the first one's id (IntegrityError)."""
    episode = mx.store.apply([InsertOp(memory=EpisodicMemory(user_id=user_id, summary="met Bob"))],
                             user_id=user_id, actor="api")[0].memory_id
    for password in ("Zq9!mTr7#pLx", "Hk2@vBn8$wQz", "Zq9!mTr7#pLx"):
        updated = mx.update(episode, user_id=user_id, summary=f"my password is {password}")
        assert password not in updated.summary and "[vault:kv_" in updated.summary
    assert {"Zq9!mTr7#pLx", "Hk2@vBn8$wQz"} <= set(_vault(mx, user_id))
    assert mx.get(episode, user_id=user_id).summary == updated.summary


def test_a_value_in_the_vault_is_redacted_from_later_writes(mx, user_id):
    mx.store.apply([InsertOp(memory=KnowledgeVaultMemory(user_id=user_id, entry_type="password",
                                                         secret_value="Zebra-Lamp-77", caption="NAS unlock"))],
                   user_id=user_id, actor="knowledge_vault_memory_manager")
    mx.store.apply([InsertOp(memory=SemanticMemory(user_id=user_id, name="NAS", summary="unlocks with Zebra-Lamp-77"))],
                   user_id=user_id, actor="semantic_memory_manager")
    fact = mx.list(user_id=user_id, memory_types=["semantic"])[0]
    assert "Zebra-Lamp-77" not in fact.summary and "[vault:kv_" in fact.summary
    assert all("Zebra-Lamp-77" not in h.text for h in mx.search("NAS unlocks", user_id=user_id))


def test_import_of_plaintext_is_guarded(mx, user_id):
    line = {"memory": EpisodicMemory(id="ep_old", user_id=user_id, summary="Door code: 7781").model_dump(mode="json"),
            "secret_ciphertext": None}
    assert mx.import_([json.dumps(line)])["imported"] == 2  # the episode and the vault entry it gave
    assert not _has(mx.get("ep_old", user_id=user_id).summary, "7781")
    out = io.StringIO()
    mx.export(out, user_id=user_id)
    assert not _has(out.getvalue(), "7781") and "7781" in _vault(mx, user_id)


def test_offline_flow_output_is_unchanged_by_the_guard(mx, user_id):
    """The rules already redact: the guard finds nothing more and adds no vault entry."""
    result = mx.add(f"My bank PIN is 4921 and the wifi password at home is {WIFI}", user_id=user_id)
    vault = [c for c in result.changes if c.memory_type.value == "knowledge_vault"]
    assert len(vault) == 2 and {c.actor for c in vault} == {"knowledge_vault_memory_manager"}


def test_the_detector_reads_each_distinct_text_once():
    seen: list[str] = []

    def counting(text: str):
        seen.append(text)
        return find_secrets(text)

    guard = SecretGuard(counting)
    memory = EpisodicMemory(id="ep_2", user_id="u", summary=f"wifi password is {WIFI}",
                            details=f"wifi password is {WIFI}")
    first, vault_first = guard.clean(memory, Known())
    again, vault_again = guard.clean(memory, Known())
    assert seen.count(f"wifi password is {WIFI}") == 1
    assert first == again and [v.secret_value for v in vault_first] == [v.secret_value for v in vault_again] == [WIFI]
    assert first == GUARD.clean(memory, Known())[0]  # the same result as a guard that never read it


def test_the_detector_cache_forgets_the_oldest_text():
    seen: list[str] = []
    guard = SecretGuard(lambda text: seen.append(text) or find_secrets(text), cache_size=2)
    for text in ("one", "two", "three", "one"):
        guard.matches(text)
    assert seen == ["one", "two", "three", "one"]


# A key written straight against letters of another script, or cut by a zero-width character: each
# case its own key, so that no case meets another's in the vault.
KEY = "sk-live-7Hq2Xe4Rt6Yu8Io0Pa2Sd4F"
KEYS_IN_OTHER_SCRIPTS = {
    "chinese": (f"我的API密钥是{KEY}a1请记住。", f"{KEY}a1"),
    "japanese": (f"APIキーは{KEY}b2です。", f"{KEY}b2"),
    "korean particle": (f"제 API 키는 {KEY}c3입니다.", f"{KEY}c3"),
    "arabic": (f"المفتاح{KEY}d4شكرا", f"{KEY}d4"),
    "hebrew": (f"המפתח שלי{KEY}e5תודה", f"{KEY}e5"),
    "cyrillic": (f"Ключ:{KEY}f6спасибо", f"{KEY}f6"),
    "e acute": (f"La clé est {KEY}g7é merci", f"{KEY}g7"),
    "aws": ("AWS密钥AKIAQ3EGT6LMNOP4RSTU不要告诉别人", "AKIAQ3EGT6LMNOP4RSTU"),
    "github": ("GitHub令牌ghp_Q3eGt6LmNoP4rStU8vWxY2zA5bC7dE9fG1hJ在这里", "ghp_Q3eGt6LmNoP4rStU8vWxY2zA5bC7dE9fG1hJ"),
    "zero-width space inside": (f"My API key is {KEY[:16]}\u200b{KEY[16:]}h8 ok.", f"{KEY}h8"),
}


def _pieces(key: str) -> list[str]:
    """The key and its ends: a key vaulted up to a zero-width space left its last 17 characters."""
    return [key, key[:12], key[-12:]]


@pytest.mark.parametrize("text, key", list(KEYS_IN_OTHER_SCRIPTS.values()), ids=list(KEYS_IN_OTHER_SCRIPTS))
def test_add_vaults_a_key_next_to_another_script_whole(mx_sqlite, user_id, text, key):
    mx_sqlite.add([{"role": "user", "content": text}], user_id=user_id)
    assert list(_vault(mx_sqlite, user_id)) == [key]
    memories = json.dumps([m.model_dump(mode="json") for m in mx_sqlite.list(user_id=user_id, limit=100)],
                          ensure_ascii=False)
    out = io.StringIO()
    mx_sqlite.export(out, user_id=user_id)
    assert not [p for p in _pieces(key) if p in memories or p in out.getvalue()]
    assert "[vault:kv_" in memories


def test_api_writes_vault_a_key_next_to_chinese(mx_sqlite, user_id):
    text, key = KEYS_IN_OTHER_SCRIPTS["chinese"]
    episode = mx_sqlite.store.apply([InsertOp(memory=EpisodicMemory(user_id=user_id, summary="met Bob"))],
                                    user_id=user_id, actor="api")[0].memory_id
    updated = mx_sqlite.update(episode, user_id=user_id, summary=text)
    core = mx_sqlite.core_append("human", f"Li的API密钥是{KEY}z9。", user_id=user_id)
    assert key not in updated.summary and "[vault:kv_" in updated.summary
    assert f"{KEY}z9" not in core.value and "[vault:kv_" in core.value
    assert {key, f"{KEY}z9"} == set(_vault(mx_sqlite, user_id))
