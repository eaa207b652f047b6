"""An embedding Path classifier: which Path does a piece of speech sound like?

Each Path's prototype is the mean embedding of its summary, tenets and the half of its lexicon that offline
speakers never draw on (`Path.judging_words`), so the offline policy's speech is not graded against the very
words it was given. A softmax over cosine
similarities turns that into probabilities; its temperature is fitted on one half of a calibration set
and the accuracy reported on the other, held-out half, so the figure is not measured on what it was fit to.
A classifier is over one Path catalog (the packaged one, or a user's), and knows no world: its calibration
texts speak of kinds of act (the catalog's tags), not of any world's actions.
"""

from __future__ import annotations

import math
from functools import cache

import numpy as np
from numpy.typing import NDArray
from pydantic import BaseModel

from amphoreus_graph.catalogs.paths import PathCatalog, load_paths
from amphoreus_graph.contracts.rng import stable_rng
from amphoreus_graph.memory.embedder import DEFAULT_MODEL, Embedder, default_embedder

_SCALES = (2.5, 5.0, 7.5, 10.0, 15.0, 20.0, 30.0, 40.0, 60.0, 80.0, 120.0)


class Calibration(BaseModel):
    """The fitted softmax scale (inverse temperature) and how the classifier does on held-out text."""

    scale: float
    fit_texts: int
    heldout_texts: int
    heldout_accuracy: float
    heldout_nll: float


def calibration_texts(per_path: int = 12, seed: int = 0, catalog: PathCatalog | None = None) -> list[tuple[str, str]]:
    """(text, Path) pairs: two of a Path's words around a deed chosen at random from every kind of act the
    catalog knows (its tags), so the text carries only as much of the Path as a short in-character line would
    (no tenet is quoted) and no world's words."""
    catalog = catalog or load_paths()
    deeds = list(catalog.tags.values())
    rows: list[tuple[str, str]] = []
    for name in catalog.names():
        words = catalog[name].judging_words()
        texts: list[str] = []
        for i in range(per_path * 20):  # distinct texts, so the fit and held-out halves share none
            if len(texts) == per_path:
                break
            rng = stable_rng("calibration", seed, name, i)
            first, second = rng.sample(words, k=2)
            text = f"{first.capitalize()}. Today I was {rng.choice(deeds)}, for {second}."
            if text not in texts:
                texts.append(text)
        rows.extend((text, name) for text in texts)
    return rows


class PathClassifier:
    """P(Path | text) from cosine similarity to each Path's prototype, with a calibrated softmax scale."""

    def __init__(self, embedder: Embedder, catalog: PathCatalog | None = None) -> None:
        self.embedder = embedder
        self.catalog = catalog = catalog or load_paths()
        self.paths = catalog.names()
        prototypes = []
        for name in self.paths:
            path = catalog[name]
            vectors = embedder.encode([path.summary, *path.tenets, ", ".join(path.judging_words())])
            mean = vectors.mean(axis=0)
            prototypes.append(mean / np.linalg.norm(mean))
        self.prototypes: NDArray[np.float32] = np.stack(prototypes)
        self.calibration = self.calibrate(calibration_texts(catalog=catalog))

    def similarities(self, texts: list[str]) -> NDArray[np.float32]:
        """Cosine similarity of each text (rows) to each Path (columns, in `self.paths` order)."""
        return self.embedder.encode(texts) @ self.prototypes.T

    def probabilities(self, texts: list[str], scale: float | None = None) -> NDArray[np.float64]:
        return self.softmax(self.similarities(texts), scale)

    def softmax(self, similarities: NDArray[np.float32], scale: float | None = None) -> NDArray[np.float64]:
        """P(Path | text) from the texts' similarities to each Path, at the calibrated (or given) scale."""
        logits = similarities.astype(np.float64) * (scale or self.calibration.scale)
        logits -= logits.max(axis=1, keepdims=True)
        weights = np.exp(logits)
        return weights / weights.sum(axis=1, keepdims=True)

    def calibrate(self, labelled: list[tuple[str, str]]) -> Calibration:
        """Fit the scale on even rows (lowest NLL), report accuracy and NLL on odd rows."""
        fit, heldout = labelled[0::2], labelled[1::2]
        best = min(_SCALES, key=lambda s: self._nll(fit, s))
        probabilities = self.probabilities([t for t, _ in heldout], best)
        truth = [self.paths.index(p) for _, p in heldout]
        correct = sum(int(np.argmax(row) == t) for row, t in zip(probabilities, truth, strict=True))
        return Calibration(
            scale=best,
            fit_texts=len(fit),
            heldout_texts=len(heldout),
            heldout_accuracy=round(correct / max(1, len(heldout)), 4),
            heldout_nll=round(self._nll(heldout, best), 4),
        )

    def _nll(self, labelled: list[tuple[str, str]], scale: float) -> float:
        probabilities = self.probabilities([t for t, _ in labelled], scale)
        truth = [self.paths.index(p) for _, p in labelled]
        return -sum(math.log(max(1e-12, row[t])) for row, t in zip(probabilities, truth, strict=True)) / len(truth)


def path_classifier(model: str = DEFAULT_MODEL, catalog: str | None = None) -> PathClassifier:
    """One calibrated classifier per process, embedder and Path catalog (a `load_paths` file; None: packaged)."""
    return _classifier(model, load_paths(catalog).source)


@cache
def _classifier(model: str, source: str) -> PathClassifier:
    return PathClassifier(default_embedder(model), load_paths(source))
