"""Searches on a streaming replica (`Settings.database_read_url`): `search`, chat and `/context` read
the replica; writes, `get` and ingestion stay on the primary. The replica is a real hot standby of the
pgvector server (scripts/services.sh); pausing its replay shows which database a read went to."""

from __future__ import annotations

from contextlib import contextmanager

import pytest
from pydantic import ValidationError

from mirix_py.engine import Mirix
from mirix_py.errors import InvalidInput
from mirix_py.integrations.context import retrieve_context
from mirix_py.llm.scripted import ScriptedChatCompletionClient
from mirix_py.settings import Settings
from standby import replay_paused, wait_replayed


def layout_of(vectors: str, chroma_url: str, tmp_path) -> dict[str, str]:
    return ({"vector_store": "pgvector"} if vectors == "pgvector"
            else {"vector_store": "chroma", "chroma_url": chroma_url.rstrip("/") + "/t_" + tmp_path.name[-12:]})


@contextmanager
def reader_and_writer(tmp_path, embedder, urls: tuple[str, str], layout: dict[str, str]):
    """An engine whose searches read the replica, and another on the same primary without one (another
    process of the service, whose writes the first has no mark of)."""
    primary, replica = urls
    settings = Settings(data_dir=tmp_path / "data", database_url=primary, database_read_url=replica, **layout)
    with Mirix(settings=settings, embedder=embedder) as mx, \
            Mirix(settings=Settings(data_dir=tmp_path / "data", database_url=primary, **layout),
                  embedder=embedder) as writer:
        yield mx, writer


@pytest.mark.parametrize("vectors", ["pgvector", "chroma-server"])
def test_searches_chat_and_context_read_the_replica_and_writes_the_primary(tmp_path, embedder, pgvector_replica,
                                                                         chroma_url, vectors):
    """The write the replica lacks comes from another engine (another process of the service): this
    engine's own writes are read on the primary until replayed (the read-your-writes tests below)."""
    primary, replica = pgvector_replica
    layout = layout_of(vectors, chroma_url, tmp_path)
    with reader_and_writer(tmp_path, embedder, pgvector_replica, layout) as (mx, writer):
        assert mx.describe()["searches_read"] == "replica" and mx.ping() == "postgresql"
        mx.add("I adopted a cat named Miso last spring.", user_id="ada")
        wait_replayed(primary, replica)
        assert any("Miso" in h.text for h in mx.search("What is my cat called?", user_id="ada"))
        assert not mx.readers.on_primary("ada")  # replayed: the mark is gone

        with replay_paused(replica):
            added = writer.add("My sister Lena moved to Lisbon in May.", user_id="ada")
            written = mx.list(user_id="ada", limit=100)  # the primary's
            assert any("Lisbon" in m.search_text() for m in written)
            lisbon = next(m for m in written if "Lisbon" in m.search_text())
            assert mx.get(lisbon.id, user_id="ada").id == lisbon.id
            assert added.input_ids and mx.input_status(added.input_ids[0]).status == "processed"
            # the replica has not replayed it: every reader's search misses it
            assert not any("Lisbon" in h.text for h in mx.search("Where did Lena move?", user_id="ada"))
            answer = mx.chat("Where did Lena move?", user_id="ada", remember=False)
            assert lisbon.id not in answer.retrieved_ids and "Lisbon" not in answer.answer
            context = retrieve_context(mx, "ada", "Where did Lena move?")  # hits and core blocks
            assert "Lisbon" not in context.prompt

        wait_replayed(primary, replica)
        assert any("Lisbon" in h.text for h in mx.search("Where did Lena move?", user_id="ada"))
        assert "Lisbon" in retrieve_context(mx, "ada", "Where did Lena move?").prompt


def found(mx: Mirix, query: str, word: str, user_id: str = "ada") -> bool:
    return any(word in h.text for h in mx.search(query, user_id=user_id))


