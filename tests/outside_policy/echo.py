"""A `--model` family from outside the package: `echo:NOTE` decides as the offline policy does and keeps what
its factory was given, so a test can see the run's endpoint, key, limits, cache and call log reached it."""

from __future__ import annotations

from amphoreus_graph.contracts.turn import PolicyResult, TurnContext
from amphoreus_graph.models.access import ModelAccess
from amphoreus_graph.policy.offline import OfflinePathPolicy

GIVEN: list[tuple[str, ModelAccess]] = []


class EchoPolicy:
    name = "echo"

    def __init__(self) -> None:
        self.inner = OfflinePathPolicy()

    async def adecide(self, turn: TurnContext) -> PolicyResult:
        return await self.inner.adecide(turn)


def echo_family(note: str, access: ModelAccess) -> EchoPolicy:
    GIVEN.append((note, access))
    return EchoPolicy()
