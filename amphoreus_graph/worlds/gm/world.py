"""GameMasterWorld: a kit world whose rounds a chat model resolves from the world's prose.

Everything but `resolve` is the kit's (genesis, framing, perception, endings, view, critique): the map, numbers,
objectives and actions the model keeps to are the YAML's, and so are the rules that resolve a round when the model
cannot. `resolve` asks the model once (ChatCaller: a concurrency slot, a timeout, retries), checks the reply
(`reply.py` against the world's names, `apply.py` against the state), gives it one repair pass, and otherwise
falls back to the kit's own rules with the round flagged `fallback`; every call is counted on the round's cost.
"""

from __future__ import annotations

import random
import threading
from pathlib import Path
from typing import Any, TypeVar

from langchain_core.messages import BaseMessage

from amphoreus_graph.contracts.actions import ActionSpec
from amphoreus_graph.contracts.memory import Moment
from amphoreus_graph.contracts.turn import CallStats, Decision, TurnContext
from amphoreus_graph.contracts.world import (
    AgentProfile,
    Critique,
    CycleEnd,
    Perception,
    Resolution,
    WorldLabels,
    WorldState,
    WorldView,
)
from amphoreus_graph.errors import AmphoreusError, ScenarioError
from amphoreus_graph.models.chat import chat_caller
from amphoreus_graph.models.gateway import ChatCaller, MalformedOutput, Role, note, reply_text, run_blocking
from amphoreus_graph.models.replies import parse_reply
from amphoreus_graph.worlds.gm import prompt
from amphoreus_graph.worlds.gm.apply import Applier
from amphoreus_graph.worlds.gm.config import GameMasterConfig, read_config
from amphoreus_graph.worlds.gm.reply import Reply, Vocabulary
from amphoreus_graph.worlds.kit import KitWorld, load_kit_world
from amphoreus_graph.worlds.kit.rules import Round
from amphoreus_graph.worlds.kit.state import KitState

T = TypeVar("T")


class GameMasterWorld:
    """A world told in prose, resolved round by round by a chat model, on a kit world's map and rules."""

    def __init__(self, kit: KitWorld, config: GameMasterConfig, source: Path) -> None:
        self.kit = kit
        self.config = config
        self.source = source
        self.origin: tuple[dict[str, Any], Path] | None = None  # the mapping and file it was loaded from
        self.names = Vocabulary.of(kit, max_events=config.max_events, max_changes=config.max_changes)
        self.name: str = kit.name
        self.title: str = kit.title
        self.description: str = kit.description
        self.labels: WorldLabels = kit.labels
        self.agents: list[AgentProfile] = kit.agents
        self.actions: dict[str, ActionSpec] = kit.actions
        self.rounds_per_cycle: int = kit.rounds_per_cycle
        self.tags: dict[str, str] = kit.tags  # tags the world adds to the catalog's (checked by the scenario loader)
        self._caller: ChatCaller | None = None
        self._lock = threading.Lock()

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as the YAML it came from: another process loads it again (and makes its own model client)."""
        if self.origin is None:
            return (GameMasterWorld, (self.kit, self.config, self.source))
        return (load_game_master_world, self.origin)

    # ------------------------------------------------------------------------------------ the kit's part

    def genesis(self, cycle: int) -> WorldState:
        return self.kit.genesis(cycle)

    def frame(self, state: WorldState, rng: random.Random) -> tuple[WorldState, dict[str, str]]:
        return self.kit.frame(state, rng)

    def actors(self, state: WorldState) -> list[str]:
        return self.kit.actors(state)

    def perceive(self, state: WorldState, agent: str) -> Perception:
        return self.kit.perceive(state, agent)

    def memory_query(self, state: WorldState, agent: str, situation: str) -> str:
        return self.kit.memory_query(state, agent, situation)

    def outcome(self, state: WorldState) -> str | None:
        return self.kit.outcome(state)

    def end(self, state: WorldState) -> CycleEnd:
        return self.kit.end(state)

    def view(self, state: WorldState) -> WorldView:
        return self.kit.view(state)

    def critique(self, turn: TurnContext, decision: Decision) -> list[Critique]:
        return self.kit.critique(turn, decision)

    def vocabulary(self) -> set[str]:
        return self.kit.vocabulary()

    # ------------------------------------------------------------------------------------ the model's part

    def resolve(
        self, state: WorldState, decisions: dict[str, Decision], rng: random.Random, now: Moment, round_limit: int
    ) -> Resolution:
        """The model's resolution of the round, then the kit's round end (journeys, regrowth, the clock's rise,
        thresholds, endings); the kit's own resolution, flagged `fallback`, when the model gave nothing usable."""
        cost = CallStats()
        caller = self.caller()
        try:
            work = run_blocking(self._ask(caller, state, decisions, rng, now, round_limit, cost))
        except Exception as exc:
            note(Role.GAME_MASTER, fallbacks=1)
            cost.flags.append("fallback")
            cost.error = f"{type(exc).__name__}: {exc}"[:300]
            kept = self.kit.resolve(state, decisions, rng, now, round_limit)
            return Resolution(state=kept.state, events=kept.events, cost=cost)
        work.finish(round_limit)
        return Resolution(state=work.s.dump(), events=work.events, cost=cost)

    async def _ask(
        self,
        caller: ChatCaller,
        state: WorldState,
        decisions: dict[str, Decision],
        rng: random.Random,
        now: Moment,
        round_limit: int,
        cost: CallStats,
    ) -> Round:
        """One request and at most one repair; a reply that cannot be carried out raises (the caller falls back)."""
        messages: list[BaseMessage] = prompt.messages(self.kit, self.config, self.names, state, decisions, round_limit)

        def carry_out(text: str) -> Round:
            """On a working copy of the state, and of the rng: a refused reply leaves the fallback both untouched."""
            reply = parse_reply(text, Reply, context=self.names)
            draws = random.Random()
            draws.setstate(rng.getstate())
            work = Round(self.kit.rules, KitState.model_validate(state), decisions, draws, now)
            Applier(self.kit, work).carry_out(reply)
            return work

        answer = await caller(messages, cost)
        try:
            return carry_out(reply_text(answer))
        except MalformedOutput as problem:
            note(caller.role, garbage=1, repairs=1)
            answer = await caller([*messages, answer, prompt.repair(str(problem))], cost)
            try:
                work = carry_out(reply_text(answer))
            except MalformedOutput:
                note(caller.role, garbage=1)
                raise
            cost.flags.append("repaired")
            return work

    def caller(self) -> ChatCaller:
        """The game master's model client, made on first use and shared by every society of the process (it holds
        no run's state). A model that cannot be made is the scenario's fault: one line, not a fallback."""
        with self._lock:
            if self._caller is None:
                cfg = self.config
                try:
                    self._caller = chat_caller(
                        cfg.model,
                        role=Role.GAME_MASTER,
                        base_url=cfg.base_url,
                        temperature=cfg.temperature,
                        timeout_s=cfg.timeout_s,
                        attempts=cfg.attempts,
                    )
                except AmphoreusError as exc:
                    raise ScenarioError(f"{self.source}: game_master.model: {exc}") from None
            return self._caller


def load_game_master_world(raw: dict[str, Any], source: Path) -> GameMasterWorld:
    """The `gm` world plug-in: a kit world (everything but `game_master:`) resolved by the model it names."""
    config = read_config(raw, source)
    kit = load_kit_world({k: v for k, v in raw.items() if k != "game_master"}, source)
    world = GameMasterWorld(kit, config, source)
    world.origin = (raw, source)
    return world
