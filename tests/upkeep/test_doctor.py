"""`doctor` finds and repairs disagreement between SQL and the vector index."""

from __future__ import annotations

import hashlib

import pytest
from cryptography.fernet import Fernet
from sqlalchemy import update
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col

from mirix_py.engine import Mirix
from mirix_py.settings import Settings
from mirix_py.store.crypto import Cipher, VaultKeyError
from mirix_py.store.tables import InputRow, MemoryRow
from mirix_py.store.vectors import VectorItem


class HashEmbedder:
    """A tiny deterministic embedder standing in for "the model changed" (other name, other size)."""

    name = "hash-16"
    dim = 16

    def embed(self, texts):
        out = []
        for text in texts:
            digest = hashlib.sha256(text.encode()).digest()
            out.append([b / 255 for b in digest[:16]])
        return out


@pytest.fixture
def seeded(mx, user_id):
    mx.add([{"role": "user", "content": "I planted tulips in the front garden."},
            {"role": "user", "content": "My password is Tulip-77-Garden"}], user_id=user_id)
    return mx


def test_clean_store_is_clean(seeded):
    report = seeded.doctor()
    assert report.clean, report.summary()


def test_missing_and_orphan_vectors_are_repaired(seeded, user_id):
    ids = sorted(seeded.store.vectors.ids(user_id))
    seeded.store.vectors.delete(user_id, ids[:1])
    orphan = VectorItem("epi_" + "f" * 32, [0.1] * 384, "episodic")
    if seeded.store.vectors.transactional:  # pgvector: a vector references its row, no orphan can exist
        with pytest.raises(IntegrityError):
            seeded.store.vectors.upsert(user_id, [orphan])
    else:
        seeded.store.vectors.upsert(user_id, [orphan])
    orphans = [] if seeded.store.vectors.transactional else [orphan.id]
    report = seeded.doctor()
    assert report.rows_without_vectors == ids[:1]
    assert report.vectors_without_rows == orphans
    fixed = seeded.doctor(repair=True)
    graphs = {"tenant_indexes": 0} if seeded.describe()["vectors"] == "pgvector" else {}  # no user is large
    assert fixed.clean and fixed.repaired == {"reembedded": 1, "orphans_deleted": len(orphans), "reindexed": 0,
                                              "compacted": 0, "modes_narrowed": 0, "indexes_rebuilt": 0, **graphs}
    assert seeded.search("tulips", user_id=user_id, method="embedding")[0].memory.id in ids


def test_changed_embedder_reembeds_everything(tmp_path, embedder, user_id):
    with Mirix(tmp_path / "d", embedder=embedder) as mx:
        mx.add("I planted tulips in the front garden.", user_id=user_id)
        count = len(mx.list(user_id=user_id))
    with Mirix(tmp_path / "d", embedder=HashEmbedder()) as mx:
        report = mx.doctor()
        assert len(report.stale_embeddings) == count and report.embedder == "hash-16"
        seen = []
        fixed = mx.doctor(repair=True, progress=lambda items, total: (seen.append(total), items)[1])
        assert fixed.clean and fixed.repaired["reembedded"] == count and seen == [1]
        assert mx.search("I planted tulips in the front garden.", user_id=user_id, method="embedding")


def test_wrong_vault_key_is_reported(tmp_path, embedder, user_id):
    with Mirix(tmp_path / "d", embedder=embedder) as mx:
        secret_input = mx.add("my password is Tulip-77-Garden", user_id=user_id).input_ids[0]
    other = Settings(data_dir=tmp_path / "d", vault_key=Fernet.generate_key().decode())
    with pytest.raises(VaultKeyError, match="every process must use the same MIRIX_VAULT_KEY"):  # refused at open
        Mirix(settings=other, embedder=embedder)
    with Mirix(tmp_path / "d", embedder=embedder) as mx:  # values written under another key, beside its own
        mx.add("I planted tulips in the front garden.", user_id=user_id)
        foreign = Cipher(Fernet.generate_key()).encrypt("{}")
        with Session(mx.engine) as session:
            session.execute(update(MemoryRow).where(col(MemoryRow.secret).is_not(None)).values(secret=foreign))
            session.execute(update(InputRow).where(col(InputRow.id) == secret_input).values(payload=foreign))
            session.commit()
        report = mx.doctor(repair=True)
        assert len(report.undecryptable_secrets) == 1 and len(report.undecryptable_inputs) == 1
        assert not report.clean


