"""The local engine: a plan's societies as asyncio tasks in this process.

They share the loaded embedder and one semaphore on decisions in flight (`--max-concurrency`, for all of them
together); at most `parallel` societies are alive at once, so a plan of thousands keeps a bounded set of open
Chroma clients, checkpoints and graph states. Samples go to each society's shards as rounds finish.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from typing import Any

from amphoreus_graph.models.embedder import default_embedder
from amphoreus_graph.scepter.plan import ScepterConfig
from amphoreus_graph.scepter.society import Instrument, NoInstrument, Shared, run_society, status
from amphoreus_graph.society.config import RunConfig

_DONE = object()


class LocalEngine:
    """Runs the plan's societies (or only those named) concurrently; `stream()` yields their events. `node`: the
    Ray node this process is on, written to each society's progress."""

    def __init__(
        self,
        plan: ScepterConfig,
        *,
        only: list[str] | None = None,
        instrument: Instrument | None = None,
        node: str = "",
    ) -> None:
        self.plan = plan
        self.only = None if only is None else set(only)
        self.instrument = instrument or NoInstrument()
        self.node = node

    def configs(self) -> list[RunConfig]:
        return [c for c in self.plan.society_configs() if self.only is None or c.run_id in self.only]

    async def stream(self) -> AsyncGenerator[dict[str, Any], None]:
        configs = self.configs()
        # Load each embedder once, before societies race to it (functools.cache does not lock).
        for name in dict.fromkeys(c.embedder for c in configs if status(c) != "done"):
            await asyncio.to_thread(default_embedder, name)
        slots = asyncio.Semaphore(self.plan.template.max_concurrency)
        shared = Shared(slots=slots, instrument=self.instrument, node=self.node)
        gate = asyncio.Semaphore(self.plan.parallel)
        queue: asyncio.Queue[Any] = asyncio.Queue()

        async def drive(cfg: RunConfig) -> None:
            outcome: Any = _DONE
            try:
                async with gate:
                    async for event in run_society(cfg, shared):
                        queue.put_nowait(event)
            except Exception as exc:
                outcome = exc
            finally:
                queue.put_nowait(outcome)

        tasks = [asyncio.create_task(drive(cfg), name=cfg.run_id) for cfg in configs]
        running = len(tasks)
        try:
            while running:
                event = await queue.get()
                if isinstance(event, Exception):
                    raise event  # the first failure ends the run; every society can resume
                if event is _DONE:
                    running -= 1
                    continue
                yield event
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
