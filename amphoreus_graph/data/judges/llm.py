"""Model judges, Sotopia-style: the panel reasons first, then gives a pydantic-checked score per dimension.

Any chat model serves. Calls share the policy's retry/timeout machinery; a reply that does not parse gets
one repair pass; if the model still fails, the offline panels score that candidate and say so (`fallback`).

The prompt describes the turn's world by its own title, description and labels, never by the engine's words.

Discretion: the prompt marks the agent's secret memories and asks that speech saying or hinting at one score
consistency 1. A model may still miss a leak, so the rule check the offline panels use (rules.discretion) has
the last word: speech it finds giving a secret away gets consistency 1 and "speaks a secret" in the reasoning.
"""

from __future__ import annotations

import asyncio

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, Field, model_validator

from amphoreus_graph.catalogs.scenario import catalog_of_turn
from amphoreus_graph.contracts.memory import one_line
from amphoreus_graph.contracts.turn import CallStats, TurnContext
from amphoreus_graph.contracts.world import WorldLabels
from amphoreus_graph.data.judges import rules
from amphoreus_graph.data.judges.base import PANEL_TITLES, PANELS, JudgeItem, Panel, Verdict, world_of
from amphoreus_graph.data.judges.offline import OfflineJudge
from amphoreus_graph.models.gateway import ChatCaller, MalformedOutput, Role, ask, note
from amphoreus_graph.models.replies import parse_reply
from amphoreus_graph.policy.prompt import decision_json

_FOCUS: dict[Panel, str] = {
    "genius_society": (
        "You judge whether the decision is sound: its logic given the situation, its consistency with the "
        "agent's own memories, and its knowledge of the world."
    ),
    "nameless": (
        "You judge whether the decision is truly this agent's: fidelity to its Path, its character, and the "
        "quality of its speech as part of the story."
    ),
}
SECRET_CRITERION = (
    "Memories marked (secret) are the agent's alone: it may act on them and reason about them privately, but "
    "speech that says or hints at one betrays the agent; score consistency 1 for it."
)


class PanelAnswer(BaseModel):
    """What a model judge must reply: its reasoning, then an integer 1-10 for each of the panel's dimensions."""

    reasoning: str = Field(min_length=1)
    scores: dict[str, int]

    @model_validator(mode="after")
    def _in_range(self) -> PanelAnswer:
        bad = {k: v for k, v in self.scores.items() if not 1 <= v <= 10}
        if bad:
            raise ValueError(f"scores must be integers from 1 to 10, got {bad}")
        return self


def world_lines(turn: TurnContext) -> tuple[WorldLabels, list[str]]:
    """How the prompt names the agent (the world's label for one) and what it says of the world: its title and
    description, for a turn posed in one; nothing for a turn posed outside any world."""
    world = world_of(turn)
    if world is None:
        return WorldLabels(), []
    return world.labels, [f"The world: {world.title}. {world.description}".strip()]


def situation_line(turn: TurnContext) -> str:
    """Where and when the agent decides, with the world's status lines for it."""
    where = [f"cycle {turn.cycle}", f"round {turn.round}"]
    if turn.location:
        where.append(f"at {turn.location}")
    where += [f"{key} {value}" for key, value in turn.status.items()]
    return f"Situation ({', '.join(where)}): {turn.situation}"


def offered_help(turn: TurnContext, action: str) -> list[str]:
    """What the decided action does in this world, as the agent was told (nothing for an action not offered)."""
    option = turn.option(action)
    return [f"({action}: {option.help})"] if option is not None and option.help else []


