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

from amphoreus_graph.catalogs.path_words import PathWordMask
from amphoreus_graph.catalogs.scenario import catalog_for
from amphoreus_graph.contracts.rng import stable_rng
from amphoreus_graph.contracts.turn import Decision, PolicyResult, TurnContext
from amphoreus_graph.policy.offline import OfflinePathPolicy, compose_rationale, compose_speech


class RandomPolicy:
    def __init__(self, salt: str = "") -> None:
        self.name = "random"
        self.salt = salt

    async def adecide(self, turn: TurnContext) -> PolicyResult:
        return PolicyResult(decision=self.decide(turn))

    def decide(self, turn: TurnContext) -> Decision:
        rng = stable_rng(turn.seed, turn.run_id, turn.agent, turn.cycle, turn.round, "random", self.salt)
        catalog = catalog_for(turn.world)
        path = catalog[rng.choice(catalog.names())]
        option = rng.choice(sorted(turn.options, key=lambda o: o.action))
        target = rng.choice(option.targets) if option.targets else None
        return Decision(
            action=option.action,
            target=target,
            speech=compose_speech(option, target, turn, path, rng, reasons=False),
            rationale=compose_rationale(option, turn),
        )


class LongestPolicy:
    """Picks the option whose description is longest (ties drawn) and speaks that description."""

    name = "longest"

    async def adecide(self, turn: TurnContext) -> PolicyResult:
        return PolicyResult(decision=self.decide(turn))

    def decide(self, turn: TurnContext) -> Decision:
        rng = stable_rng(turn.seed, turn.run_id, turn.agent, turn.cycle, turn.round, "longest")
        most = max(len(o.help) for o in turn.options)
        option = rng.choice(sorted((o for o in turn.options if len(o.help) == most), key=lambda o: o.action))
        target = rng.choice(option.targets) if option.targets else None
        return Decision(
            action=option.action, target=target, speech=option.help, rationale=compose_rationale(option, turn)
        )


class KeywordPolicy:
    """Speaks only its Path's lexicon words; chooses by counting them in each option's text."""

    name = "keywords"

    async def adecide(self, turn: TurnContext) -> PolicyResult:
        return PolicyResult(decision=self.decide(turn))

    def decide(self, turn: TurnContext) -> Decision:
        rng = stable_rng(turn.seed, turn.run_id, turn.agent, turn.cycle, turn.round, "keywords")
        path = catalog_for(turn.world)[turn.path]
        own = PathWordMask(path.lexicon)
        options = sorted(turn.options, key=lambda o: o.action)
        counts = [len(own.spans(" ".join([o.action.replace("_", " "), o.verb, o.help]))) for o in options]
        option = rng.choice([o for o, n in zip(options, counts, strict=True) if n == max(counts)])
        target = rng.choice(option.targets) if option.targets else None
        words = rng.sample(path.lexicon, k=min(3, len(path.lexicon)))
        return Decision(
            action=option.action,
            target=target,
            speech=", ".join(words).capitalize() + ".",
            rationale=compose_rationale(option, turn),
        )


class SinglePathPolicy:
    """Every agent decides as if it walked `path` alone."""

    def __init__(self, path: str) -> None:
        self.name = f"single-path:{path}"
        self.path = path
        self._offline = OfflinePathPolicy(salt=f"single-path:{path}")

    async def adecide(self, turn: TurnContext) -> PolicyResult:
        posed = turn.model_copy(update={"path": self.path, "secondary_path": None})
        return PolicyResult(decision=self._offline.decide(posed))
