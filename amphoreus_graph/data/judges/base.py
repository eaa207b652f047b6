"""What judges are: two expert panels, their dimensions, and the scores they hand back.

The soundness panel asks whether a decision is sound: its logic, its consistency with the agent's own memories
(which includes keeping the secret ones out of its speech), and its knowledge of the world. The fidelity panel
asks whether it is the agent's: Path fidelity, character, and narrative quality. Every dimension is scored 1-10.
The panels' ids (`genius_society`, `nameless`) are kept as they were: they key every stored verdict and DPO row.
"""

from __future__ import annotations

import statistics
from typing import Literal, Protocol

from pydantic import BaseModel, Field

from amphoreus_graph.catalogs.scenario import scenario_for
from amphoreus_graph.contracts.turn import Decision, TurnContext
from amphoreus_graph.contracts.world import World

Panel = Literal["genius_society", "nameless"]
PANELS: dict[Panel, tuple[str, ...]] = {
    "genius_society": ("logic", "consistency", "knowledge"),
    "nameless": ("path_fidelity", "character", "narrative"),
}
PANEL_TITLES: dict[Panel, str] = {"genius_society": "the soundness panel", "nameless": "the fidelity panel"}


class Verdict(BaseModel):
    """One panel's scores (1-10 per dimension) for one candidate, with its reasoning."""

    panel: Panel
    scores: dict[str, float]
    reasoning: str = ""
    flags: list[str] = Field(default_factory=list, description="e.g. fallback when a model judge failed")

    @property
    def overall(self) -> float:
        return statistics.fmean(self.scores.values())


class JudgeItem(BaseModel):
    """A candidate decision in the situation it answers."""

    turn: TurnContext
    decision: Decision


class Judge(Protocol):
    """Scores a batch of candidates; one verdict per panel per candidate, in order."""

    name: str

    async def ascore(self, items: list[JudgeItem]) -> list[dict[Panel, Verdict]]: ...


def clamp_score(value: float) -> float:
    """A unit interval value on the 1-10 scale, rounded for stable files."""
    return round(1.0 + 9.0 * min(1.0, max(0.0, value)), 3)


def world_of(turn: TurnContext) -> World | None:
    """The world a turn was posed in, whose rules, words and labels a judge applies; None for a turn posed
    outside any world (only world-neutral checks apply to it)."""
    return scenario.world if (scenario := scenario_for(turn)) else None
