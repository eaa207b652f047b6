"""The offline Path policy: no model, deterministic for a seed, and faithful to the heir's Path.

Each action gets a utility from the Path's affinities (primary twice as much as secondary), the situation
(holding a Coreflame, a rising Tide, wounded allies) and recalled memories (heirs named in them draw the
heir's attention); a seeded Gumbel draw then picks one, so heirs act differently but reproducibly.
Speech is composed from the Path's lexicon and cites the most relevant memory it may say aloud: a secret
memory steers the choice (heirs named in it draw attention) and is noted in the private rationale, never quoted.
"""

from __future__ import annotations

import hashlib
import math
import random

from amphoreus_graph.actions import ACTION_TARGETS, Action, TargetKind
from amphoreus_graph.memory.records import gist
from amphoreus_graph.paths import Path, load_paths
from amphoreus_graph.policy.base import Decision, PolicyResult, RecalledMemory, TurnContext

ACTION_VERBS: dict[Action, str] = {
    Action.SEEK_COREFLAME: "go after the Coreflame of {target}",
    Action.DELIVER_COREFLAME: "carry my Coreflames to the Vortex",
    Action.ATTACK: "strike at {target}",
    Action.DEFEND: "stand guard over {target}",
    Action.AID: "tend to {target}",
    Action.ALLY: "offer my hand to {target}",
    Action.STUDY: "search the old texts for answers",
    Action.REMEMBER: "write down all that has happened, so it is not lost",
    Action.DECEIVE: "spin a tale for {target}",
    Action.EXPLORE: "set out for {target}",
    Action.DECREE: "proclaim a law all must follow",
    Action.JEST: "turn this gloom into a joke",
    Action.FIGHT_TIDE: "hold back the Black Tide",
    Action.WITHDRAW: "let the world turn without me",
}


def stable_rng(*parts: object) -> random.Random:
    """A Random seeded from the parts' text, identical across processes (unlike hash())."""
    digest = hashlib.sha256("|".join(map(str, parts)).encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


class OfflinePathPolicy:
    """Path-conditioned utility plus seeded noise; `temperature` scales the noise."""

    def __init__(self, temperature: float = 0.35, salt: str = "") -> None:
        self.name = "offline"
        self.temperature = temperature
        self.salt = salt

    async def adecide(self, turn: TurnContext) -> PolicyResult:
        return PolicyResult(decision=self.decide(turn))

    def decide(self, turn: TurnContext) -> Decision:
        catalog = load_paths()
        primary = catalog[turn.path]
        secondary = catalog[turn.secondary_path] if turn.secondary_path else None
        rng = stable_rng(turn.seed, turn.run_id, turn.heir, turn.cycle, turn.round, self.salt)
        named = _heirs_named_in_memories(turn)
        scores = {
            action: self._utility(action, turn, primary, secondary, named) + self._gumbel(rng)
            for action in turn.options
        }
        action = max(scores, key=lambda a: scores[a])
        target = self._target(action, turn, named, rng)
        return Decision(
            action=action,
            target=target,
            speech=compose_speech(action, target, turn, primary, rng),
            rationale=compose_rationale(action, primary, turn),
        )

    def _gumbel(self, rng: random.Random) -> float:
        return -math.log(-math.log(rng.random() or 1e-12)) * self.temperature

    @staticmethod
    def _utility(action: Action, turn: TurnContext, primary: Path, secondary: Path | None, named: list[str]) -> float:
        value = 2.0 * primary.affinity[action]
        if secondary is not None:
            value += secondary.affinity[action]
        tide = turn.black_tide / 100.0
        if action is Action.DELIVER_COREFLAME:
            value += 1.5
        elif action is Action.SEEK_COREFLAME and turn.seeks in turn.options[action]:
            value += 0.6
        elif action is Action.FIGHT_TIDE:
            value += tide
        elif action is Action.WITHDRAW and turn.health < 30:
            value += 0.5
        elif action is Action.AID and turn.health < 50:
            value -= 0.3
        if named and ACTION_TARGETS[action] is TargetKind.HEIR:
            value += 0.2
        return value

    @staticmethod
    def _target(action: Action, turn: TurnContext, named: list[str], rng: random.Random) -> str | None:
        targets = turn.options[action]
        if not targets:
            return None
        if action is Action.SEEK_COREFLAME and turn.seeks in targets:
            return turn.seeks
        remembered = [t for t in named if t in targets]
        if remembered:
            return remembered[0]
        if ACTION_TARGETS[action] is TargetKind.HEIR:
            # Hostile acts go to the least trusted, friendly ones to the most trusted.
            hostile = action in (Action.ATTACK, Action.DECEIVE)
            ranked = sorted(targets, key=lambda h: (turn.trust.get(h, 0.0) * (1 if hostile else -1), h))
            return ranked[0]
        return targets[rng.randrange(len(targets))]


def _heirs_named_in_memories(turn: TurnContext) -> list[str]:
    heirs = turn.trust.keys()
    return [h for m in turn.memories for h in heirs if h in m.text]


def speakable(memories: list[RecalledMemory]) -> RecalledMemory | None:
    """The best-ranked memory the heir may quote aloud: the first one that is not secret."""
    return next((m for m in memories if not m.secret), None)


def compose_speech(action: Action, target: str | None, turn: TurnContext, path: Path, rng: random.Random) -> str:
    words = rng.sample(path.lexicon, k=min(3, len(path.lexicon)))
    parts = [f"{words[0].capitalize()}!", f"I will {ACTION_VERBS[action].format(target=target or 'this')}."]
    if (quoted := speakable(turn.memories)) is not None:
        parts.append(f"I remember: {gist(quoted.text)}.")
    parts.append(f"This is the way of {words[1]} and {words[2]}.")
    return " ".join(parts)


def compose_rationale(action: Action, path: Path, turn: TurnContext) -> str:
    """Why, privately. It may say that the heir keeps a secret (secrets inform the rationale), never what."""
    kept = sum(m.secret for m in turn.memories)
    secrets = f" {kept} of them {'is a secret' if kept == 1 else 'are secrets'} I keep to myself." if kept else ""
    return (
        f"The Path of {path.name} rates {action.value} at {path.affinity[action]:+.2f}; "
        f"health {turn.health:.0f}, Black Tide {turn.black_tide:.0f}, "
        f"{len(turn.memories)} memories recalled.{secrets}"
    )
