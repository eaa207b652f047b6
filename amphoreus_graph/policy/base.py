"""The contract between the society and whoever decides: a TurnContext in, a Decision out."""

from __future__ import annotations

from typing import Protocol

from pydantic import BaseModel, Field, field_validator

from amphoreus_graph.actions import Action


class Decision(BaseModel):
    """The structured output of every agent turn; everything downstream reads these, never free text."""

    action: Action = Field(description="one action from the options offered")
    target: str | None = Field(default=None, description="the heir, Titan or location aimed at, if any")
    speech: str = Field(default="", description="what the heir says aloud; others nearby hear it")
    rationale: str = Field(default="", description="the heir's private reasoning; nobody else sees it")


class RecalledMemory(BaseModel):
    """A memory as recall hands it to a heir, with the parts of its score (for `memory inspect`)."""

    text: str
    cycle: int
    round: int
    score: float
    id: str = ""
    kind: str = "observation"
    public: bool = False
    secret: bool = Field(default=False, description="may guide the heir's choice and rationale, never its speech")
    importance: float = 0.0
    recency: float = 0.0
    relevance: float = 0.0


class TurnContext(BaseModel):
    """Everything a heir knows when it decides: persona, Path, situation, recalled memories, options."""

    run_id: str
    seed: int
    cycle: int
    round: int
    heir: str
    title: str
    persona: str
    traits: list[str]
    path: str
    secondary_path: str | None
    seeks: str
    location: str
    health: float
    holding: list[str]
    black_tide: float
    situation: str
    observations: list[str]
    memories: list[RecalledMemory]
    options: dict[Action, list[str]] = Field(description="allowed actions and their valid targets")
    trust: dict[str, float] = Field(description="this heir's trust in each other heir")

    @field_validator("options")
    @classmethod
    def _in_offer_order(cls, options: dict[Action, list[str]]) -> dict[Action, list[str]]:
        """Options in the action catalogue's order (the order the society offers them), however they were
        stored: samples sort JSON keys, and a turn read back must render the prompt the heir saw."""
        return {action: options[action] for action in Action if action in options}

    def as_recorded(self) -> TurnContext:
        """This turn as a sample keeps it: recall's float scores are dropped (texts and order stay), because
        they vary in their last bits with how embeddings were batched, and a resumed run must write the same
        bytes as an uninterrupted one."""
        memories = [m.model_copy(update={"score": 0.0, "recency": 0.0, "relevance": 0.0}) for m in self.memories]
        return self.model_copy(update={"memories": memories})

    def problem_with(self, decision: Decision) -> str | None:
        """Why a decision is not allowed here (None if it is): the repair pass shows this to the model."""
        if decision.action not in self.options:
            return f"action {decision.action.value!r} is not available; choose one of {self._actions()}"
        targets = self.options[decision.action]
        if targets and decision.target not in targets:
            return f"action {decision.action.value!r} needs a target from {targets}, got {decision.target!r}"
        return None

    def _actions(self) -> list[str]:
        return [a.value for a in self.options]


class CallStats(BaseModel):
    """What model calls cost and how they went: shared by policies and model judges."""

    flags: list[str] = Field(default_factory=list, description="e.g. retried, repaired, fallback")
    model_calls: int = 0
    failures: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    error: str | None = None


class PolicyResult(CallStats):
    """A decision plus what it cost and whether it had to be repaired or replaced."""

    decision: Decision


class Policy(Protocol):
    """Anything that turns a TurnContext into a PolicyResult; called concurrently for all heirs."""

    name: str

    async def adecide(self, turn: TurnContext) -> PolicyResult: ...
