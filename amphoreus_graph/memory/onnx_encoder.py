"""The embedding model run by ONNX Runtime: the same weights, exported once from sentence-transformers.

Why: on this project's 2-core CPU, ONNX Runtime encodes a round's batch and one short recall query each about
twice as fast as PyTorch eager (fused kernels, no per-op Python dispatch), and a cached export starts without
importing torch. The export is checked before it is kept: the tokenizer must give the model's own features and
the vectors must match PyTorch's on probe texts, else the embedder stays on PyTorch.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import tempfile
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

log = logging.getLogger(__name__)

FORMAT = 1  # bump when the export's layout changes: old exports are then ignored
TOLERANCE = 1e-4  # largest allowed |onnx - torch| per vector component on the probes
_PROBES = [
    "At the harbour, Aglaea won the silver cup from the old captain Aquila.",
    '  Mydei said: "I will hold the line here. This is the way of strife and the council."  ',
    "x",
    "",
    "Ünïcödé — the Grove of Dodona 🌿, and a very long memory " + "that keeps on going " * 80,
]


def cache_root() -> Path:
    """Where exports live: $AMPHOREUS_CACHE_DIR, else $XDG_CACHE_HOME (or ~/.cache)/amphoreus-graph."""
    if root := os.environ.get("AMPHOREUS_CACHE_DIR"):
        return Path(root)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "amphoreus-graph"


def export_dir(location: str) -> Path:
    """One directory per model location and its files' sizes and times, so a changed model is exported again."""
    source = Path(location)
    stamp = [location, FORMAT]
    if source.is_dir():
        stamp += sorted((str(p.relative_to(source)), p.stat().st_size, p.stat().st_mtime_ns) for p in source.rglob("*"))
    digest = hashlib.sha256(json.dumps(stamp, default=str).encode()).hexdigest()[:16]
    return cache_root() / "onnx" / f"{source.name or 'model'}-{digest}"


class OnnxEncoder:
    """Tokenizer + ONNX Runtime session for an exported model; `encode` returns unit vectors."""

    def __init__(self, directory: Path) -> None:
        import onnxruntime as ort
        from transformers import AutoTokenizer

        meta = json.loads((directory / "meta.json").read_text())
        self.dims = int(meta["dims"])
        self.max_length = int(meta["max_length"])
        self.inputs: list[str] = list(meta["inputs"])
        self.tokenizer = AutoTokenizer.from_pretrained(str(directory))
        options = ort.SessionOptions()
        # Worker threads spin between the graph's many small ops (~1 ms less per query on 2 cores) but stop when a
        # run ends: the store and the society need the cores between batches.
        options.add_session_config_entry("session.intra_op.allow_spinning", "1")
        options.add_session_config_entry("session.force_spinning_stop", "1")
        options.log_severity_level = 3
        self.session = ort.InferenceSession(str(directory / "model.onnx"), options, providers=["CPUExecutionProvider"])

    def features(self, texts: list[str]) -> dict[str, NDArray[np.int64]]:
        encoded = self.tokenizer(
            texts, padding=True, truncation="longest_first", max_length=self.max_length, return_tensors="np"
        )
        return {name: np.asarray(encoded[name], dtype=np.int64) for name in self.inputs}

    def encode(self, texts: list[str], batch_size: int) -> NDArray[np.float32]:
        """Longest texts first, in batches (little padding per batch), then back in the caller's order."""
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        out = np.zeros((len(texts), self.dims), dtype=np.float32)
        for start in range(0, len(order), batch_size):
            chunk = order[start : start + batch_size]
            (vectors,) = self.session.run(None, self.features([texts[i] for i in chunk]))
            out[chunk] = vectors
        norms = np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)
        return (out / norms).astype(np.float32)


def load_or_export(location: str, load_torch_model: Callable[[], SentenceTransformer]) -> OnnxEncoder | None:
    """The cached export for `location`, exporting it first if needed; None (stay on PyTorch) if it cannot be."""
    target = export_dir(location)
    if not (target / "meta.json").exists():
        model = load_torch_model()  # a model that cannot load at all is the caller's one-line error
        try:
            _export(model, target)
        except Exception as exc:  # an architecture the exporter or the check rejects: PyTorch still works
            log.warning(
                "embedder %s: staying on PyTorch, the ONNX export failed (%s: %s)", location, type(exc).__name__, exc
            )
            return None
    return OnnxEncoder(target)


def _export(model: SentenceTransformer, target: Path) -> None:
    """Export to a temp dir beside `target`, check it against PyTorch, then move it into place atomically."""
    import torch

    target.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    try:
        sample = model.preprocess(_PROBES[:2])
        inputs = [k for k, v in sample.items() if isinstance(v, torch.Tensor)]
        modality = sample.get("modality", "text")

        class SentenceEmbedding(torch.nn.Module):
            """The whole pipeline (transformer, pooling, any dense/normalise): token tensors in, vectors out."""

            def __init__(self) -> None:
                super().__init__()
                self.model = model

            def forward(self, *tensors: torch.Tensor) -> torch.Tensor:
                features: dict[str, Any] = {**dict(zip(inputs, tensors, strict=True)), "modality": modality}
                return self.model(features)["sentence_embedding"]

        wrapper = SentenceEmbedding().eval()
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # tracer notes on Python-side branches, which the probe check covers
            torch.onnx.export(
                wrapper,
                tuple(sample[k] for k in inputs),
                str(work / "model.onnx"),
                input_names=inputs,
                output_names=["sentence_embedding"],
                dynamic_axes={**{k: {0: "batch", 1: "tokens"} for k in inputs}, "sentence_embedding": {0: "batch"}},
                opset_version=17,
                dynamo=False,
            )
        model.tokenizer.save_pretrained(str(work))
        dims = int(model.get_embedding_dimension() or 0)
        meta = {"format": FORMAT, "dims": dims, "max_length": int(model.max_seq_length or 512), "inputs": inputs}
        (work / "meta.json").write_text(json.dumps(meta))
        _check(model, OnnxEncoder(work))
        try:
            work.rename(target)
        except OSError:  # another process exported it first: theirs is as good
            shutil.rmtree(work, ignore_errors=True)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise


def _check(model: SentenceTransformer, encoder: OnnxEncoder) -> None:
    """Same features from the tokenizer, same vectors from the session, as sentence-transformers gives."""
    reference = model.preprocess(_PROBES)
    ours = encoder.features(_PROBES)
    for name in encoder.inputs:
        if not np.array_equal(ours[name], reference[name].numpy()):
            raise ValueError(f"the tokenizer's {name} differ from sentence-transformers' on the probe texts")
    expected = model.encode(_PROBES, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)
    worst = float(np.abs(encoder.encode(_PROBES, batch_size=2) - expected).max())
    if worst > TOLERANCE:
        raise ValueError(f"vectors differ from PyTorch's by up to {worst:.2g} on the probe texts")