def test_doctor_cli_exit_codes(tmp_path, monkeypatch, user_id):
    from typer.testing import CliRunner

    from mirix_py.cli.commands import app

    monkeypatch.setenv("MIRIX_DATA_DIR", str(tmp_path / "cli"))
    runner = CliRunner()
    runner.invoke(app, ["add", "Fed the cat at noon", "--user", user_id, "--create"])
    out = runner.invoke(app, ["doctor", "--json"])
    assert out.exit_code == 0 and '"clean": true' in out.stdout


class RecordingEmbedder(HashEmbedder):
    """HashEmbedder that notes every text it is given."""

    def __init__(self):
        self.texts = []

    def embed(self, texts):
        self.texts.extend(texts)
        return super().embed(texts)


def test_repair_embeds_the_text_ingestion_embedded(tmp_path, user_id):
    recorder = RecordingEmbedder()
    with Mirix(tmp_path / "d", embedder=recorder) as mx:
        mx.add("I planted tulips in the front garden.", user_id=user_id, occurred_at="2024-04-02T18:30:00+00:00")
        episode = next(m for m in mx.list(user_id=user_id) if m.memory_type.value == "episodic")
        # an episode is searched and shown with "[2 April 2024, 18:30]", embedded without the date
        assert episode.search_text().startswith("[2 April 2024, 18:30] ")
        assert episode.embedding_text() == "user: I planted tulips in the front garden."
        assert episode.embedding_text() in recorder.texts
        assert not any("2024" in t for t in recorder.texts)
        mx.store.vectors.delete(user_id, [episode.id])
        recorder.texts.clear()
        assert mx.doctor(repair=True).repaired["reembedded"] == 1
        assert recorder.texts == [episode.embedding_text()]


def test_an_episode_whose_actor_column_lost_its_actor_is_written_again(mx, user_id):
    from sqlalchemy import update
    from sqlmodel import Session

    from mirix_py.tools.ops import InsertOp
    from mirix_py.records import EpisodicMemory
    from mirix_py.store.tables import MemoryRow

    (change,) = mx.store.apply([InsertOp(memory=EpisodicMemory(user_id=user_id, summary="Bye!", actor="Jon"))],
                               user_id=user_id, actor="seed")
    with Session(mx.store.engine) as session:  # as a row written behind the store's back
        session.execute(update(MemoryRow).where(MemoryRow.id == change.memory_id).values(actor=None))
        session.commit()
    assert mx.store.actors(user_id=user_id) == []
    report = mx.doctor()
    assert report.stale_texts == [change.memory_id] and not report.clean
    assert mx.doctor(repair=True).clean
    assert mx.store.actors(user_id=user_id) == ["Jon"]


def test_search_texts_of_an_older_version_are_rerendered_and_reindexed(mx, user_id):
    from sqlalchemy import update
    from sqlmodel import Session

    from mirix_py.tools.ops import InsertOp
    from mirix_py.records import ResourceMemory, type_fields
    from mirix_py.store.tables import MemoryRow

    pages = [f"Page {i}. Minutes of the garden committee: hedges, compost and the watering rota." for i in range(60)]
    pages[47] = "Page 47. The boiler service code is kept in the red binder in the cellar."
    (change,) = mx.store.apply([InsertOp(memory=ResourceMemory(
        user_id=user_id, title="House manual", content="\n".join(pages)))], user_id=user_id, actor="seed")
    memory_id = change.memory_id
    assert mx.doctor().clean
    # as an older version wrote it: the opening of the content only, indexed as such, every field whole
    old = "House manual (text):\n" + " ".join(pages)[:1000]
    fields = type_fields(mx.get(memory_id, user_id=user_id))
    with Session(mx.store.engine) as session:
        session.execute(update(MemoryRow).where(MemoryRow.id == memory_id).values(text=old, fields=fields))
        session.flush()
        mx.store.fulltext.upsert(session.connection(), [(memory_id, user_id, "resource", old)])
        session.commit()
    assert not mx.search("boiler service code", user_id=user_id, method="bm25")
    report = mx.doctor()
    assert report.stale_texts == [memory_id] and not report.clean
    fixed = mx.doctor(repair=True)
    assert fixed.clean and fixed.repaired["reindexed"] == 1
    (hit,) = mx.search("boiler service code", user_id=user_id, method="bm25")
    assert hit.memory.id == memory_id and "red binder in the cellar" in hit.text
    with Session(mx.store.engine) as session:  # and the content is now kept once, in the search text
        row = session.get(MemoryRow, memory_id)
        assert "content" not in row.fields and pages[47] in row.text


