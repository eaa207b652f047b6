"""Two different worlds simulated at once in one process give what each gives alone: nothing a run loads (its
world, scenario, catalog, memory store, embedder, model plumbing) leaks into another run through process-wide state."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from amphoreus_graph.society.runner import RunConfig, Simulation

WORLDS = ("fishery", "chatter")


def _config(world: str, parent: Path) -> RunConfig:
    return RunConfig(scenario=world, cycles=2, rounds=4, seed=7, out=parent / world)


def _written(run: Path) -> dict[str, str]:
    """Every sample and chronicle line a run wrote, by file."""
    files = [*run.glob("samples/*.jsonl"), *run.glob("chronicle/*.jsonl")]
    return {p.relative_to(run).as_posix(): p.read_text(encoding="utf-8") for p in sorted(files)}


@pytest.mark.slow
async def test_two_worlds_run_concurrently_as_each_runs_alone(tmp_path):
    alone, together = tmp_path / "alone", tmp_path / "together"
    for world in WORLDS:
        await Simulation(_config(world, alone)).run()
    # the same out path for each run's name (its run id): only the parent folder differs
    await asyncio.gather(*(Simulation(_config(w, together)).run() for w in WORLDS))
    for world in WORLDS:
        by_itself, beside = _written(alone / world), _written(together / world)
        assert by_itself and by_itself.keys() == beside.keys()
        for name, text in by_itself.items():
            assert beside[name] == text, f"{world}/{name} differs when run beside another world"
