"""Baseline policies for the Path Emanator benchmarks: `random`, `longest`, `keywords` and `single-path:<Path>`.

`random` picks any offered action and target uniformly and speaks in the words of a random Path, answering no
question: it should score at chance. `longest` takes the offered option with the longest description and says it: a
reader of length alone, at chance wherever items are balanced for length. `keywords` knows its Path's words and
nothing else: it says three of them and picks the option that shares most words with its Path's lexicon (ties by a
seeded draw); a benchmark that words cannot game scores it at chance. `single-path:<Path>` is the seed's "previous
PES model" that simulates only one Path: every agent decides and speaks as that Path, so it should score high only
where that Path is the right answer.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from random import Random

from amphoreus_graph.catalogs.path_words import PathWordMask
from amphoreus_graph.catalogs.scenario import catalog_of_turn
from amphoreus_graph.contracts.rng import stable_rng
from amphoreus_graph.contracts.turn import Decision, Option, PolicyResult, TurnContext
from amphoreus_graph.policy.offline import OfflinePathPolicy, compose_rationale, compose_speech


class RandomPolicy:
    def __init__(self, salt: str = "") -> None:
        self.name = "random"
        self.salt = salt

    async def adecide(self, turn: TurnContext) -> PolicyResult:
        return PolicyResult(decision=self.decide(turn))

    def decide(self, turn: TurnContext) -> Decision:
        rng = stable_rng(turn.seed, turn.run_id, turn.agent, turn.cycle, turn.round, "random", self.salt)
        catalog = catalog_of_turn(turn)
        path = catalog[rng.choice(catalog.names())]
        option = rng.choice(sorted(turn.options, key=lambda o: o.action))
        target = rng.choice(option.targets) if option.targets else None
        return Decision(
            action=option.action,
            target=target,
            speech=compose_speech(option, target, turn, path, rng, reasons=False),
            rationale=compose_rationale(option, turn),
        )


class ShortcutPolicy(ABC):
    """A reader of one surface feature: takes the option the feature scores highest (ties by a seeded draw)."""

    name = "shortcut"

    async def adecide(self, turn: TurnContext) -> PolicyResult:
        return PolicyResult(decision=self.decide(turn))

    def decide(self, turn: TurnContext) -> Decision:
        rng = stable_rng(turn.seed, turn.run_id, turn.agent, turn.cycle, turn.round, self.name)
        options = sorted(turn.options, key=lambda o: o.action)
        scores = [self.score(option, turn) for option in options]
        option = rng.choice([o for o, n in zip(options, scores, strict=True) if n == max(scores)])
        target = rng.choice(option.targets) if option.targets else None
        return Decision(
            action=option.action,
            target=target,
            speech=self.speech(option, turn, rng),
            rationale=compose_rationale(option, turn),
        )

    @abstractmethod
    def score(self, option: Option, turn: TurnContext) -> float:
        """How much of the feature the option shows."""

    @abstractmethod
    def speech(self, option: Option, turn: TurnContext, rng: Random) -> str:
        """What the reader says with its choice."""


class LongestPolicy(ShortcutPolicy):
    """Picks the option whose description is longest and speaks that description."""

    name = "longest"

    def score(self, option: Option, turn: TurnContext) -> float:
        return len(option.help)

    def speech(self, option: Option, turn: TurnContext, rng: Random) -> str:
        return option.help


class KeywordPolicy(ShortcutPolicy):
    """Speaks only its Path's lexicon words; chooses by counting them in each option's text."""

    name = "keywords"

    def score(self, option: Option, turn: TurnContext) -> float:
        own = PathWordMask(catalog_of_turn(turn)[turn.path].lexicon)
        return len(own.spans(" ".join([option.action.replace("_", " "), option.verb, option.help])))

    def speech(self, option: Option, turn: TurnContext, rng: Random) -> str:
        lexicon = catalog_of_turn(turn)[turn.path].lexicon
        return ", ".join(rng.sample(lexicon, k=min(3, len(lexicon)))).capitalize() + "."


class SinglePathPolicy:
    """Every agent decides as if it walked `path` alone."""

    def __init__(self, path: str) -> None:
        self.name = f"single-path:{path}"
        self.path = path
        self._offline = OfflinePathPolicy(salt=f"single-path:{path}")

    async def adecide(self, turn: TurnContext) -> PolicyResult:
        posed = turn.model_copy(update={"path": self.path, "secondary_path": None})
        return PolicyResult(decision=self._offline.decide(posed))
