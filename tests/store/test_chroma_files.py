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


# ------------------------------------------------------------------ while the engine runs


def test_allocation_clearing_is_on_from_the_first_entry_to_the_last_exit_whatever_the_thread():
    import threading

    from mirix_py.store.chroma_files import M_PERTURB, PERTURB_BYTE, AllocationClearing

    calls: list[tuple[int, int]] = []
    clearing = AllocationClearing(lambda option, value: calls.append((option, value)) or 1)
    entered, leave = threading.Event(), threading.Event()

    def other_thread():
        with clearing():
            entered.set()
            leave.wait(5)

    with clearing():
        worker = threading.Thread(target=other_thread)
        worker.start()
        assert entered.wait(5)
        with clearing():  # nested in the same thread
            pass
        assert calls == [(M_PERTURB, PERTURB_BYTE)]
    assert calls == [(M_PERTURB, PERTURB_BYTE)]  # the other thread is still inside
    leave.set()
    worker.join(5)
    assert calls == [(M_PERTURB, PERTURB_BYTE), (M_PERTURB, 0)]


def test_allocation_clearing_without_glibc_does_nothing():
    from mirix_py.store.chroma_files import AllocationClearing

    clearing = AllocationClearing(None)
    assert not clearing.available
    with clearing():
        pass


def test_a_block_handed_out_inside_holds_the_fill_byte_not_what_was_freed_before():
    import ctypes

    from mirix_py.store.chroma_files import PERTURB_BYTE, allocations_cleared

    if not allocations_cleared.available:
        import pytest

        pytest.skip("glibc only")
    libc = ctypes.CDLL(None)
    libc.malloc.restype, libc.malloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t]
    libc.free.argtypes = [ctypes.c_void_p]
    size = 3000  # from the heap, not a fresh mapping
    old = libc.malloc(size)
    ctypes.memmove(old, SECRET * (size // len(SECRET)), size // len(SECRET) * len(SECRET))
    libc.free(old)
    with allocations_cleared():
        block = libc.malloc(size)
        data = ctypes.string_at(block, size)
        libc.free(block)
    assert SECRET not in data
    assert data == bytes([PERTURB_BYTE ^ 0xFF]) * size


def _skip_without_clearing() -> None:
    from mirix_py.store.chroma_files import allocations_cleared

    if not allocations_cleared.available:
        import pytest

        pytest.skip("glibc only: elsewhere the files are scrubbed on close")


def _secret_held_and_freed() -> None:
    """Sixteen threads hold SECRET in heap blocks of several sizes, then free them."""
    import os
    import threading

    def churn():
        held = [SECRET * 200 + os.urandom(8) for _ in range(800)]
        mid = [bytearray(SECRET * 4000) for _ in range(20)]
        del held, mid

    threads = [threading.Thread(target=churn) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def test_a_running_engines_graph_files_hold_no_stale_secret_of_the_process(tmp_path, embedder):
    """Threads that held a secret in memory and freed it, then an engine that writes vectors: Chroma
    writes its graph files while the engine runs, at full capacity, from buffers it allocated. Before
    `allocations_cleared`, the secret was in `data_level0.bin` or `length.bin` in about half of such
    rounds; three rounds here."""
    from mirix_py.engine import Mirix

    _skip_without_clearing()
    for round_ in range(3):
        _secret_held_and_freed()
        data = tmp_path / f"data{round_}"
        with Mirix(data, embedder=embedder) as mx:
            mx.add("I went hiking with Anna on Saturday and we saw a deer.", user_id="ada")
            mx.add([{"role": "user", "content": f"note {i}: the weather was fine and we talked about books"}
                    for i in range(30)], user_id="ada")
            graph = _graph(data / "chroma")
            raw = (graph / "header.bin").read_bytes()
            _, _, capacity, used, per_element, *_ = _HEADER.unpack(raw)
            assert used < capacity  # written at capacity: past the elements in use, whatever the buffer held
            assert (graph / "data_level0.bin").stat().st_size == capacity * per_element > 0
            found = [p.name for p in (data / "chroma").rglob("*") if p.is_file() and SECRET in p.read_bytes()]
            assert found == [], (round_, found)


def test_a_read_of_an_index_opened_again_writes_no_stale_secret_of_the_process(tmp_path):
    """Chroma 1.5.9 writes a collection's graph back, at full capacity, on its first read after the
    client is opened again (a `count` here); the buffers it writes from are allocated then, while this
    process's freed memory held a secret. Three rounds, each after threads held the secret and freed it."""
    _skip_without_clearing()
    for round_ in range(3):
        path = tmp_path / f"chroma{round_}"
        index = ChromaVectorIndex.embedded(path)
        index.upsert("ada", _vectors(40, seed=round_))
        index.close()  # released, its graph zeroed past the elements in use
        level0 = _graph(path) / "data_level0.bin"
        before = level0.stat().st_mtime_ns
        _secret_held_and_freed()
        assert index.count("ada") == 40  # opens the client again; the read writes the graph back
        assert level0.stat().st_mtime_ns != before
        found = [p.name for p in path.rglob("*") if p.is_file() and SECRET in p.read_bytes()]
        index.close()
        assert found == [], (round_, found)
