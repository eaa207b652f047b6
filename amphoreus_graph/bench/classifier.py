"""An embedding Path classifier: which Path does a piece of speech sound like, its Path words unheard?

Every text it hears is first masked (`catalogs/path_words.py`): every lexicon word of every Path, every Path
and Aeon name is deleted, so a speaker cannot earn a Path by saying its words. Each Path's prototype is the
mean embedding of text that holds none of them either: its summary and tenets, masked, and its `voice` lines
(plain lines written for the packaged Paths; a user catalog may carry its own, else the masked summary and
tenets are all). A softmax over cosine similarities turns that into probabilities; its temperature is fitted
leave-one-out on the prototype texts themselves (each scored against prototypes made without it), on one half,
and the accuracy reported on the other half. That is an in-style figure, not a held-out judge accuracy: the
judge's accuracy on speech it was never built from is `bench/voice_judge.judge_accuracy` on the voice probes.
A classifier is over one Path catalog (the packaged one, or a user's), and knows no world.
"""

from __future__ import annotations

import math
from functools import cache

import numpy as np
from numpy.typing import NDArray
from pydantic import BaseModel

from amphoreus_graph.catalogs.path_words import PathWordMask
from amphoreus_graph.catalogs.paths import Path, PathCatalog, load_paths
from amphoreus_graph.models.embedder import DEFAULT_MODEL, Embedder, default_embedder

_SCALES = (2.5, 5.0, 7.5, 10.0, 15.0, 20.0, 30.0, 40.0, 60.0, 80.0, 120.0)


class Calibration(BaseModel):
    """The fitted softmax scale (inverse temperature) and how the classifier does on the other half of its
    prototype texts, each scored against prototypes made without it."""

    scale: float
    fit_texts: int
    heldout_texts: int
    heldout_accuracy: float
    heldout_nll: float


def prototype_texts(path: Path, mask: PathWordMask) -> list[str]:
    """What a Path's prototype is made of: its summary, tenets and voice lines with every Path word masked
    (those left with no word at all are dropped)."""
    masked = mask([path.summary, *path.tenets, *path.voice])
    return [text for text in dict.fromkeys(masked) if any(c.isalpha() for c in text)]


class PathClassifier:
    """P(Path | text) from cosine similarity to each Path's prototype, with a calibrated softmax scale."""

    def __init__(self, embedder: Embedder, catalog: PathCatalog | None = None) -> None:
        self.embedder = embedder
        self.catalog = catalog = catalog or load_paths()
        self.mask = PathWordMask.of(catalog)
        self.paths = catalog.names()
        texts = {name: prototype_texts(catalog[name], self.mask) for name in self.paths}
        vectors = {name: embedder.encode(texts[name]) for name in self.paths}
        sums = np.stack([vectors[name].sum(axis=0) for name in self.paths])
        self.prototypes: NDArray[np.float32] = sums / np.linalg.norm(sums, axis=1, keepdims=True)
        self.calibration = self._calibrate(vectors, sums)

    def similarities(self, texts: list[str]) -> NDArray[np.float32]:
        """Cosine similarity of each text, masked, (rows) to each Path (columns, in `self.paths` order)."""
        return self.embed(texts) @ self.prototypes.T

    def embed(self, texts: list[str]) -> NDArray[np.float32]:
        """The texts' embeddings as the classifier hears them: Path words masked."""
        return self.embedder.encode(self.mask(texts))

    def probabilities(self, texts: list[str], scale: float | None = None) -> NDArray[np.float64]:
        return self.softmax(self.similarities(texts), scale)

    def softmax(self, similarities: NDArray[np.float32], scale: float | None = None) -> NDArray[np.float64]:
        """P(Path | text) from the texts' similarities to each Path, at the calibrated (or given) scale."""
        logits = similarities.astype(np.float64) * (scale or self.calibration.scale)
        logits -= logits.max(axis=1, keepdims=True)
        weights = np.exp(logits)
        return weights / weights.sum(axis=1, keepdims=True)

    def _calibrate(self, vectors: dict[str, NDArray[np.float32]], sums: NDArray[np.float32]) -> Calibration:
        """Leave-one-out: each prototype text of a Path with two or more is scored against its own Path's
        prototype made without it (the others' as they are); the scale is fitted (lowest NLL) on even rows and
        accuracy and NLL reported on odd rows."""
        rows: list[NDArray[np.float32]] = []
        truth: list[int] = []
        for index, name in enumerate(self.paths):
            if len(vectors[name]) < 2:
                continue
            for vector in vectors[name]:
                without = sums[index] - vector
                prototypes = self.prototypes.copy()
                prototypes[index] = without / np.linalg.norm(without)
                rows.append(prototypes @ vector)
                truth.append(index)
        similarities = np.stack(rows) if rows else np.zeros((0, len(self.paths)), dtype=np.float32)
        fit, heldout = slice(0, None, 2), slice(1, None, 2)
        best = min(_SCALES, key=lambda s: self._nll(similarities[fit], truth[fit], s))
        correct = sum(int(np.argmax(row) == t) for row, t in zip(similarities[heldout], truth[heldout], strict=True))
        return Calibration(
            scale=best,
            fit_texts=len(truth[fit]),
            heldout_texts=len(truth[heldout]),
            heldout_accuracy=round(correct / max(1, len(truth[heldout])), 4),
            heldout_nll=round(self._nll(similarities[heldout], truth[heldout], best), 4),
        )

    def _nll(self, similarities: NDArray[np.float32], truth: list[int], scale: float) -> float:
        probabilities = self.softmax(similarities, scale)
        return -sum(math.log(max(1e-12, row[t])) for row, t in zip(probabilities, truth, strict=True)) / max(
            1, len(truth)
        )


def path_classifier(model: str = DEFAULT_MODEL, catalog: str | None = None) -> PathClassifier:
    """One calibrated classifier per process, embedder and Path catalog (a `load_paths` file; None: packaged)."""
    return _classifier(model, load_paths(catalog).source)


@cache
def _classifier(model: str, source: str) -> PathClassifier:
    return PathClassifier(default_embedder(model), load_paths(source))