@pytest.mark.parametrize("vectors", ["pgvector", "chroma-server"])
def test_a_users_own_writes_are_searched_on_the_primary_until_the_replica_has_them(tmp_path, embedder,
                                                                                  pgvector_replica, chroma_url,
                                                                                  vectors):
    primary, replica = pgvector_replica
    layout = layout_of(vectors, chroma_url, tmp_path)
    with reader_and_writer(tmp_path, embedder, pgvector_replica, layout) as (mx, writer):
        assert mx.describe()["read_your_writes"] is True
        mx.add("I adopted a cat named Miso last spring.", user_id="ada")
        mx.add("I play the cello on Sundays.", user_id="bob")
        wait_replayed(primary, replica)
        assert not mx.readers.on_primary("ada") and not mx.readers.on_primary("bob")

        with replay_paused(replica):
            mx.add("My sister Lena moved to Lisbon in May.", user_id="ada")
            # ada's own write: her search, chat and /context read the primary and find it
            assert mx.readers.on_primary("ada") and found(mx, "Where did Lena move?", "Lisbon")
            answer = mx.chat("Where did Lena move?", user_id="ada", remember=False)
            assert "Lisbon" in answer.answer
            assert "Lisbon" in retrieve_context(mx, "ada", "Where did Lena move?").prompt
            # bob wrote nothing since: his searches still read the replica, which lacks another engine's write
            writer.add("I sold the cello in June.", user_id="bob")
            assert not mx.readers.on_primary("bob") and not found(mx, "What happened to the cello?", "sold", "bob")
            # a memory deleted through this engine is gone from the user's searches at once
            misos = [m for m in mx.list(user_id="ada", limit=100) if "Miso" in m.search_text()]
            assert misos and found(mx, "What is my cat called?", "Miso")
            for miso in misos:  # the turn and what was read from it
                mx.delete(miso.id, user_id="ada")
            assert not found(mx, "What is my cat called?", "Miso")
            # so is every memory of a user deleted whole, though the replica still holds them
            mx.delete_user("bob")
            assert mx.readers.on_primary("bob") and mx.search("What happened to the cello?", user_id="bob") == []
            assert mx.stats()["searches_kept_on_primary"] >= 8  # every read above sent to the primary

        wait_replayed(primary, replica)
        assert not mx.readers.on_primary("ada") and not mx.readers.on_primary("bob")  # the replica has them: read it again
        with replay_paused(replica):
            writer.add("Lena works as an architect.", user_id="ada")
            assert not found(mx, "What is Lena's job?", "architect")  # the replica's view, as before
        wait_replayed(primary, replica)
        assert found(mx, "What is Lena's job?", "architect") and found(mx, "Where did Lena move?", "Lisbon")


def test_without_read_your_writes_a_users_own_write_waits_for_the_replica(tmp_path, embedder, pgvector_replica):
    primary, replica = pgvector_replica
    settings = Settings(data_dir=tmp_path / "data", database_url=primary, database_read_url=replica,
                        vector_store="pgvector", read_your_writes=False)
    with Mirix(settings=settings, embedder=embedder) as mx:
        assert mx.describe()["read_your_writes"] is False
        wait_replayed(primary, replica)  # the schema the engine created
        with replay_paused(replica):
            mx.add("My sister Lena moved to Lisbon in May.", user_id="ada")
            assert not mx.readers.on_primary("ada") and not found(mx, "Where did Lena move?", "Lisbon")
        wait_replayed(primary, replica)
        assert found(mx, "Where did Lena move?", "Lisbon")


def test_a_write_position_carries_read_your_writes_to_another_engine(tmp_path, embedder, pgvector_replica):
    """Two processes of one service, both searching the replica: what one wrote, the other reads when
    given the write's position (`write_position` / `read_after`), and misses without it until replayed."""
    primary, replica = pgvector_replica
    settings = Settings(data_dir=tmp_path / "data", database_url=primary, database_read_url=replica,
                        vector_store="pgvector")
    with Mirix(settings=settings, embedder=embedder) as writer, Mirix(settings=settings, embedder=embedder) as other:
        wait_replayed(primary, replica)  # the schema the engines created
        assert writer.write_position("ada") is None  # nothing written: nothing to wait for
        with replay_paused(replica):
            added = writer.add("My sister Lena moved to Lisbon in May.", user_id="ada")
            position = added.write_position
            assert position is not None and writer.write_position("ada") == position
            assert not found(other, "Where did Lena move?", "Lisbon")  # the other engine has no mark of it
            hits = other.search("Where did Lena move?", user_id="ada", read_after=position)
            assert any("Lisbon" in h.text for h in hits)
            assert "Lisbon" in retrieve_context(other, "ada", "Where did Lena move?", read_after=position).prompt
            kept = other.stats()["searches_kept_on_primary"]
        wait_replayed(primary, replica)
        assert found(other, "Where did Lena move?", "Lisbon")
        other.search("Where did Lena move?", user_id="ada", read_after=position)  # replayed: the replica
        assert other.stats()["searches_kept_on_primary"] == kept
        assert writer.write_position("ada") is None or found(writer, "Where did Lena move?", "Lisbon")
        for bad in ("yesterday", "16/", "1/2/3", ""):
            with pytest.raises(InvalidInput, match="write position"):
                other.search("Lena", user_id="ada", read_after=bad)


