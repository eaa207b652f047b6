"""Actions are data a world declares: what an agent may do, aimed at what, from where, and what it means.

A Path never rates a world's actions one by one: it rates *tags* (a shared vocabulary of what acts are about),
so one Path catalog serves every world. An action's affinity for a Path is derived from its tags, unless the
world overrides it for that Path.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

# The default tag vocabulary: what an act is about. A Path catalog may add its own (see catalogs/paths.py).
TAGS: dict[str, str] = {
    "violence": "harming or threatening someone",
    "protection": "shielding someone or something from harm",
    "care": "healing, feeding, comforting",
    "alliance": "binding oneself to others",
    "inquiry": "studying, asking, finding out",
    "record-keeping": "remembering, writing down, preserving what happened",
    "deception": "lying, misleading, hiding the truth",
    "travel": "going somewhere, exploring",
    "authority": "ruling, decreeing, ordering others",
    "mirth": "joking, playing, celebrating",
    "sacrifice": "paying a cost of one's own for others or a cause",
    "acquisition": "taking, gathering, winning, owning",
    "withdrawal": "resting, hiding, doing nothing",
    "creation": "making, building, lighting, bringing into being",
}


class TargetKind(StrEnum):
    """What an action is aimed at."""

    NONE = "none"
    AGENT = "agent"
    LOCATION = "location"
    OBJECTIVE = "objective"
    TEXT = "text"
    ITEM = "item"  # something the world lists with an id (a post, a motion, an offer), e.g. "#12"


class Reach(StrEnum):
    """Where an action may be taken from: at the target's place, from anywhere, or along an edge of the map."""

    HERE = "here"
    ANYWHERE = "anywhere"
    EDGE = "edge"


class ActionBrief(BaseModel):
    """What a deciding agent needs to know of an offered action (kept in every turn, so a turn read back from a
    sample can be re-posed, judged and scored without the world that offered it)."""

    model_config = ConfigDict(frozen=True)

    help: str = Field(default="", description="one line for the prompt: what it does")
    target: TargetKind = TargetKind.NONE
    tags: list[str] = Field(default_factory=list)
    verb: str = Field(default="", description="first person, for offline speech: 'strike at {target}'")
    affinity: dict[str, float] = Field(
        default_factory=dict, description="per-Path overrides of the tag-derived affinity, in [-1, 1]"
    )


class ActionSpec(ActionBrief):
    """An action as a world declares it."""

    name: str
    importance: float = Field(default=3.0, ge=1, le=10, description="base importance of what it makes happen")
    reach: Reach = Reach.HERE

    def brief(self) -> ActionBrief:
        return ActionBrief.model_validate(self.model_dump(include=set(ActionBrief.model_fields)))
