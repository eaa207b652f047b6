"""Amphoreus in one cycle: who is where, who holds which Coreflame, trust, harm and the Black Tide.

Pure data (pydantic) so that it checkpoints and streams; built fresh from the spec at genesis.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, Field

from amphoreus_graph.worlds.amphoreus.schema import AmphoreusSpec


class Outcome(StrEnum):
    ERA_NOVA = "era_nova"
    BLACK_TIDE = "black_tide"
    ALL_FALLEN = "all_fallen"
    ROUND_LIMIT = "round_limit"


class HeirState(BaseModel):
    location: str
    health: float = 100.0
    insight: int = 0
    holding: list[str] = Field(default_factory=list, description="Titans whose Coreflames this heir holds")
    delivered: list[str] = Field(default_factory=list)

    @property
    def fallen(self) -> bool:
        return self.health <= 0


class AmphoreusState(BaseModel):
    """Mutable state of one cycle; the game master changes it, everyone else only reads it."""

    cycle: int
    round: int = 0
    heirs: dict[str, HeirState]
    free_coreflames: list[str] = Field(description="Titans whose Coreflame nobody has taken yet")
    delivered: list[str] = Field(default_factory=list)
    trust: dict[str, dict[str, float]]
    black_tide: float
    outcome: Outcome | None = None

    @classmethod
    def genesis(cls, scenario: AmphoreusSpec, cycle: int) -> AmphoreusState:
        """The world as the spec describes it at the start of every cycle."""
        names = scenario.heir_names
        return cls(
            cycle=cycle,
            heirs={h.name: HeirState(location=h.start_location) for h in scenario.heirs},
            free_coreflames=[t.name for t in scenario.titans],
            trust={
                h.name: {o: float(h.relationships.get(o, 0.0)) for o in names if o != h.name} for h in scenario.heirs
            },
            black_tide=scenario.black_tide.start,
        )

    def heirs_at(self, location: str) -> list[str]:
        return [n for n, h in self.heirs.items() if h.location == location and not h.fallen]

    def holder_of(self, titan: str) -> str | None:
        return next((n for n, h in self.heirs.items() if titan in h.holding), None)

    def adjust_trust(self, truster: str, trusted: str, delta: float) -> None:
        if truster == trusted or trusted not in self.trust.get(truster, {}):
            return
        value = self.trust[truster][trusted] + delta
        self.trust[truster][trusted] = round(max(-1.0, min(1.0, value)), 4)

    def coreflames_per_heir(self) -> dict[str, int]:
        return {n: len(h.holding) + len(h.delivered) for n, h in self.heirs.items()}
