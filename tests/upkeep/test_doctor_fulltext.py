"""`doctor` finds full-text rows an older version wrote (a CJK run indexed whole: a word inside it
is not found) or that are missing, and `--repair` indexes them again (`upkeep/doctor.py`)."""

from __future__ import annotations

from sqlalchemy import text

from mirix_py.engine import Mirix


def _ids_found(mx: Mirix, query: str) -> set[str]:
    return {hit.memory.id for hit in mx.search(query, user_id="li", method="bm25", limit=20)}


def test_full_text_rows_of_an_older_version_are_found_and_indexed_again(tmp_path):
    with Mirix(tmp_path / "data", embedder=None) as mx:
        mx.add("我的朋友住在北京。", user_id="li")
        mx.add("Li keeps bees on the roof in Shanghai.", user_id="li")
        mx.flush(timeout=60)
        cjk, = _ids_found(mx, "北京")
        latin, = _ids_found(mx, "bees")
        assert mx.doctor().clean
        with mx.engine.begin() as conn:  # the CJK row as an older version wrote it; the other's row lost
            conn.execute(text("UPDATE memory_fts SET text = (SELECT m.text FROM memory AS m WHERE m.id = :id) "
                              "WHERE memory_id = :id"), {"id": cjk})
            conn.execute(text("DELETE FROM memory_fts WHERE memory_id = :id"), {"id": latin})
        assert _ids_found(mx, "北京") == set() and _ids_found(mx, "bees") == set()
        report = mx.doctor()
        assert not report.clean and report.stale_fulltext == sorted([cjk, latin])
        fixed = mx.doctor(repair=True)
        assert fixed.clean and fixed.repaired["reindexed"] == 2
        assert _ids_found(mx, "北京") == {cjk} and _ids_found(mx, "bees") == {latin}
