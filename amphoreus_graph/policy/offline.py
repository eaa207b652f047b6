"""The offline Path policy: no model, deterministic for a seed, and faithful to the agent's Path, in any world.

Each offered action gets a utility from the Path's affinity for it (derived from the action's tags; primary Path
twice as much as secondary), the pressures the world reports (what the situation urges: deliver what you hold,
rest when hurt…) and recalled memories (agents named in them draw attention to acts aimed at agents); a seeded
Gumbel draw then picks one, so agents act differently but reproducibly. Targets: the agent's own aim when it is
offered, else someone remembered, else the least trusted for hostile acts and the most trusted for friendly ones.
Speech is composed from the Path's lexicon and the action's verb, and cites the most relevant memory it may say
aloud: a secret memory steers the choice and is noted in the private rationale, never quoted.
"""

from __future__ import annotations

import math
import random

from amphoreus_graph.catalogs.paths import Path
from amphoreus_graph.catalogs.scenario import catalog_for
from amphoreus_graph.contracts.actions import TargetKind
from amphoreus_graph.contracts.memory import gist
from amphoreus_graph.contracts.rng import stable_rng
from amphoreus_graph.contracts.turn import Decision, Option, PolicyResult, RecalledMemory, TurnContext

HOSTILE_TAGS = frozenset({"violence", "deception"})


class OfflinePathPolicy:
    """Path-conditioned utility plus seeded noise; `temperature` scales the noise."""

    def __init__(self, temperature: float = 0.35, salt: str = "") -> None:
        self.name = "offline"
        self.temperature = temperature
        self.salt = salt

    async def adecide(self, turn: TurnContext) -> PolicyResult:
        return PolicyResult(decision=self.decide(turn))

    def decide(self, turn: TurnContext) -> Decision:
        catalog = catalog_for(turn.world)
        primary = catalog[turn.path]
        secondary = catalog[turn.secondary_path] if turn.secondary_path else None
        rng = stable_rng(turn.seed, turn.run_id, turn.agent, turn.cycle, turn.round, self.salt)
        named = _agents_named_in_memories(turn)
        scores = {
            option.action: self._utility(option, turn, primary, secondary, named) + self._gumbel(rng)
            for option in turn.options
        }
        chosen = max(turn.options, key=lambda o: scores[o.action])
        target = self._target(chosen, turn, named, rng)
        return Decision(
            action=chosen.action,
            target=target,
            speech=compose_speech(chosen, target, turn, primary, rng),
            rationale=compose_rationale(chosen, primary, turn),
        )

    def _gumbel(self, rng: random.Random) -> float:
        return -math.log(-math.log(rng.random() or 1e-12)) * self.temperature

    @staticmethod
    def _utility(option: Option, turn: TurnContext, primary: Path, secondary: Path | None, named: list[str]) -> float:
        value = 2.0 * primary.affinity(option)
        if secondary is not None:
            value += secondary.affinity(option)
        value += turn.pressures.get(option.action, 0.0)
        if named and option.target is TargetKind.AGENT:
            value += 0.2
        return value

    @staticmethod
    def _target(option: Option, turn: TurnContext, named: list[str], rng: random.Random) -> str | None:
        targets = option.targets
        if not targets:
            return None
        if turn.aim_target in targets:
            return turn.aim_target
        remembered = [t for t in named if t in targets]
        if remembered:
            return remembered[0]
        if option.target is TargetKind.AGENT:
            # Hostile acts go to the least trusted, friendly ones to the most trusted.
            hostile = bool(HOSTILE_TAGS & set(option.tags))
            ranked = sorted(targets, key=lambda a: (turn.trust.get(a, 0.0) * (1 if hostile else -1), a))
            return ranked[0]
        return targets[rng.randrange(len(targets))]


def _agents_named_in_memories(turn: TurnContext) -> list[str]:
    agents = turn.trust.keys()
    return [a for m in turn.memories for a in agents if a in m.text]


def speakable(memories: list[RecalledMemory]) -> RecalledMemory | None:
    """The best-ranked memory the agent may quote aloud: the first one that is not secret."""
    return next((m for m in memories if not m.secret), None)


def compose_speech(option: Option, target: str | None, turn: TurnContext, path: Path, rng: random.Random) -> str:
    words = rng.sample(path.lexicon, k=min(3, len(path.lexicon)))
    verb = option.verb or option.action.replace("_", " ") + (" {target}" if option.targets else "")
    parts = [f"{words[0].capitalize()}!", f"I will {verb.format(target=target or 'this')}."]
    if (quoted := speakable(turn.memories)) is not None:
        parts.append(f"I remember: {gist(quoted.text)}.")
    parts.append(f"This is the way of {words[1]} and {words[2]}.")
    return " ".join(parts)


def compose_rationale(option: Option, path: Path, turn: TurnContext) -> str:
    """Why, privately. It may say that the agent keeps a secret (secrets inform the rationale), never what."""
    kept = sum(m.secret for m in turn.memories)
    secrets = f" {kept} of them {'is a secret' if kept == 1 else 'are secrets'} I keep to myself." if kept else ""
    status = "; ".join(f"{key} {value}" for key, value in turn.status.items())
    return (
        f"The Path of {path.name} rates {option.action} at {path.affinity(option):+.2f}; "
        f"{status + ', ' if status else ''}{len(turn.memories)} memories recalled.{secrets}"
    )
