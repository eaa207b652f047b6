"""Random damage to a run, then `--resume`: byte-identical, or one line that changed nothing (tests/damage_cases.py).

A fixed sample here, one case of each kind; `benchmarks/damage.py` runs hundreds of seeds and tallies them."""

from __future__ import annotations

import pytest

from tests.damage_cases import GOOD, prepare, run_case

# one seed of each kind of damage (the kind and the run it damages are the seed's first draws)
SEEDS = {
    "second writer, stopped run": 2,
    "zeroed HNSW header of the memory store": 8,
    "edited shard value, stopped run": 10,
    "deleted HNSW data file": 12,
    "truncated file, stopped run": 14,
    "renamed run": 19,
    "flipped bytes, stopped run": 7,
}


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    return prepare(tmp_path_factory.mktemp("damage-reference"))


@pytest.mark.slow
@pytest.mark.parametrize("seed", list(SEEDS.values()), ids=list(SEEDS))
def test_a_damaged_run_resumes_exactly_or_is_refused_in_one_line(reference, tmp_path, seed):
    case = run_case(seed, reference, tmp_path)
    assert case["outcome"] in GOOD, case