def test_a_row_that_no_longer_reads_is_reported_and_left_alone(mx, user_id):
    from sqlalchemy import update
    from sqlmodel import Session

    from mirix_py.tools.ops import InsertOp
    from mirix_py.records import ResourceMemory
    from mirix_py.store.tables import MemoryRow

    content = "Page 47. The boiler service code is kept in the red binder in the cellar."
    (change,) = mx.store.apply([InsertOp(memory=ResourceMemory(user_id=user_id, title="House manual",
                                                                content=content))], user_id=user_id, actor="seed")
    with Session(mx.store.engine) as session:  # a hand edit of the text leaves the content's reference dangling
        session.execute(update(MemoryRow).where(MemoryRow.id == change.memory_id).values(text="House manual"))
        session.commit()
    report = mx.doctor()
    assert report.unreadable_rows == [change.memory_id] and not report.clean
    assert report.summary()["unreadable_rows"] == 1
    fixed = mx.doctor(repair=True)  # nothing to rebuild it from: still reported, nothing else touched
    assert fixed.unreadable_rows == [change.memory_id] and fixed.stale_texts == []


def test_rows_written_before_the_single_copy_layout_are_counted_and_compacted_by_repair(mx, user_id):
    from sqlalchemy import update
    from sqlmodel import Session

    from mirix_py.tools.ops import InsertOp
    from mirix_py.records import EpisodicMemory, type_fields
    from mirix_py.store.tables import MemoryRow

    details = "The boiler service code is kept in the red binder, on the shelf in the cellar."
    (change,) = mx.store.apply([InsertOp(memory=EpisodicMemory(
        user_id=user_id, summary="Read the house manual while waiting for the plumber", details=details))],
        user_id=user_id, actor="seed")
    memory = mx.get(change.memory_id, user_id=user_id)
    with Session(mx.store.engine) as session:  # as an older version wrote it: every field whole
        session.execute(update(MemoryRow).where(MemoryRow.id == change.memory_id).values(fields=type_fields(memory)))
        session.commit()
    report = mx.doctor()
    assert report.clean and report.compactable_rows == [change.memory_id]  # not a fault
    fixed = mx.doctor(repair=True)
    assert fixed.repaired["compacted"] == 1 and fixed.compactable_rows == [] and fixed.clean
    with Session(mx.store.engine) as session:
        assert details not in str(session.get(MemoryRow, change.memory_id).fields)
    assert mx.get(change.memory_id, user_id=user_id) == memory


