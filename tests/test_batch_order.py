"""`batch_indices`: the same batches as one seeded shuffle per example would give, at the cost of the batch."""

from __future__ import annotations

import random
import time

import pytest

from amphoreus_graph.train.pretrain import batch_indices


def _reference(n: int, step: int, batch_size: int, seed: int) -> list[int]:
    """The definition: position p of the run is row order_e[p mod n] of epoch e = p // n's seeded permutation."""
    out = []
    for position in range((step - 1) * batch_size, step * batch_size):
        epoch, offset = divmod(position, n)
        order = list(range(n))
        random.Random(f"pretrain|{seed}|{epoch}").shuffle(order)
        out.append(order[offset])
    return out


@pytest.mark.parametrize(("n", "batch_size"), [(7, 3), (10, 10), (5, 12), (97, 8)])
def test_batches_match_the_definition_across_epoch_edges(n: int, batch_size: int) -> None:
    for seed in (0, 3):
        for step in range(1, 30):
            assert batch_indices(n, step, batch_size, seed) == _reference(n, step, batch_size, seed)


def test_every_row_once_per_epoch() -> None:
    n, batch_size = 12, 4
    seen = [i for step in range(1, 4) for i in batch_indices(n, step, batch_size, seed=1)]
    assert sorted(seen) == list(range(n))


def test_a_step_costs_its_batch_not_a_shuffle_per_example() -> None:
    """2,000 rows, batch 32: the reference shuffles 32 times a step (~10 ms here); 100 steps must take far less."""
    batch_indices(2000, 1, 32, seed=5)  # the epoch's one shuffle
    began = time.perf_counter()
    for step in range(2, 52):
        batch_indices(2000, step, 32, seed=5)
    assert time.perf_counter() - began < 0.05
