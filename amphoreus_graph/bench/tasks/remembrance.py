"""Remembrance: a fact planted in cycle 1, asked after k world resets, per Path retention policy.

Every Path's subject witnesses the fact and its distractors in cycle 1 of a fresh in-memory Chroma society
(the real Remembrance over a ChromaIndex: remember, the offline importance rater, and at each cycle's end the world's
own account of how an uneventful cycle ended and `carry_over` with the Path's retention from the scenario posing the
items). Cycles lived between resets leave memories of their own. After the last reset the subject recalls with
the question (k = 5, the society's recall) and is posed an ordinary turn: the question as the situation, the
recalled memories as the turn's memories, the acts that take no target as its options.

Score: exact match (the normalised answer appears in the Decision's speech) with no rival quoted (no distractor's
gist: a speaker who reads out every memory it recalled has not answered), as in Erudition; beside it,
recall@k (the planted record among the recalled ids), overall and per retention mode (all, echoes, none).
Memory never depends on the policy (it never writes into it here), so each item's recall is computed once
per process and every model is posed the same turns.
"""

from __future__ import annotations

import asyncio
import statistics
import threading
import uuid
from collections import defaultdict
from typing import Any

from chromadb.api import ClientAPI
from pydantic import BaseModel, ConfigDict, Field, model_validator

from amphoreus_graph.bench.items import _Item, item_set
from amphoreus_graph.bench.subjects import Stage, stage
from amphoreus_graph.bench.tasks.base import BenchSettings, ItemScore, TaskResult
from amphoreus_graph.bench.tasks.erudition import exact_match, token_f1
from amphoreus_graph.contracts.memory import MemoryEvent, MemoryKind, Moment, gist
from amphoreus_graph.contracts.memory_seam import RetentionMode
from amphoreus_graph.contracts.turn import Policy, RecalledMemory, TurnContext
from amphoreus_graph.memory.chroma_index import ChromaIndex, open_chroma
from amphoreus_graph.memory.importance import PathImportance
from amphoreus_graph.memory.remembrance import Remembrance
from amphoreus_graph.models.embedder import default_embedder
from amphoreus_graph.society.services import SocietySettings

RECALL_K: int = SocietySettings.model_fields["recall_k"].default  # what a society's turn recalls
ECHO_IMPORTANCE = 8  # what the society's end_cycle gives the memory of a cycle's ending


