"""A round's checkpoints grow with the round's turns, by a few KB a turn: a step stores the channels it changed,
and a turn's Send names only its agent (benchmarks/checkpoint_growth.py measures it at larger sizes)."""

from __future__ import annotations

import pytest

from benchmarks.checkpoint_growth import growth

KB = 1024


@pytest.mark.slow
def test_checkpoint_bytes_grow_linearly_with_the_turns():
    # the file once the run is over (every write committed: read mid-run, a write behind may not be yet)
    small, large = growth(12, 4), growth(48, 4)
    turns = {run["agents"]: sum(run["turns_by_round"]) for run in (small, large)}
    assert turns == {12: 48, 48: 192}
    assert large["bytes_at_end"] <= 5 * KB * turns[48], large  # the run's setup and cycle's end included
    # four times the agents: less than four times the bytes (whole-state checkpoints stored 4.2× here, and 14× a
    # round at 120 agents), each added turn a few KB
    assert large["bytes_at_end"] <= 4 * small["bytes_at_end"], (small, large)
    added = (large["bytes_at_end"] - small["bytes_at_end"]) / (turns[48] - turns[12])
    assert 0 < added <= 5 * KB, (small, large)
