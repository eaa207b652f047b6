"""The offline Path policy: no model, deterministic for a seed, and faithful to the agent's Path, in any world.

Each offered action gets a utility from the Path's affinity for it (derived from the action's tags; primary Path
twice as much as secondary; on a choice turn, whose options are free text, from reading each option's text against
the Paths' profiles instead: policy/reading.py), the pressures the world reports (what the situation urges: deliver
what you hold, rest when hurt…) and recalled memories (agents named in them draw attention to acts aimed at agents);
a seeded Gumbel draw then picks one, so agents act differently but reproducibly. Targets: the agent's own aim when
it is offered, else someone remembered, else the least trusted for hostile acts and the most trusted for friendly
ones. Speech is composed from half the Path's lexicon (which the Path judges mask: they hear the rest) and the
action's verb, and cites the most relevant memory it may say aloud: a secret memory steers the choice and is
noted in the private rationale, never quoted.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable

from amphoreus_graph.catalogs.paths import Path
from amphoreus_graph.catalogs.scenario import catalog_of_turn
from amphoreus_graph.contracts.actions import TargetKind
from amphoreus_graph.contracts.memory import gist
from amphoreus_graph.contracts.rng import stable_rng
from amphoreus_graph.contracts.turn import Decision, Option, PolicyResult, RecalledMemory, TurnContext
from amphoreus_graph.policy.answering import asks, nearest_memory, two_hop
from amphoreus_graph.policy.reading import shared_reader

HOSTILE_TAGS = frozenset({"violence", "deception"})


class OfflinePathPolicy:
    """Path-conditioned utility plus seeded noise; `temperature` scales the noise."""

    def __init__(self, temperature: float = 0.35, salt: str = "") -> None:
        self.name = "offline"
        self.temperature = temperature
        self.salt = salt

    async def adecide(self, turn: TurnContext) -> PolicyResult:
        return PolicyResult(decision=self.decide(turn))

    def decide(self, turn: TurnContext, values: str | None = None) -> Decision:
        """The agent's decision. `values`: decide by that Path's values alone while speaking as the agent's own
        Path: an alternative that differs from a faithful decision in what it does, not in how it talks."""
        catalog = catalog_of_turn(turn)
        own = catalog[turn.path]
        primary = catalog[values] if values else own
        secondary = catalog[turn.secondary_path] if turn.secondary_path and not values else None
        rng = stable_rng(turn.seed, turn.run_id, turn.agent, turn.cycle, turn.round, self.salt)
        named = _agents_named_in_memories(turn)
        first = _leaning(turn, primary)
        second = _leaning(turn, secondary) if secondary else dict.fromkeys(first, 0.0)
        scores = {
            o.action: 2.0 * first[o.action] + second[o.action] + self._utility(o, turn, named) + self._gumbel(rng)
            for o in turn.options
        }
        chosen = max(turn.options, key=lambda o: scores[o.action])
        target = self._target(chosen, turn, named, rng)
        # The words are the agent's in this turn whatever decides (no salt): alternatives re-posed to other seeds or
        # Paths then differ from the original in what they do, not in which of the Path's words they happened to
        # draw (judges hear some words as more on-Path, so per-candidate draws let a pair be told by a word).
        voice = stable_rng(turn.seed, turn.run_id, turn.agent, turn.cycle, turn.round, "voice")
        return Decision(
            action=chosen.action,
            target=target,
            speech=compose_speech(chosen, target, turn, own, voice),
            rationale=compose_rationale(chosen, turn),
        )

    def _gumbel(self, rng: random.Random) -> float:
        return -math.log(-math.log(rng.random() or 1e-12)) * self.temperature

    @staticmethod
    def _utility(option: Option, turn: TurnContext, named: list[str]) -> float:
        """What the situation adds: the world's pressures, and remembered agents drawing acts aimed at agents."""
        value = turn.pressures.get(option.action, 0.0)
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


