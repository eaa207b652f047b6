"""A round's checkpoints grow with the round's turns, by a few KB a turn: a step stores the channels it changed,
and a turn's Send names only its agent (benchmarks/checkpoint_growth.py measures it at larger sizes)."""

from __future__ import annotations

import pytest

from benchmarks.checkpoint_growth import growth

KB = 1024


@pytest.mark.slow
def test_checkpoint_bytes_per_round_grow_linearly_with_the_rounds_turns():
    small, large = growth(12, 4), growth(48, 4)
    assert small["turns_by_round"][1:3] == [12, 12] and large["turns_by_round"][1:3] == [48, 48]
    assert large["bytes_per_turn"] <= 5 * KB, large
    # four times the agents: at most four times the bytes a round (no faster than the turns; whole-state
    # checkpoints stored 28 KB a turn here, and 14× the bytes a round at 120 agents), each added turn a few KB
    assert large["bytes_per_round"] <= 4 * small["bytes_per_round"], (small, large)
    added = (large["bytes_per_round"] - small["bytes_per_round"]) / (48 - 12)
    assert 0 < added <= 5 * KB, (small, large)
