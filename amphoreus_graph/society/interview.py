"""Interviews after a run: an agent answers a question in character, from what it remembers.

The run's memory is reopened read-only (`inspect.py`): recall, with the question as the query, is the agent's
own records and public ones, never another agent's, and marks nothing accessed; no sample is written. The
persona is the agent's entry in the run's scenario, rendered as its turns' system prompt renders it.

Offline, the answer is composed from the persona, the recalled memories (quoted, never invented: a secret one
is kept back, as in speech) and a tenet of the agent's Path, deterministically. With a model, the persona, the
memories and the question go through the model gateway under the `interview` role; an answer that gives away a
secret the agent recalled is asked for again once, and cut if it still does (policy/discretion.py; `flags` says
so). A model that still fails after the gateway's retries is one line (`InterviewFailed`, exit 3): an offline
answer put in its place would be read as the model's, so none is.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, Field

from amphoreus_graph.catalogs.scenario import Scenario, catalog_of_turn
from amphoreus_graph.contracts.memory import Moment, gist
from amphoreus_graph.contracts.rng import stable_rng
from amphoreus_graph.contracts.turn import CallStats, RecalledMemory, TurnContext
from amphoreus_graph.errors import AmphoreusError
from amphoreus_graph.models.chat import chat_caller
from amphoreus_graph.models.gateway import ChatCaller, Role, classify, metered, reply_text
from amphoreus_graph.policy.discretion import (
    SAID_A_SECRET,
    SECRET_REDACTED,
    SECRET_REPAIRED,
    redact_text,
    spoken_secrets,
)
from amphoreus_graph.policy.prompt import memory_line, system_prompt
from amphoreus_graph.society.config import stored_config
from amphoreus_graph.society.inspect import recall_at_end, run_memory, unfiled_events
from amphoreus_graph.society.perception import persona

OFFLINE = "offline"
SPOKEN = 3  # memories the offline answer quotes: an answer, not a recital
ANSWER_RULE = (
    f"{SAID_A_SECRET}, and your interviewer must not hear it. Answer again, in character, without saying or "
    "hinting at any memory marked secret."
)


class InterviewFailed(AmphoreusError):
    """The model did not answer, even after the gateway's retries: one line and exit 3, as for a run whose model
    cannot be reached; nothing answers in its place."""

    exit_code = 3


class Answer(BaseModel):
    """An interview's outcome: what the agent said, what it drew on, and who really answered."""

    run: str
    agent: str
    question: str
    answer: str
    memories: list[RecalledMemory] = Field(
        description="what recall gave the answer, best first: the agent's own records and public ones only"
    )
    as_of: Moment = Field(description="the agent's last memory: recency is counted from here")
    decided_by: str = Field(description="'offline', or the --model string whose reply the answer is")
    model_use: dict[str, Any] = Field(
        default_factory=dict, description="the model calls it took, by role, as summary.json counts them"
    )
    flags: list[str] = Field(
        default_factory=list, description="secret_repaired / secret_redacted: the model's answer said a secret"
    )


def interview(
    run: Path,
    agent: str | None,
    question: str,
    *,
    model: str = OFFLINE,
    base_url: str | None = None,
    api_key: str | None = None,
    k: int = 8,
) -> Answer:
    """Ask `agent` (None: the scenario's first) of a finished run `question`; it answers from its `k` best
    memories for it, offline or with `model` (a `--model` string). Reads the run, changes nothing."""
    if not question.strip():
        raise AmphoreusError("the question is empty; expected something to ask")
    caller = None if model == OFFLINE else chat_caller(model, role=Role.INTERVIEW, base_url=base_url, api_key=api_key)
    config = stored_config(run)
    with run_memory(run) as (scenario, memory):
        name = agent if agent is not None else scenario.agent_names[0]
        if not memory.public_records() and not any(memory.records(a) for a in scenario.agent_names):
            raise AmphoreusError(f"{run}: its memory store holds no memories; expected a run that remembered")
        now, found = recall_at_end(scenario, memory, name, question, k, unfiled_events(run))
    turn = persona_turn(scenario, name, found, now, seed=config.seed, run_id=config.run_id)
    use: dict[str, Any] = {}
    flags: list[str] = []
    if caller is None:
        text = offline_answer(turn, question)
    else:
        with metered() as meter:
            text, flags = discreet_answer(caller, turn, interview_messages(turn, question), model)
        use = {role: role_use.summary() for role, role_use in meter.use.items()}
    return Answer(
        run=str(run),
        agent=name,
        question=question,
        answer=text,
        memories=found,
        as_of=now,
        decided_by=model,
        model_use=use,
        flags=flags,
    )


