"""Chroma's graph files are written at full capacity from uncleared memory: `scrub` zeroes what lies
past the elements in use, and the index reads the same before and after (and after a flush)."""

from __future__ import annotations

import random
import struct

from mirix_py.store.chroma_files import _HEADER, scrub
from mirix_py.store.vectors import ChromaVectorIndex, VectorItem

SECRET = b"ghp_Zq81kLm0Pq9Xw2Rt5Yv7Bn3Cd6Fg4Hj1Kl0M"


def _vectors(n: int, seed: int, prefix: str = "epi_") -> list[VectorItem]:
    rng = random.Random(seed)
    return [VectorItem(f"{prefix}{i:032x}", [rng.gauss(0, 1) for _ in range(384)], "episodic") for i in range(n)]


def _graph(path):
    folders = [h.parent for h in path.glob("*/header.bin")]
    assert len(folders) == 1, folders
    return folders[0]


def test_stale_bytes_past_the_elements_in_use_are_zeroed_and_the_index_still_reads(tmp_path):
    path = tmp_path / "chroma"
    index = ChromaVectorIndex.embedded(path)
    items = _vectors(5, seed=1)
    index.upsert("ada", items)
    before = index.query("ada", items[0].embedding, k=3)
    graph = _graph(path)
    header = _HEADER.unpack((graph / "header.bin").read_bytes())
    used, per_element = header[3], header[4]
    for name in ("data_level0.bin", "length.bin"):  # what a dirty heap leaves there
        size = (graph / name).stat().st_size
        (graph / name).write_bytes((SECRET * (size // len(SECRET) + 1))[:size])
    level0_used = (graph / "data_level0.bin").read_bytes()[:used * per_element]

    assert scrub(path) > 0
    level0 = (graph / "data_level0.bin").read_bytes()
    assert SECRET not in level0 and SECRET not in (graph / "length.bin").read_bytes()
    assert level0[:used * per_element] == level0_used and not level0[used * per_element:].strip(b"\0")
    assert scrub(path) == 0  # nothing left to clear

    reopened = ChromaVectorIndex.embedded(path)
    assert reopened.ids("ada") == {i.id for i in items}
    assert reopened.query("ada", items[0].embedding, k=3) == before
    more = _vectors(1100, seed=2, prefix="sem_")  # past Chroma's sync threshold: the graph is written
    for start in range(0, len(more), 100):
        reopened.upsert("ada", more[start:start + 100])
    assert reopened.count("ada") == 1105
    assert reopened.query("ada", more[700].embedding, k=1)[0][0] == more[700].id


def test_an_unknown_layout_is_left_alone(tmp_path):
    graph = tmp_path / "chroma" / "0b6c1d3e-0000-4000-8000-000000000000"
    graph.mkdir(parents=True)
    header = _HEADER.pack(2, 0, 100, 0, 1676, 1668, 132, -1, 0xFFFFFFFF, 16, 32, 16, 0.36, 100)  # version 2
    (graph / "header.bin").write_bytes(header)
    (graph / "data_level0.bin").write_bytes(SECRET * 10)
    (graph / "length.bin").write_bytes(SECRET)
    assert scrub(tmp_path / "chroma") == 0 and (graph / "data_level0.bin").read_bytes() == SECRET * 10
    (graph / "header.bin").write_bytes(struct.pack("<i", 1))  # short header
    assert scrub(tmp_path / "chroma") == 0
