"""A run keeps Python's full garbage collections off the libraries it loaded (society/heap.py)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap


def test_a_run_freezes_what_it_loaded_out_of_later_full_collections(tmp_path) -> None:
    """In a fresh interpreter: nothing is frozen before the run; after it, the libraries' objects are, and a full
    collection no longer scans them."""
    script = textwrap.dedent(
        f"""
        import asyncio, gc, json
        from amphoreus_graph.society.runner import RunConfig, Simulation
        before = gc.get_freeze_count()
        config = RunConfig(scenario="trio", cycles=1, rounds=1, out={str(tmp_path / "run")!r})
        asyncio.run(Simulation(config).run())
        print(json.dumps({{"before": before, "after": gc.get_freeze_count(), "tracked": len(gc.get_objects())}}))
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    counts = json.loads(done.stdout.strip().splitlines()[-1])
    assert counts["before"] == 0
    assert counts["after"] > 100_000 and counts["after"] > 3 * counts["tracked"], counts  # tracked: not frozen