class Planted(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str = Field(min_length=1)
    importance: int = Field(ge=1, le=10)
    round: int = Field(ge=1)


class RemembranceItem(_Item):
    """A fact and its distractors planted in cycle 1, memories of each later cycle, and a question."""

    resets: int = Field(ge=1)
    fact: Planted
    distractors: list[Planted] = Field(min_length=1)
    later: list[list[Planted]] = Field(description="the memories of cycles 2..resets, one list per cycle")
    question: str = Field(min_length=1)
    answer: str = Field(min_length=1)

    @model_validator(mode="after")
    def _answerable_only_from_the_fact(self) -> RemembranceItem:
        if len(self.later) != self.resets - 1:
            raise ValueError("later: one list of memories per cycle between the resets (resets - 1)")
        if not exact_match(self.answer, gist(self.fact.text)):
            raise ValueError("the answer must appear in the fact's gist (what an agent quotes of a memory)")
        if exact_match(self.answer, self.question):
            raise ValueError("the question must not give the answer away")
        others = [m.text for m in self.distractors] + [m.text for cycle in self.later for m in cycle]
        if any(exact_match(self.answer, t) for t in others):
            raise ValueError("the answer must appear in the fact only, not in a distractor")
        return self


def answered(item: RemembranceItem, speech: str) -> bool:
    """The answer is said and no distractor is quoted: what an agent quotes of a memory is its gist, and a speech
    that quotes the rival facts beside the answer has not told which one holds."""
    return exact_match(item.answer, speech) and not any(exact_match(gist(d.text), speech) for d in item.distractors)


class Recalled(BaseModel):
    """What one subject recalls for one item after the resets."""

    memories: list[RecalledMemory]
    evidence: str
    retention: RetentionMode


def _event(
    world: Stage, item: RemembranceItem, name: str, memory: Planted, cycle: int, witnesses: list[str]
) -> MemoryEvent:
    return MemoryEvent(
        id=f"{item.id}/{name}",
        text=memory.text,
        cycle=cycle,
        round=memory.round,
        tick=Moment.of(cycle, memory.round, world.scenario.rounds_per_cycle).tick,
        witnesses=witnesses,
        importance=memory.importance,
    )


def echo_text(world: Stage, cycle: int) -> str:
    """How the world tells a cycle's end when nothing happened in it: the state it starts from, at the round
    limit (the benchmark's cycles are lived in memory only)."""
    rounds = world.scenario.rounds_per_cycle
    return world.scenario.world.end({**world.scenario.world.genesis(cycle), "round": rounds}).text


def _cycle_echo(world: Stage, item: RemembranceItem, cycle: int, witnesses: list[str]) -> MemoryEvent:
    """The memory of a cycle's ending every agent files before retention applies, as the society's end_cycle."""
    rounds = world.scenario.rounds_per_cycle
    return MemoryEvent(
        id=f"{item.id}/c{cycle}-end",
        text=echo_text(world, cycle),
        cycle=cycle,
        round=rounds,
        tick=Moment.of(cycle, rounds, rounds).tick,
        witnesses=witnesses,
        importance=ECHO_IMPORTANCE,
        kind=MemoryKind.CYCLE_ECHO,
    )


def _cycles(world: Stage, item: RemembranceItem, witnesses: list[str]) -> list[list[MemoryEvent]]:
    """What each cycle leaves in memory before its reset: the fact and distractors in cycle 1, the lived
    memories after, and the memory of the cycle's ending last."""
    cycles = []
    for cycle in range(1, item.resets + 1):
        if cycle == 1:
            planted = [("fact", item.fact), *((f"d{n}", m) for n, m in enumerate(item.distractors))]
        else:
            planted = [(f"c{cycle}-{n}", m) for n, m in enumerate(item.later[cycle - 2])]
        lived = [_event(world, item, name, m, cycle, witnesses) for name, m in planted]
        cycles.append([*lived, _cycle_echo(world, item, cycle, witnesses)])
    return cycles


def live_through(world: Stage, item: RemembranceItem, client: ClientAPI) -> dict[str, Recalled]:
    """Plant, live `item.resets` cycles with their resets, and recall: each Path's subject, one society in
    `client` (removed when done)."""
    scenario = world.scenario
    agents = {path: subject.agent for path, subject in world.subjects.items()}
    witnesses = list(agents.values())
    retention = {agents[p]: scenario.retention_for(p) for p in agents}
    society = f"bench-{item.id}-{uuid.uuid4().hex[:8]}"
    memory = Remembrance(
        ChromaIndex(client, society),
        witnesses,
        default_embedder(),
        config=scenario.memory,
        paths={a: p for p, a in agents.items()},
        rater=PathImportance(scenario),
    )
    try:
        cycles = _cycles(world, item, witnesses)
        for cycle, events in enumerate(cycles, start=1):
            memory.remember(events)  # one write per cycle, then the reset, as the society's end_cycle does
            memory.carry_over(retention, cycle + 1)
        now = Moment.of(item.resets + 1, 1, scenario.rounds_per_cycle)
        found = memory.recall(dict.fromkeys(witnesses, item.question), RECALL_K, now)
    finally:
        memory.drop()
    return {
        path: Recalled(memories=found[agent], evidence=f"{cycles[0][0].id}@{agent}", retention=retention[agent].mode)
        for path, agent in agents.items()
    }


_lived: dict[tuple[str, str], dict[str, Recalled]] = {}
_lived_lock = threading.Lock()


def recalled_for(world: Stage, items: list[RemembranceItem]) -> dict[str, dict[str, Recalled]]:
    """Each item's recall per Path, computed once per process and world (memory does not depend on the policy)."""
    keys = {i.id: (world.ref, i.model_dump_json()) for i in items}  # by content: an edited item is lived anew
    with _lived_lock:
        todo = [i for i in items if keys[i.id] not in _lived]
        if todo:
            # Every text embedded in one batch first (the embedder caches it): interleaving many small batches
            # with Chroma's writes is several times slower on a small machine.
            texts = [e.text for i in todo for cycle in _cycles(world, i, []) for e in cycle]
            texts += [i.question for i in todo]
            default_embedder().encode(list(dict.fromkeys(texts)))
            client, _ = open_chroma()  # in memory
            for item in todo:
                _lived[keys[item.id]] = live_through(world, item, client)
        return {i.id: _lived[keys[i.id]] for i in items}


def remembrance_turn(world: Stage, item: RemembranceItem, path: str, recalled: Recalled, seed: int) -> TurnContext:
    turn = world.pose(
        path,
        item_id=f"{item.id}/{path}",
        situation=f"A traveller asks you: {item.question} Give the answer in your speech, from what you remember.",
        options=world.answering(path),
        seed=seed,
        memories=recalled.memories,
    )
    return turn.model_copy(update={"cycle": item.resets + 1})


def _percent(values: list[float]) -> float:
    return round(100 * statistics.fmean(values), 2) if values else 0.0


class RemembranceTask:
    name = "remembrance"
    item_model = RemembranceItem

    async def run(self, policy: Policy, settings: BenchSettings) -> TaskResult:
        world = stage(settings.scenario)
        items = item_set(self.name, self.item_model, settings)
        recalled = await asyncio.to_thread(recalled_for, world, items.items)
        posed = [(item, path, recalled[item.id][path]) for item in items.items for path in world.catalog.names()]
        results = await asyncio.gather(
            *(policy.adecide(remembrance_turn(world, i, p, r, settings.seed)) for i, p, r in posed)
        )
        scores = []
        for (item, path, found), result in zip(posed, results, strict=True):
            speech = result.decision.speech
            ids = [m.id for m in found.memories]
            scores.append(
                ItemScore(
                    item=item.id,
                    path=path,
                    score=float(answered(item, speech)),
                    detail={
                        "recall_at_k": float(found.evidence in ids),
                        "rank": ids.index(found.evidence) + 1 if found.evidence in ids else None,
                        "retention": found.retention.value,
                        "resets": item.resets,
                        "f1": round(token_f1(item.answer, speech), 4),
                        "speech": speech,
                    },
                )
            )
        return TaskResult(task=self.name, scores=scores, extra=summary(scores), skipped=items.skipped)


def summary(scores: list[ItemScore]) -> dict[str, Any]:
    """recall@k overall, and accuracy and recall@k per retention mode and per number of resets (0-100)."""

    def part(group: list[ItemScore]) -> dict[str, Any]:
        return {
            "accuracy": _percent([s.score for s in group]),
            "recall_at_k": _percent([s.detail["recall_at_k"] for s in group]),
            "n": len(group),
        }

    by_mode: dict[str, list[ItemScore]] = defaultdict(list)
    by_resets: dict[str, list[ItemScore]] = defaultdict(list)
    for score in scores:
        by_mode[score.detail["retention"]].append(score)
        by_resets[str(score.detail["resets"])].append(score)
    return {
        "k": RECALL_K,
        "recall_at_k": _percent([s.detail["recall_at_k"] for s in scores]),
        "token_f1": _percent([s.detail["f1"] for s in scores]),
        "retention": {mode.value: part(by_mode[mode.value]) for mode in RetentionMode if by_mode[mode.value]},
        "resets": {k: part(v) for k, v in sorted(by_resets.items())},
    }