def test_chat_with_a_model_reads_the_replica_and_writes_its_usage_to_the_primary(tmp_path, embedder, pgvector_replica):
    """Chat's only write, the model's usage, goes to the primary: the replica refuses writes."""
    primary, replica = pgvector_replica

    def script(req):
        if req.agent == "topic_extractor":
            return '{"topics": ["cat"], "start": null, "end": null}'
        return "Your cat is Miso." if "Miso" in req.system else "I don't know."

    settings = Settings(data_dir=tmp_path / "data", database_url=primary, database_read_url=replica,
                        vector_store="pgvector")
    with Mirix(settings=settings, embedder=embedder, model_client=ScriptedChatCompletionClient(script)) as mx:
        mx.add("I adopted a cat named Miso last spring.", user_id="ada")  # the model's flow writes it too
        wait_replayed(primary, replica)
        response = mx.chat("What is my cat called?", user_id="ada", remember=False)
        assert response.mode == "llm" and response.fallback is None and response.answer == "Your cat is Miso."
        assert mx.stats(user_id="ada")["llm_usage"]["chat"]["llm_calls"] == response.usage.llm_calls >= 2


def test_without_a_read_url_searches_read_the_primary(mx_sqlite):
    assert mx_sqlite.describe()["searches_read"] == "primary" and mx_sqlite.read_searcher is mx_sqlite.searcher


@pytest.mark.parametrize("primary, replica, unfit", [
    (None, "postgresql://db-replica/mirix", "database_url is unset"),
    ("sqlite:///mirix.db", "postgresql://db-replica/mirix", "database_url is not PostgreSQL"),
    ("postgresql://db/mirix", "sqlite:///copy.db", "database_read_url is not PostgreSQL"),
])
def test_a_read_url_is_a_postgres_replica_of_a_postgres_primary(tmp_path, primary, replica, unfit):
    with pytest.raises(ValidationError, match=unfit):
        Settings(data_dir=tmp_path, database_url=primary, database_read_url=replica)
    assert not (tmp_path / "mirix.db").exists()


def test_the_read_url_comes_from_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("MIRIX_DATABASE_URL", "postgresql://db/mirix")
    monkeypatch.setenv("MIRIX_DATABASE_READ_URL", "postgresql://db-replica/mirix")
    settings = Settings.from_env(data_dir=tmp_path)
    assert settings.database_read_url == "postgresql://db-replica/mirix" and settings.read_your_writes is True
    monkeypatch.setenv("MIRIX_READ_YOUR_WRITES", "0")
    assert Settings.from_env(data_dir=tmp_path).read_your_writes is False


def test_the_environments_replica_is_not_used_for_another_database_named_in_code(tmp_path, monkeypatch):
    """A restore into another database, or an engine opened on one, must not search the replica of the
    database the environment names."""
    monkeypatch.setenv("MIRIX_DATABASE_URL", "postgresql://db/mirix")
    monkeypatch.setenv("MIRIX_DATABASE_READ_URL", "postgresql://db-replica/mirix")
    assert Settings.from_env(data_dir=tmp_path, database_url="postgresql://db/mirix").database_read_url
    assert Settings.from_env(data_dir=tmp_path, database_url="postgresql://staging/mirix").database_read_url is None
    assert Settings.from_env(data_dir=tmp_path, database_url="postgresql://staging/mirix",
                             database_read_url="postgresql://staging-replica/mirix").database_read_url == \
        "postgresql://staging-replica/mirix"