def persona_turn(
    scenario: Scenario, agent: str, memories: list[RecalledMemory], now: Moment, *, seed: int, run_id: str
) -> TurnContext:
    """The agent as its scenario describes it, with what it recalled: a turn with no options, so its system
    prompt is the one its turns had (and says to keep secrets when one was recalled)."""
    return TurnContext(
        run_id=run_id,
        seed=seed,
        cycle=now.cycle,
        round=now.round,
        **persona(scenario, agent),
        memories=memories,
        options=[],
    )


def offline_answer(turn: TurnContext, question: str) -> str:
    """Who the agent is, what comes back to it (the gists of its best memories it may say aloud, with when), and
    a tenet of its Path, picked by the question: the same answer to the same question, every time."""
    path = catalog_of_turn(turn)[turn.path]
    who = ", ".join(part for part in (turn.agent, turn.title) if part)
    parts = [f"I am {who}, and I walk the Path of {path.name}."]
    if spoken := [m for m in turn.memories if not m.secret][:SPOKEN]:
        quoted = "; ".join(f"{gist(m.text)} (cycle {m.cycle}, round {m.round})" for m in spoken)
        parts.append(f"When you ask me that, this is what comes back to me: {quoted}.")
    elif not turn.memories:
        parts.append("I remember nothing that could answer you.")
    if any(m.secret for m in turn.memories):
        parts.append("Some of what I remember I keep to myself.")
    tenet = stable_rng("interview", turn.seed, turn.run_id, turn.agent, question).choice(path.tenets)
    parts.append(f"As my Path teaches: {tenet}")
    return " ".join(parts)


def interview_messages(turn: TurnContext, question: str) -> list[BaseMessage]:
    """The agent's own system prompt, then the interview: what it remembers, the question, how to answer."""
    lines = [
        "The run is over, and someone who watched it is interviewing you "
        f"(your last memory is from cycle {turn.cycle}, round {turn.round})."
    ]
    if turn.memories:
        lines += ["You remember:", *(memory_line(m) for m in turn.memories)]
    else:
        lines.append("You remember nothing that bears on this.")
    lines += [
        f"They ask: {question}",
        "Answer in character, in the first person, in a few sentences of plain prose (no JSON, no lists). Draw "
        "only on what you remember above; where it does not tell you, say you do not remember rather than invent.",
    ]
    return [SystemMessage(system_prompt(turn)), HumanMessage("\n".join(lines))]


def discreet_answer(
    caller: ChatCaller, turn: TurnContext, messages: list[BaseMessage], model: str
) -> tuple[str, list[str]]:
    """The model's answer as it may be given, with the guard's flag if it had to act: one that gives away a secret
    the agent recalled is asked for again once (counted like the first), and cut if the second still does (or
    cannot be had)."""
    text = _ask(caller, messages, model, turn.agent)
    if not spoken_secrets(turn, text):
        return text, []
    try:
        again = _ask(caller, [*messages, AIMessage(text), HumanMessage(ANSWER_RULE)], model, turn.agent)
    except InterviewFailed:
        again = text
    if not spoken_secrets(turn, again):
        return again, [SECRET_REPAIRED]
    return redact_text(turn, again), [SECRET_REDACTED]


def _ask(caller: ChatCaller, messages: list[BaseMessage], model: str, agent: str) -> str:
    """The model's answer, through the gateway (counted on the current meter); a failure is one line."""
    stats = CallStats()
    try:
        text = reply_text(caller.call_sync(messages, stats)).strip()
    except Exception as exc:
        detail = f"{type(exc).__name__}: {exc}".splitlines()[0][:200]
        raise InterviewFailed(
            f"--model {model}: no answer after {stats.model_calls} attempt(s) ({classify(exc).value}: {detail}); "
            f"nothing was answered in {agent}'s place (try again, check --base-url, or use --model offline)"
        ) from None
    if not text:
        raise InterviewFailed(f"--model {model}: the model's reply was empty; nothing was answered in {agent}'s place")
    return text