def test_a_vector_no_search_reaches_is_reported_and_the_index_rebuilt(seeded, user_id, monkeypatch):
    """An approximate index can lose a live node: `get` still has it, no query returns it
    (chroma-core/chroma#7758). `doctor` reports what the index's self-query check finds (here one
    lost node, until a rebuild); repair rebuilds that user's index from the stored vectors."""
    index = seeded.store.vectors
    lost = sorted(index.ids(user_id))[0]
    rebuild = type(index).rebuild
    rebuilt: list[str] = []

    def rebuilding(self, user):
        rebuilt.append(user)
        return rebuild(self, user)

    monkeypatch.setattr(type(index), "unreachable", lambda self, user, k=10, only=None: [] if rebuilt else [lost])
    monkeypatch.setattr(type(index), "rebuild", rebuilding)
    before = {m.id for m in seeded.list(user_id=user_id)}
    report = seeded.doctor()
    assert report.unreachable_vectors == [lost] and not report.clean
    fixed = seeded.doctor(repair=True)
    assert fixed.clean and fixed.repaired["indexes_rebuilt"] == 1 and rebuilt == [user_id]
    assert lost in index.ids(user_id) and {m.id for m in seeded.list(user_id=user_id)} == before
    vector = index.get(user_id, [lost])[lost]
    assert index.query(user_id, vector, 3)[0][0] == lost


def test_a_vector_that_looked_lost_while_another_engine_wrote_is_checked_again(seeded, user_id, monkeypatch):
    """The self-query pass reads a user's vectors, then queries with them: a vector another engine
    rewrote or deleted in between looked lost. Only what a second query still misses is reported,
    and repair rebuilds nothing for it."""
    index = seeded.store.vectors
    racing = sorted(index.ids(user_id))[0]
    check = type(index).unreachable
    asked: list = []

    def first_pass_races(self, user, k=10, only=None):
        asked.append(only)
        return [racing] if only is None else check(self, user, k, only=only)

    monkeypatch.setattr(type(index), "unreachable", first_pass_races)
    monkeypatch.setattr(type(index), "rebuild", lambda self, user: pytest.fail("rebuilt an index that lost nothing"))
    report = seeded.doctor()
    assert report.unreachable_vectors == [] and report.clean, report.summary()
    assert asked == [None, [racing]]  # the whole pass, then the one id again
    assert seeded.doctor(repair=True).clean


def test_repair_keeps_the_vector_of_a_memory_written_after_the_diagnosis(seeded, user_id):
    """A diagnosis reads the rows before the vectors: a memory another engine wrote in between looks
    like an orphan. Repair deleted its vector; now it looks at the rows again first."""
    from mirix_py.upkeep.doctor import diagnose, repair

    ids = sorted(seeded.store.vectors.ids(user_id))
    stale = diagnose(seeded.store)
    stale.vectors_without_rows = [ids[0]]  # as a diagnosis racing that write saw it
    repair(seeded.store, stale)
    assert ids[0] in seeded.store.vectors.ids(user_id)
    assert seeded.doctor().clean


def _damage(mx, user_id) -> tuple[list[str], list[str]]:
    """Real damage that stays: one memory's vector lost and, where the index allows it, a vector
    with no row. Returns (rows without vectors, vectors without rows)."""
    index = mx.store.vectors
    lost = sorted(index.ids(user_id))[:1]
    index.delete(user_id, lost)
    if index.transactional:  # pgvector: a vector references its row, no orphan can exist
        return lost, []
    orphan = VectorItem("epi_" + "f" * 32, [0.1] * 384, "episodic")
    index.upsert(user_id, [orphan])
    return lost, [orphan.id]


def _at_first_vector_read(monkeypatch, index, step, *, before: bool) -> list[str]:
    """Run `step` once, just before (or after) the doctor's first pass reads a user's vector ids; it
    read every row before: another engine's write landing between the doctor's reads. Returns the
    users whose vectors were read."""
    read = index.ids
    users: list[str] = []

    def reading(user_id):
        users.append(user_id)
        if before and len(users) == 1:
            step()
        ids = read(user_id)
        if not before and len(users) == 1:
            step()
        return ids

    monkeypatch.setattr(index, "ids", reading)
    return users


def test_a_memory_written_between_the_doctors_reads_is_not_reported_and_real_damage_is(seeded, user_id,
                                                                                       monkeypatch):
    """A writer beside a read-only doctor: its memory, row and vector, lands after the doctor read
    the rows and before it read the vectors. Its vector is no orphan (the row is there when looked
    at again); the vector lost and the orphan vector, still apart then, are reported."""
    lost, orphans = _damage(seeded, user_id)
    before = seeded.store.vectors.ids(user_id)
    users = _at_first_vector_read(monkeypatch, seeded.store.vectors, lambda: _add_a_memory(seeded, user_id),
                                  before=True)
    report = seeded.doctor()
    monkeypatch.undo()
    assert users == [user_id]
    assert seeded.store.vectors.ids(user_id) - before  # the write added vectors the first pass saw
    assert report.rows_without_vectors == lost and report.vectors_without_rows == orphans
    assert not report.clean


