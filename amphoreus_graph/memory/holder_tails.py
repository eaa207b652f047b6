"""Each holder's rows set apart in a society's one HNSW graph, without changing how any holder's rows rank.

The same text is often held by many agents: an event's witnesses each file it (and, in stores written before the
public index, every agent held its own copy of a public record). In one Chroma collection those rows were identical
points, and an HNSW graph degrades on them: inserting 5,461 rows of a 1,000-agent round (866 distinct vectors) took
37-59 s of CPU with 64 neighbours per node, 3.3-3.7 s once the points were distinct (docs/speed.md), and the cost
grows with the size of the clusters, which was the society's size for a public record.

So a row is stored as its vector v followed by a short tail, |v| times a unit vector drawn from the holder's exact
name (SHA-256), weighted by TAIL_WEIGHT; a search for a holder appends that holder's tail to the query the same way.
For the query q and any row of the same holder the stored cosine is (cos(q, v) + w²) / (1 + w²): the same order as
cos(q, v). Rows of different holders now differ (by their tails), and a holder's rows share a direction, which leads
a search filtered to that holder towards them. A stored vector's first values are v, unchanged; the rows a search
finds are ranked again on them (float32 distances between tailed vectors would round the similarity off).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

TAIL_DIMS = 16  # values a tail adds to each stored vector (two bytes of the holder's SHA-256 each)
TAIL_WEIGHT = 1.0  # the tail's length against the vector's


def holder_tail(holder: str) -> NDArray[np.float64]:
    """The unit vector of TAIL_DIMS values drawn from the holder's exact name (no normalisation of the name)."""
    digest = hashlib.sha256(holder.encode("utf-8", "surrogatepass")).digest()
    tail = np.frombuffer(digest[: 2 * TAIL_DIMS], dtype=">u2").astype(np.float64) / 65535.0 - 0.5
    norm = float(np.linalg.norm(tail))
    if norm == 0.0:  # not reachable from a SHA-256 in practice; a tail must still be a direction
        tail = np.eye(TAIL_DIMS)[0]
        norm = 1.0
    return tail / norm


def with_tail(vector: Sequence[float] | NDArray[np.floating], holder: str) -> list[float]:
    """A vector as stored for (or searched by) its holder: the vector, then its length times the holder's tail."""
    v = np.asarray(vector, dtype=np.float64)
    return np.concatenate([v, float(np.linalg.norm(v)) * TAIL_WEIGHT * holder_tail(holder)]).tolist()


def without_tails(vectors: ArrayLike) -> NDArray[np.float64]:
    """Stored vectors as they were written: their tails cut off."""
    matrix = np.asarray(vectors, dtype=np.float64)
    if matrix.size == 0:
        return matrix.reshape(0, 0)
    return matrix[:, :-TAIL_DIMS]
