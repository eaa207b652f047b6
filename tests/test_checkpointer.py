"""A filing step waits for the checkpoint it started from only where the memory keeps something outside the
checkpoints."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any


def test_only_a_memory_that_stores_waits_for_the_checkpoint_before_filing(monkeypatch):
    from amphoreus_graph.memory.store import NullMemory
    from amphoreus_graph.policy.registry import resolve_model
    from amphoreus_graph.society import services as services_module

    waited: list[bool] = []

    async def on_disk() -> None:
        waited.append(True)

    monkeypatch.setattr(services_module, "starting_checkpoint_on_disk", on_disk)

    def filing_waits(memory: Any) -> bool:
        waited.clear()
        services = services_module.Services(policy=resolve_model("offline"), memory=memory, samples=None)
        asyncio.run(services.before_filing())
        return bool(waited)

    assert not filing_waits(NullMemory())  # keeps nothing outside the checkpoints: nothing to wait for
    assert filing_waits(SimpleNamespace(stores=True))
    assert filing_waits(SimpleNamespace())  # a memory that does not say is taken to store