def _leaning(turn: TurnContext, path: Path) -> dict[str, float]:
    """How much a Path favours each option: by the action's tags, or, on a choice turn, by reading its text."""
    if turn.choice:
        texts = [o.help for o in turn.options]
        read = shared_reader().evidence(texts, path.name, catalog_of_turn(turn))
        return {o.action: value for o, value in zip(turn.options, read, strict=True)}
    return {o.action: path.affinity(o) for o in turn.options}


def _agents_named_in_memories(turn: TurnContext) -> list[str]:
    agents = turn.trust.keys()
    return [a for m in turn.memories for a in agents if a in m.text]


def speakable(memories: list[RecalledMemory], agent: str = "", others: Iterable[str] = ()) -> RecalledMemory | None:
    """The best-ranked memory the agent may quote aloud: the first one that is not secret and, given the agent
    and the others it knows, not one of its own deeds (quoting its last deed as it does it again would say the
    same thing twice in the event the deed becomes)."""
    return next((m for m in memories if not m.secret and not _own_deed(gist(m.text), agent, others)), None)


def _own_deed(text: str, agent: str, others: Iterable[str]) -> bool:
    """Whether the first agent a memory names is `agent` (the one who did what it tells)."""
    if not agent or agent not in text:
        return False
    first = text.index(agent)
    return not any(0 <= text.find(other) < first for other in others if other != agent)


def compose_speech(
    option: Option, target: str | None, turn: TurnContext, path: Path, rng: random.Random, *, reasons: bool = True
) -> str:
    """What the agent says: its Path's words, the act, and what it remembers (or, `reasons` and the situation
    asking a question, the memory and observation that answer it together)."""
    spoken = path.speaking_words()
    words = rng.sample(spoken, k=min(3, len(spoken)))
    verb = option.verb or option.action.replace("_", " ") + (" {target}" if option.targets else "")
    parts = [f"{words[0].capitalize()}!", f"I will {verb.format(target=target or 'this')}."]
    if reasons and (answer := _answer(turn)) is not None:
        parts.append(answer)
    elif (quoted := speakable(turn.memories, turn.agent, turn.trust)) is not None:
        parts.append(f"I remember: {gist(quoted.text)}.")
    parts.append(f"This is the way of {words[1 % len(words)]} and {words[2 % len(words)]}.")
    return " ".join(parts)


def _answer(turn: TurnContext) -> str | None:
    """When the situation asks a question: the memory and observation that answer it together, said aloud (a
    secret memory is used, never quoted), or else the speakable memory that speaks to it most."""
    question = asks(turn.situation)
    if question is None or not turn.memories:
        return None
    texts = [m.text for m in turn.memories]
    found = two_hop(question, texts, turn.observations, shared_reader().embedder)
    if found is None:
        speakable_texts = [m.text for m in turn.memories if not m.secret]
        nearest = nearest_memory(question, speakable_texts, shared_reader().embedder)
        return f"I remember: {gist(nearest)}." if nearest else None
    memory, fact = found
    said = fact.rstrip(".")
    if turn.memories[texts.index(memory)].secret:
        return f"What I know: {said}."
    return f"I remember: {gist(memory)}. And {said}."


def compose_rationale(option: Option, turn: TurnContext) -> str:
    """Why, privately, in words that do not name a Path or a score: a preference pair of offline decisions must
    differ in what was done, not in a word that gives the answer away. It may say that the agent keeps a secret
    (secrets inform the rationale), never what."""
    kept = sum(m.secret for m in turn.memories)
    secrets = f" {kept} of them {'is a secret' if kept == 1 else 'are secrets'} I keep to myself." if kept else ""
    status = "; ".join(f"{key} {value}" for key, value in turn.status.items())
    return (
        f"Of {len(turn.options)} options I chose {option.action}; "
        f"{status + ', ' if status else ''}{len(turn.memories)} memories recalled.{secrets}"
    )
