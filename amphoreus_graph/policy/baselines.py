"""Baseline policies for the Path Emanator benchmarks: `random` and `single-path:<Path>`.

`random` picks any offered action and target uniformly and speaks in the words of a random Path: it should
score at chance. `single-path:<Path>` is the seed's "previous PES model" that simulates only one Path: every
heir decides and speaks as that Path, so it should score high only where that Path is the right answer.
"""

from __future__ import annotations

from amphoreus_graph.paths import load_paths
from amphoreus_graph.policy.base import Decision, PolicyResult, TurnContext
from amphoreus_graph.policy.offline import OfflinePathPolicy, compose_rationale, compose_speech, stable_rng


class RandomPolicy:
    def __init__(self, salt: str = "") -> None:
        self.name = "random"
        self.salt = salt

    async def adecide(self, turn: TurnContext) -> PolicyResult:
        return PolicyResult(decision=self.decide(turn))

    def decide(self, turn: TurnContext) -> Decision:
        rng = stable_rng(turn.seed, turn.run_id, turn.heir, turn.cycle, turn.round, "random", self.salt)
        catalog = load_paths()
        path = catalog[rng.choice(catalog.names())]
        action = rng.choice(sorted(turn.options))
        targets = turn.options[action]
        target = rng.choice(targets) if targets else None
        return Decision(
            action=action,
            target=target,
            speech=compose_speech(action, target, turn, path, rng),
            rationale=compose_rationale(action, path, turn),
        )


class SinglePathPolicy:
    """Every heir decides as if it walked `path` alone."""

    def __init__(self, path: str) -> None:
        self.name = f"single-path:{path}"
        self.path = path
        self._offline = OfflinePathPolicy(salt=f"single-path:{path}")

    async def adecide(self, turn: TurnContext) -> PolicyResult:
        posed = turn.model_copy(update={"path": self.path, "secondary_path": None})
        return PolicyResult(decision=self._offline.decide(posed))