def judge_messages(panel: Panel, item: JudgeItem) -> list[BaseMessage]:
    turn = item.turn
    path = catalog_of_turn(turn)[turn.path]
    labels, world = world_lines(turn)
    who = ", ".join(part for part in (turn.agent, turn.title, turn.role) if part)
    aim = [f"It seeks {turn.aim}."] if turn.aim else []
    dimensions = PANELS[panel]
    shown = (f"- {'(secret) ' if m.secret else ''}{one_line(m.text)}" for m in turn.memories)
    memories = "\n".join(shown) or "- (none recalled)"
    criteria = [SECRET_CRITERION] if panel == "genius_society" and any(m.secret for m in turn.memories) else []
    user = "\n".join(
        [
            *world,
            " ".join([f"The {labels.agent}: {who}.", turn.persona, *aim]).strip(),
            f"Path: {path.name} ({path.summary}) Tenets: {' '.join(path.tenets)}",
            situation_line(turn),
            f"What the {labels.agent} remembers:",
            memories,
            f"The decision to judge: {decision_json(item.decision)}",
            *offered_help(turn, item.decision.action),
            *criteria,
            f"Dimensions: {', '.join(dimensions)}",
            "Reason about the decision first, then score every dimension with an integer from 1 (worst) to 10 (best). "
            'Answer with one JSON object: {"reasoning": "...", "scores": {'
            + ", ".join(f'"{d}": n' for d in dimensions)
            + "}}",
        ]
    )
    return [SystemMessage(f"{_FOCUS[panel]} You are one of {PANEL_TITLES[panel]}'s expert judges."), HumanMessage(user)]


def parse_answer(text: str, panel: Panel) -> PanelAnswer:
    answer = parse_reply(text, PanelAnswer)
    expected = set(PANELS[panel])
    if set(answer.scores) != expected:
        raise MalformedOutput(f"scores must have exactly the keys {sorted(expected)}, got {sorted(answer.scores)}")
    return answer


def kept_discreet(item: JudgeItem, verdict: Verdict) -> Verdict:
    """A model's verdict, with the lowest consistency where the rule check finds the speech giving a secret away
    (a model judge may miss what the words alone show); other verdicts pass unchanged."""
    if "consistency" not in verdict.scores:
        return verdict
    kept, notes = rules.discretion(item.turn, item.decision)
    if kept:
        return verdict
    return verdict.model_copy(
        update={"scores": {**verdict.scores, "consistency": 1.0}, "reasoning": "; ".join([verdict.reasoning, *notes])}
    )


class LLMJudge:
    """Both panels through one chat model; never raises for a model fault (offline panels stand in)."""

    def __init__(self, model: BaseChatModel, *, name: str = "llm", caller: ChatCaller | None = None) -> None:
        self.name = name
        self._call = caller or ChatCaller(model, role=Role.JUDGE)
        self._fallback = OfflineJudge()
        self.stats = CallStats()

    async def ascore(self, items: list[JudgeItem]) -> list[dict[Panel, Verdict]]:
        verdicts = await asyncio.gather(*(self._panel(panel, item) for item in items for panel in PANELS))
        failed = [n for n, v in enumerate(verdicts) if v is None]
        backup = await self._fallback.ascore([items[n // len(PANELS)] for n in failed]) if failed else []
        for n, replacement in zip(failed, backup, strict=True):
            verdict = replacement[list(PANELS)[n % len(PANELS)]]
            verdict.flags.append("fallback")
            verdicts[n] = verdict
        panels = list(PANELS)
        return [
            {p: v for p, v in zip(panels, verdicts[i : i + len(panels)], strict=True) if v is not None}
            for i in range(0, len(verdicts), len(panels))
        ]

    async def _panel(self, panel: Panel, item: JudgeItem) -> Verdict | None:
        messages = judge_messages(panel, item)
        stats = CallStats()
        try:
            answer, _ = await ask(self._call, messages, lambda text: parse_answer(text, panel), stats)
            return kept_discreet(
                item,
                Verdict(
                    panel=panel,
                    scores={k: float(v) for k, v in answer.scores.items()},
                    reasoning=answer.reasoning,
                    flags=stats.flags,
                ),
            )
        except Exception:
            note(self._call.role, fallbacks=1)  # the offline panels stand in (ascore)
            return None
        finally:
            self._count(stats)

    def _count(self, stats: CallStats) -> None:
        for field in ("model_calls", "failures", "tokens_in", "tokens_out"):
            setattr(self.stats, field, getattr(self.stats, field) + getattr(stats, field))
