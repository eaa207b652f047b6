"""Reading free-text options: how strongly each option's text speaks for a Path.

A choice turn's options carry no world action and so no tags for a Path to rate; the offline policy reads them
instead. An option's evidence for a Path is how much nearer its text lies to that Path's profile than to the
average Path's, in the sentence embedder's space, standardised over the options offered so that it weighs like
an affinity. The profile is what a model is told of the Path in its system prompt: the summary and the tenets.
Nothing in it is written for any benchmark item, so a policy that reads this way is a real, beatable baseline.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from amphoreus_graph.catalogs.paths import PathCatalog

if TYPE_CHECKING:  # the embedder is loaded on first use
    from amphoreus_graph.models.embedder import Embedder


def profile(catalog: PathCatalog, path: str) -> str:
    """What a reader knows of a Path: its summary and tenets."""
    entry = catalog[path]
    return " ".join([entry.summary, *entry.tenets])


class PathReader:
    """Scores option texts for a Path against every Path of its catalog."""

    def __init__(self, embedder: Embedder | None = None) -> None:
        self._embedder = embedder
        self._profiles_of: dict[tuple[str, ...], NDArray[np.float32]] = {}

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            from amphoreus_graph.models.embedder import default_embedder

            self._embedder = default_embedder().view()
        return self._embedder

    def evidence(self, texts: list[str], path: str, catalog: PathCatalog) -> list[float]:
        """Each text's evidence for `path`, standardised over the texts (mean 0, spread 1; all 0 if they tie)."""
        names, profiles = self._profiles(catalog)
        vectors = self.embedder.encode(texts)
        similarity = vectors @ profiles.T
        lean = similarity[:, names.index(path)] - similarity.mean(axis=1)
        spread = float(lean.std())
        if spread < 1e-9:
            return [0.0] * len(texts)
        return [float(x) for x in (lean - lean.mean()) / spread]

    def _profiles(self, catalog: PathCatalog) -> tuple[list[str], NDArray[np.float32]]:
        names = catalog.names()
        texts = tuple(profile(catalog, name) for name in names)
        if texts not in self._profiles_of:
            self._profiles_of[texts] = self.embedder.encode(list(texts))
        return names, self._profiles_of[texts]


@cache
def shared_reader() -> PathReader:
    """One reader per process (its embedder loads on the first choice turn)."""
    return PathReader()
