"""The action set every heir chooses from, and what each action may target.

Kept in one place so Paths (affinities), the Decision schema, the policies and the game master
all agree on the same closed vocabulary.
"""

from __future__ import annotations

from enum import StrEnum


class Action(StrEnum):
    """What a heir can do in one turn."""

    SEEK_COREFLAME = "seek_coreflame"
    DELIVER_COREFLAME = "deliver_coreflame"
    ATTACK = "attack"
    DEFEND = "defend"
    AID = "aid"
    ALLY = "ally"
    STUDY = "study"
    REMEMBER = "remember"
    DECEIVE = "deceive"
    EXPLORE = "explore"
    DECREE = "decree"
    JEST = "jest"
    FIGHT_TIDE = "fight_tide"
    WITHDRAW = "withdraw"


class TargetKind(StrEnum):
    """The kind of thing an action is aimed at."""

    NONE = "none"
    HEIR = "heir"
    TITAN = "titan"
    LOCATION = "location"


ACTION_TARGETS: dict[Action, TargetKind] = {
    Action.SEEK_COREFLAME: TargetKind.TITAN,
    Action.DELIVER_COREFLAME: TargetKind.NONE,
    Action.ATTACK: TargetKind.HEIR,
    Action.DEFEND: TargetKind.HEIR,
    Action.AID: TargetKind.HEIR,
    Action.ALLY: TargetKind.HEIR,
    Action.STUDY: TargetKind.NONE,
    Action.REMEMBER: TargetKind.NONE,
    Action.DECEIVE: TargetKind.HEIR,
    Action.EXPLORE: TargetKind.LOCATION,
    Action.DECREE: TargetKind.NONE,
    Action.JEST: TargetKind.NONE,
    Action.FIGHT_TIDE: TargetKind.NONE,
    Action.WITHDRAW: TargetKind.NONE,
}

ACTION_HELP: dict[Action, str] = {
    Action.SEEK_COREFLAME: "pursue a Titan's Coreflame (target: a Titan)",
    Action.DELIVER_COREFLAME: "bring the Coreflames you hold to the Vortex of Genesis",
    Action.ATTACK: "strike another heir; may wrest a Coreflame from the fallen (target: a heir)",
    Action.DEFEND: "shield a heir, yourself included, from harm this round (target: a heir)",
    Action.AID: "heal or help another heir (target: a heir)",
    Action.ALLY: "offer an alliance; mutual offers bind twice as strongly (target: a heir)",
    Action.STUDY: "seek knowledge; insight makes later Coreflame chases likelier to succeed",
    Action.REMEMBER: "record what has happened so that it outlasts the cycle",
    Action.DECEIVE: "mislead another heir (target: a heir)",
    Action.EXPLORE: "travel to a location (target: a location)",
    Action.DECREE: "proclaim a law for all to follow",
    Action.JEST: "lift spirits with a joke or a spectacle",
    Action.FIGHT_TIDE: "push back the Black Tide at some cost to yourself",
    Action.WITHDRAW: "do nothing; let the world turn without you",
}
