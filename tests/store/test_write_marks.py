"""Log positions compare as numbers: the replica's replay position against a user's last write."""

import pytest

from mirix_py.store.write_marks import lsn_value


def test_log_positions_compare_across_their_high_word():
    assert lsn_value("0/FFFFFFFF") < lsn_value("1/0") < lsn_value("1/A") < lsn_value("16/B374D848")
    assert lsn_value("0/16B3748") == 0x16B3748


@pytest.mark.parametrize("bad", ["", "16B374D848", "x/1"])
def test_a_malformed_log_position_is_refused(bad):
    with pytest.raises(ValueError):
        lsn_value(bad)


class UnreadableLog:
    """Write marks whose log position cannot be read (the primary gone right after a commit)."""

    def wrote(self, conn, user_id):
        raise OSError("connection lost")


def test_a_committed_write_is_reported_done_when_its_log_position_cannot_be_read(mx_sqlite, caplog):
    mx_sqlite.store.write_marks = UnreadableLog()
    with caplog.at_level("WARNING", logger="mirix_py.store"):
        added = mx_sqlite.add("I adopted a cat named Miso last spring.", user_id="ada")
    assert mx_sqlite.input_status(added.input_ids[0]).status == "processed"
    assert any("Miso" in m.search_text() for m in mx_sqlite.list(user_id="ada"))
    assert "searches may read the replica before it has this write" in caplog.text


def test_marks_the_replica_has_passed_are_pruned_so_they_stay_bounded(pgvector_replica):
    """Users who write and never search leave no mark behind once the replica has their writes."""
    from sqlalchemy import create_engine

    from mirix_py.store.write_marks import WriteMarks

    from standby import replay_paused, server_of, wait_replayed

    primary_url, replica_url = pgvector_replica
    primary, replica = create_engine(server_of(primary_url)), create_engine(server_of(replica_url))
    marks = WriteMarks(replica, prune_at=4)
    try:
        def write(user: str) -> None:
            with primary.begin() as conn:  # a transaction with an id writes a commit record
                conn.exec_driver_sql("SELECT pg_current_xact_id()")
            with primary.connect() as conn:
                marks.wrote(conn, user)

        for user in ("a", "b", "c"):
            write(user)
        assert marks.held() == 3
        wait_replayed(primary_url, replica_url)
        write("d")  # the fourth mark prunes: a, b and c are replayed
        assert marks.held() <= 1
        with replay_paused(replica_url):
            for user in ("e", "f", "g", "h"):
                write(user)
            assert marks.held() >= 4 and marks.pending("e")  # none replayed: all kept
        wait_replayed(primary_url, replica_url)
        assert not marks.pending("e") and marks.held() <= 4
    finally:
        primary.dispose()
        replica.dispose()
