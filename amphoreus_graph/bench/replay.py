"""Record a model's benchmark decisions on one machine and score them on another.

The machine that runs the model (a GPU box with torch and transformers) answers every turn the tasks pose and
writes the decisions (`record_decisions`, `write_record`); no judge runs there: Path-Voice stops at the speech
(`PathVoiceTask.speak`), Path-Choice needs none. Any machine with the judge scores them later with the ordinary
`bench_model`, whose policy is the record (`ReplayPolicy`): the tasks pose the same turns (they are drawn from the
items, the scenario and the seed alone) and each turn gets the decision recorded for it. A turn the record lacks
(other items, seed or scenario) is one error line.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from pathlib import Path

from amphoreus_graph.bench.leaderboard import tasks
from amphoreus_graph.bench.tasks.base import BenchSettings
from amphoreus_graph.contracts.turn import Policy, PolicyResult, TurnContext
from amphoreus_graph.errors import AmphoreusError


def turn_key(turn: TurnContext) -> str:
    """A posed turn's identity: everything the policy saw, except where the scenario file lay on that machine."""
    text = turn.model_dump_json(exclude={"world"})
    return hashlib.sha256(text.encode()).hexdigest()[:32]


class RecordingPolicy:
    """Decides as `policy` and keeps every (turn, result), in the order the turns were posed."""

    def __init__(self, policy: Policy) -> None:
        self.policy = policy
        self.name = policy.name
        self.entries: list[tuple[str, PolicyResult | None]] = []

    async def adecide(self, turn: TurnContext) -> PolicyResult:
        slot = len(self.entries)
        self.entries.append((turn_key(turn), None))  # the call order, not the order answers come back
        result = await self.policy.adecide(turn)
        self.entries[slot] = (self.entries[slot][0], result)
        return result


async def record_decisions(policy: RecordingPolicy, names: list[str], settings: BenchSettings) -> None:
    """Pose every task's turns to the policy. A task that judges only after all its turns are answered
    (Path-Voice) stops before its judge; the others run as they are (Path-Choice needs no judge)."""
    known = tasks()
    for name in names:
        task = known[name]()
        speak = getattr(task, "speak", None)
        await (speak(policy, settings) if speak else task.run(policy, settings))


def write_record(policy: RecordingPolicy, path: Path) -> int:
    """The decisions as JSONL (one turn a line); how many."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [
        json.dumps({"turn": key, "result": result.model_dump(mode="json")})
        for key, result in policy.entries
        if result is not None
    ]
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return len(lines)


class ReplayPolicy:
    """A recorded model: each turn gets the decision recorded for it (a turn posed twice, its answers in order)."""

    def __init__(self, path: Path, name: str) -> None:
        self.name = name
        self._answers: dict[str, list[PolicyResult]] = defaultdict(list)
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except OSError as exc:
            raise AmphoreusError(f"{path}: cannot read the decision record ({exc.strerror})") from None
        for number, line in enumerate(lines, 1):
            try:
                entry = json.loads(line)
                self._answers[entry["turn"]].append(PolicyResult.model_validate(entry["result"]))
            except (ValueError, KeyError, TypeError) as exc:
                raise AmphoreusError(f"{path} line {number}: not a recorded decision ({type(exc).__name__})") from None

    async def adecide(self, turn: TurnContext) -> PolicyResult:
        answers = self._answers.get(turn_key(turn))
        if not answers:
            raise AmphoreusError(
                f"{self.name}: no recorded decision for turn {turn.agent!r} of item {turn.run_id!r}; "
                "was it recorded with other items, seed or scenario?"
            )
        return answers.pop(0)
