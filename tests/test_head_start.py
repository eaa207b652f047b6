"""Model work started ahead (memory/head_start.py): claimed once, counted once, and never needed."""

from __future__ import annotations

import threading

from amphoreus_graph.memory.head_start import HeadStarts
from amphoreus_graph.models.gateway import Role, metered, note


def _calling(result: object, gate: threading.Event | None = None):  # type: ignore[no-untyped-def]
    def work() -> object:
        if gate is not None:
            gate.wait(5)
        note(Role.IMPORTANCE, repairs=1)  # stands for a model call counted by the gateway
        return result

    return work


def test_claimed_work_is_waited_for_and_counted_on_the_claimers_meter() -> None:
    starts, gate = HeadStarts(), threading.Event()
    starts.start("ratings", "round 3", _calling("rated", gate))
    starts.start("ratings", "round 3", _calling("asked twice"))  # the same work: nothing new starts
    gate.set()
    with metered() as meter:
        assert starts.claim("ratings") == ("round 3", "rated")
    assert meter.use["importance"].repairs == 1
    assert starts.claim("ratings") is None, "claimed once"


def test_work_started_for_something_else_is_still_counted() -> None:
    starts = HeadStarts()
    with metered() as meter:
        starts.start("reflections", ("Cyrene",), _calling("old"))
        starts.start("reflections", ("Phainon",), _calling("new"))  # claims the old one here
        assert starts.claim("reflections") == (("Phainon",), "new")
    assert meter.use["importance"].repairs == 2


def test_a_failed_head_start_leaves_the_work_to_the_claimer() -> None:
    def broken() -> object:
        raise RuntimeError("the model server went away")

    starts = HeadStarts()
    starts.start("ratings", "round 1", broken)
    assert starts.claim("ratings") is None