class HeldMirror:
    """A writer's vector writes held back after its rows are committed (a writer commits the rows,
    then mirrors the vectors): they land when `land` runs."""

    def __init__(self, monkeypatch, index):
        self.index, self.held = index, []
        self.upsert, self.delete = index.upsert, index.delete
        monkeypatch.setattr(index, "upsert", lambda user, items: self.held.append((self.upsert, user, items)))
        monkeypatch.setattr(index, "delete", lambda user, ids: self.held.append((self.delete, user, ids)))

    def land(self) -> None:
        for write, user, items in self.held:
            write(user, items)
        self.held.clear()


def _add_a_memory(mx, user_id) -> None:
    mx.add("I adopted a parrot named Kiwi.", user_id=user_id)


def _delete_a_memory(mx, user_id) -> None:
    vectored = mx.store.vectors.ids(user_id)
    mx.delete(next(m.id for m in mx.list(user_id=user_id) if m.id in vectored), user_id=user_id)


@pytest.mark.parametrize("write", [_add_a_memory, _delete_a_memory], ids=["insert", "delete"])
def test_a_write_whose_vectors_land_during_the_doctors_pass_is_not_reported_and_real_damage_is(seeded, user_id,
                                                                                               monkeypatch, write):
    """A writer's rows are committed before the doctor reads them; its vectors land after the doctor
    read the vectors. The first pass sees a row without its vector (an insert) or a vector without
    its row (a delete); looked at again they agree. The damage that stays is reported."""
    if seeded.store.vectors.transactional:
        pytest.skip("pgvector writes the vectors in the rows' transaction: there is no mirror to wait for")
    lost, orphans = _damage(seeded, user_id)
    mirror = HeldMirror(monkeypatch, seeded.store.vectors)
    write(seeded, user_id)
    monkeypatch.undo()
    assert mirror.held  # the write's vectors are not in the index yet
    users = _at_first_vector_read(monkeypatch, seeded.store.vectors, mirror.land, before=False)
    report = seeded.doctor()
    monkeypatch.undo()
    assert users == [user_id] and not mirror.held
    assert report.rows_without_vectors == lost and report.vectors_without_rows == orphans
    fixed = seeded.doctor(repair=True)
    assert fixed.clean and fixed.repaired["reembedded"] == len(lost)
    assert fixed.repaired["orphans_deleted"] == len(orphans)


def test_a_row_whose_vector_lands_during_the_doctors_pass_is_still_checked_for_its_embedder(seeded, user_id,
                                                                                            monkeypatch):
    """The row's vector was missing at the first look and there at the second: it is no missing
    vector, but made by another model it is a stale embedding, as when the first look saw it."""
    from sqlalchemy import update
    from sqlmodel import Session

    from mirix_py.store.tables import MemoryRow

    if seeded.store.vectors.transactional:
        pytest.skip("pgvector writes the vectors in the rows' transaction: there is no mirror to wait for")
    before = {m.id for m in seeded.list(user_id=user_id)}
    mirror = HeldMirror(monkeypatch, seeded.store.vectors)
    _add_a_memory(seeded, user_id)
    monkeypatch.undo()
    written = sorted({m.id for m in seeded.list(user_id=user_id)} - before)
    with Session(seeded.store.engine) as session:
        session.execute(update(MemoryRow).where(MemoryRow.id.in_(written)).values(embedding_model="older-model"))
        session.commit()
    _at_first_vector_read(monkeypatch, seeded.store.vectors, mirror.land, before=False)
    report = seeded.doctor()
    assert written and report.rows_without_vectors == [] and report.vectors_without_rows == []
    assert sorted(report.stale_embeddings) == written
