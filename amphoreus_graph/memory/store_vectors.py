"""How a ChromaStore turns items into texts to embed, and Chroma's distances into LangGraph's scores.

The index config is LangGraph's (`dims`, `embed`, `fields`), with the names its other stores use too:
`text_fields` (SqliteStore's name for `fields`) and `distance_type` (PostgresStore's: "cosine", the default,
"inner_product" or "l2"). Scores are what PostgresStore returns for each: cosine similarity, the inner product,
and minus the Euclidean distance.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast

import numpy as np
from chromadb.api.types import Space
from langchain_core.embeddings import Embeddings
from langgraph.store.base import PutOp, ensure_embeddings, get_text_at_path, tokenize_path

from amphoreus_graph.models.embedder import Embedder, default_embedder

Distance = Literal["cosine", "inner_product", "l2"]
SPACES: dict[str, Space] = {"cosine": "cosine", "inner_product": "ip", "l2": "l2"}


class EmbedderEmbeddings(Embeddings):
    """LangChain `Embeddings` over our `Embedder`; the default one loads on first use, not at server start."""

    def __init__(self, embedder: Embedder | Callable[[], Embedder] = default_embedder) -> None:
        self._embedder = embedder

    def _get(self) -> Embedder:
        if not isinstance(self._embedder, Embedder):
            self._embedder = self._embedder()
        return self._embedder

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return cast(list[list[float]], self._get().encode(list(texts)).tolist())

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]


def resolve_embeddings(embed: Any) -> Embeddings:
    """IndexConfig's `embed`: "amphoreus" (our default embedder), an `Embedder`, or what LangGraph accepts."""
    if embed == "amphoreus":
        return EmbedderEmbeddings()
    if isinstance(embed, Embedder):
        return EmbedderEmbeddings(embed)
    return ensure_embeddings(embed)


@dataclass(frozen=True)
class VectorIndex:
    """A store's semantic index: what to embed, with what, and how to score."""

    embeddings: Embeddings
    dims: int | None
    fields: list[str]
    distance: Distance

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> VectorIndex:
        distance = config.get("distance_type") or "cosine"
        if distance not in SPACES:
            raise ValueError(f"index distance_type {distance!r}: expected one of {', '.join(SPACES)}")
        fields = config.get("fields") or config.get("text_fields") or ["$"]
        embeddings = resolve_embeddings(config.get("embed"))
        return cls(embeddings, config.get("dims"), _field_list(fields), cast(Distance, distance))

    @property
    def space(self) -> Space:
        return SPACES[self.distance]

    def texts(self, op: PutOp) -> dict[str, str]:
        """The texts a put indexes, by path as InMemoryStore names them (`path`, or `path.i` for each of many):
        the store's fields, or the op's own list; none for a delete or `index=False`."""
        if op.value is None or op.index is False:
            return {}
        out: dict[str, str] = {}
        for path in self.fields if op.index is None else op.index:
            texts = get_text_at_path(op.value, path if path == "$" else tokenize_path(path))
            if len(texts) == 1:
                out[path] = texts[0]
            else:
                out.update((f"{path}.{i}", text) for i, text in enumerate(texts))
        return out

    def checked(self, vectors: Sequence[Sequence[float]]) -> list[list[float]]:
        """Plain float lists of the configured width: a wrong `dims` fails here, not deep inside Chroma."""
        rows = [[float(x) for x in v] for v in vectors]
        for row in rows:
            if self.dims and len(row) != self.dims:
                raise ValueError(f"an embedding has {len(row)} dims; the index config says dims={self.dims}")
        return rows

    def score(self, distance: float) -> float:
        """Chroma's distance as a score: 1 - d for cosine and inner product; minus the root of squared L2."""
        return -math.sqrt(max(distance, 0.0)) if self.distance == "l2" else 1.0 - distance

    def exact_scores(self, matrix: np.ndarray, query: Sequence[float]) -> np.ndarray:
        """The same scores computed exactly, one per row of `matrix`."""
        q = np.asarray(query, dtype=np.float64)
        if self.distance == "l2":
            return cast(np.ndarray, -np.linalg.norm(matrix - q, axis=1))
        dots = matrix @ q
        if self.distance == "inner_product":
            return cast(np.ndarray, dots)
        norms = np.linalg.norm(matrix, axis=1) * np.linalg.norm(q)
        return cast(np.ndarray, dots / np.where(norms == 0, 1.0, norms))


def _field_list(fields: Any) -> list[str]:
    if isinstance(fields, str):
        return [fields]
    if not isinstance(fields, list) or not all(isinstance(f, str) for f in fields):
        raise ValueError(f"index fields {fields!r}: expected a list of paths")
    return fields
