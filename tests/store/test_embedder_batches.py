"""MiniLM embedder: length-grouped batches and the one-text path give the vectors `encode` gives."""

from __future__ import annotations

import numpy as np
import pytest

from mirix_py.store.embeddings import length_batches


def test_length_batches_cover_every_index_once_and_group_by_length():
    lengths = [40, 5, 120, 6, 38, 7, 118, 41]
    batches = length_batches(lengths, max_batch=64, overhead=10)
    assert sorted(i for b in batches for i in b) == list(range(len(lengths)))
    assert [sorted(lengths[i] for i in b) for b in batches] == [[5, 6, 7], [38, 40, 41], [118, 120]]


def test_length_batches_respect_max_batch_and_merge_when_batches_are_costly():
    assert all(len(b) <= 3 for b in length_batches([10] * 10, max_batch=3))
    assert length_batches([5, 6, 50], max_batch=64, overhead=1000) == [[0, 1, 2]]
    assert length_batches([], max_batch=4) == []


TEXTS = [
    "[2023-05-08 13:56] Caroline: I went to a LGBTQ support group yesterday and it was so powerful.",
    "Melanie: hi!",
    "[core:human] " + "Caroline likes painting, hiking and long walks with her dog by the lake. " * 12,
    "What did Caroline research?",
    "Sam is my kayaking partner",
]


@pytest.fixture(scope="module")
def reference(torch_embedder):
    return torch_embedder._model.encode(TEXTS, batch_size=64, normalize_embeddings=True, convert_to_numpy=True,
                                  show_progress_bar=False)


def test_batched_vectors_match_encode(torch_embedder, reference):
    got = np.asarray(torch_embedder.embed(TEXTS))
    assert got.shape == (len(TEXTS), torch_embedder.dim)
    assert np.abs(got - reference).max() < 1e-5


def test_one_short_text_takes_the_direct_path_with_the_same_vector(torch_embedder, reference, monkeypatch):
    import torch

    assert torch_embedder._direct is not None
    threads = torch.get_num_threads()
    for i in (0, 1, 3, 4):
        got = np.asarray(torch_embedder.embed([TEXTS[i]])[0])
        assert np.abs(got - reference[i]).max() < 1e-5
        assert abs(np.linalg.norm(got) - 1.0) < 1e-5
    assert torch.get_num_threads() == threads  # restored after the one-thread call
    calls = []
    monkeypatch.setattr(torch_embedder, "_encode_batched", lambda texts: calls.append(texts) or [[0.0]] * len(texts))
    torch_embedder.embed([TEXTS[3]])
    assert calls == []  # a query does not go through encode


def test_batches_without_the_direct_path_use_encode(torch_embedder, reference, monkeypatch):
    monkeypatch.setattr(torch_embedder, "_direct", None)
    got = np.asarray(torch_embedder.embed(TEXTS))
    assert np.abs(got - reference).max() < 1e-5


def test_one_long_text_takes_the_batch_path(torch_embedder, reference):
    got = np.asarray(torch_embedder.embed([TEXTS[2]])[0])
    assert np.abs(got - reference[2]).max() < 1e-5
    assert torch_embedder._embed_one(TEXTS[2]) is None
