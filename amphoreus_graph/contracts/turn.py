"""The contract between the society and whoever decides: a TurnContext in, a Decision out."""

from __future__ import annotations

from typing import Protocol

from pydantic import BaseModel, Field, PrivateAttr

from amphoreus_graph.contracts.actions import ActionBrief

# How the discretion guard's second question begins (policy/discretion.py): the words the scripted stand-in model
# (models/fake.py) listens for, so the two layers share them here.
SAID_A_SECRET = "Your reply gives away a memory marked secret"


class Option(ActionBrief):
    """One action offered this turn, with its valid targets (empty: it takes none)."""

    action: str
    targets: list[str] = Field(default_factory=list)


class Decision(BaseModel):
    """The structured output of every agent turn; everything downstream reads these, never free text."""

    action: str = Field(description="one action from the options offered")
    target: str | None = Field(default=None, description="the agent, place or objective aimed at, if any")
    speech: str = Field(default="", description="what the agent says aloud; others nearby hear it")
    rationale: str = Field(default="", description="the agent's private reasoning; nobody else sees it")


class RecalledMemory(BaseModel):
    """A memory as recall hands it to an agent, with the parts of its score (for `memory inspect`)."""

    text: str
    cycle: int
    round: int
    score: float
    id: str = ""
    kind: str = "observation"
    public: bool = False
    secret: bool = Field(default=False, description="may guide the agent's choice and rationale, never its speech")
    importance: float = 0.0
    recency: float = 0.0
    relevance: float = 0.0


class TurnContext(BaseModel):
    """Everything an agent knows when it decides: who it is, its Path, its world's framing, its situation,
    recalled memories and options. Self-contained: a turn read back from a sample can be re-posed and judged
    without the world that posed it."""

    run_id: str
    seed: int
    cycle: int
    round: int
    world: str = Field(default="", description="the scenario the turn was posed in (packaged name or YAML path)")
    role: str = Field(default="", description="what the agent is in its world, for the prompt")
    agent: str
    title: str = ""
    persona: str = ""
    traits: list[str] = Field(default_factory=list)
    path: str
    secondary_path: str | None = None
    aim: str = Field(default="", description="what the agent pursues, in the world's words")
    aim_target: str | None = Field(default=None, description="the option target that pursues the aim, if any")
    location: str | None = None
    status: dict[str, str] = Field(default_factory=dict, description="the world's status lines for this agent")
    situation: str = ""
    observations: list[str] = Field(default_factory=list)
    memories: list[RecalledMemory] = Field(default_factory=list)
    options: list[Option] = Field(description="the actions allowed now, in the order the world offers them")
    choice: bool = Field(
        default=False,
        description="a choice turn: the options are free-text answers (each one's `help`), labelled A, B…, not acts "
        "of the world; the option chosen is the answer",
    )
    pressures: dict[str, float] = Field(
        default_factory=dict, description="how pressing each option is now, as the world sees it (-1 to 1)"
    )
    trust: dict[str, float] = Field(default_factory=dict, description="this agent's trust in each other agent")
    _posed_in: object = PrivateAttr(default=None)

    def posed_in(self, scenario: object) -> TurnContext:
        """This turn, holding the loaded scenario of the run that poses it, so that a policy reads the run's own
        world and Path catalog (never recorded: a turn read back from a sample names its world in `world`)."""
        self._posed_in = scenario
        return self

    @property
    def loaded_scenario(self) -> object:
        """The scenario the posing run handed this turn (`posed_in`), or None."""
        return self._posed_in

    def as_recorded(self) -> TurnContext:
        """This turn as a sample keeps it: recall's float scores are dropped (texts and order stay), because
        they vary in their last bits with how embeddings were batched, and a resumed run must write the same
        bytes as an uninterrupted one."""
        memories = [m.model_copy(update={"score": 0.0, "recency": 0.0, "relevance": 0.0}) for m in self.memories]
        return self.model_copy(update={"memories": memories})

    @property
    def offered(self) -> list[str]:
        """The names of the actions allowed now, in offer order."""
        return [o.action for o in self.options]

    def option(self, action: str) -> Option | None:
        return next((o for o in self.options if o.action == action), None)

    def targets(self, action: str) -> list[str]:
        option = self.option(action)
        return list(option.targets) if option else []

    def problem_with(self, decision: Decision) -> str | None:
        """Why a decision is not allowed here (None if it is): the repair pass shows this to the model."""
        option = self.option(decision.action)
        if option is None:
            return f"action {decision.action!r} is not available; choose one of {self.offered}"
        if option.targets and decision.target not in option.targets:
            return f"action {decision.action!r} needs a target from {option.targets}, got {decision.target!r}"
        return None


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
    decided_by: str = Field(
        default="", description="who actually decided (a model's stand-in says so); '' = the policy"
    )


class Policy(Protocol):
    """Anything that turns a TurnContext into a PolicyResult; called concurrently for all agents."""

    name: str

    async def adecide(self, turn: TurnContext) -> PolicyResult: ...
