"""Model work started before the step that needs it, and claimed there.

A round's filing asks a model for the round's importance ratings and for the reflections that are due; neither
writes anything, and both can be known as soon as the game master has resolved the round. Started there, on a
background thread, their calls overlap the record, the next round's framing and the first part of its turns,
instead of starting with the filing step. The step that files then claims the work: it waits for what is still
in flight and counts its calls on its own meter (the gateway's accounting sees each call once, in the step that
uses it). Work no step claimed (a run stopped between rounds) is claimed by the run as it stops, so its calls are
counted in the summary; the step that files the round after a resume asks again.
"""

from __future__ import annotations

import functools
import logging
import os
from collections.abc import Callable, Hashable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from amphoreus_graph.models.gateway import Meter, absorb, metered

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class _Started:
    key: Hashable
    done: Future[tuple[Any, Meter]]


class HeadStarts:
    """At most one piece of work per job name in flight, each known by the key of what it was asked for."""

    def __init__(self) -> None:
        self._started: dict[str, _Started] = {}

    def start(self, job: str, key: Hashable, work: Callable[[], Any]) -> None:
        """Run `work` in the background, its model calls counted on a meter of its own, unless `job` was already
        started for `key` (and not claimed since). Work started for another key is claimed and set aside first, so
        its calls are still counted."""
        started = self._started.get(job)
        if started is not None and started.key == key:
            return
        if started is not None:
            self.claim(job)
        self._started[job] = _Started(key, _model_lane(os.getpid()).submit(_counted, work))

    def claim(self, job: str) -> tuple[Hashable, Any] | None:
        """The key and result of the work started for `job` (waiting for it), its calls counted on the current
        context's meter; None if none was started or it failed (the caller does the work itself)."""
        started = self._started.pop(job, None)
        if started is None:
            return None
        try:
            result, meter = started.done.result()
        except Exception as exc:  # a head start that failed costs only the head start
            log.debug("head start %s: %s: %s", job, type(exc).__name__, exc)
            return None
        absorb(meter)
        return started.key, result

    def claim_all(self) -> None:
        """Claim whatever is still started (waiting for it): its calls are counted, its results dropped."""
        for job in list(self._started):
            self.claim(job)


def _counted(work: Callable[[], Any]) -> tuple[Any, Meter]:
    with metered() as meter:
        return work(), meter


@functools.cache
def _model_lane(pid: int) -> ThreadPoolExecutor:
    """Threads that wait on models for head starts, per process (a forked child makes its own): each holds its
    thread for a model call, so there are enough for many societies at once."""
    return ThreadPoolExecutor(64, thread_name_prefix="model-ahead")
