"""An agent's held vectors (held_vectors.py) answer exactly as the exact scan of the same rows (index.nearest),
ties and zero vectors included, through any sequence of rows written, rewritten and deleted."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from amphoreus_graph.memory.held_vectors import HeldVectors
from amphoreus_graph.memory.index import nearest

DIMENSION = 3
# Small integer components: many exact ties, zero vectors, opposite ones.
vectors = st.lists(st.integers(-2, 2), min_size=DIMENSION, max_size=DIMENSION).map(lambda v: [float(x) for x in v])
rows = st.sampled_from([f"r{i}" for i in range(40)])
steps = st.lists(st.tuples(st.booleans(), rows, vectors), max_size=120)


@settings(max_examples=200, deadline=None)
@given(steps=steps, query=vectors, n=st.integers(0, 45), bulk=st.booleans())
def test_held_vectors_answer_as_the_exact_scan(steps, query, n, bulk):
    held, expected = HeldVectors(), {}
    if bulk:
        first = dict((row, vector) for _, row, vector in steps[:10])
        held, expected = HeldVectors.of(list(first), list(first.values())), dict(first)
        steps = steps[10:]
    for deleting, row, vector in steps:
        if deleting:
            held.remove([row])
            expected.pop(row, None)
        else:
            held.put(row, vector)
            expected[row] = vector
    ids = sorted(expected)
    assert len(held) == len(ids)
    assert held.nearest(query, n) == (nearest(ids, [expected[i] for i in ids], query, n) if n else [])


def test_near_ties_beyond_float32_are_ranked_as_float64_ranks_them():
    """Rows whose cosines differ by less than float32 can tell apart are still ranked as the exact scan ranks them
    (of the float32 vectors held, as Chroma holds them)."""
    rng = np.random.default_rng(3)
    base = rng.standard_normal(384)
    table = {f"r{i}": (base + rng.standard_normal(384) * 1e-6).astype(np.float32).tolist() for i in range(300)}
    held = HeldVectors.of(list(table), list(table.values()))
    ids = sorted(table)
    assert held.nearest(base.tolist(), 7) == nearest(ids, [table[i] for i in ids], base.tolist(), 7)
