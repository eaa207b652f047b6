"""Graph state for the society (one cycle) and the recurrence (many cycles).

State holds plain JSON-able data only (models are dumped), so it checkpoints to SQLite, streams to
Studio and round-trips through `langgraph dev` unchanged. Inputs are pydantic models with defaults:
a Studio user can press Submit without filling anything in.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import BaseModel, Field
from typing_extensions import TypedDict  # not typing's: pydantic (langgraph-api's schemas) needs it on 3.11

from amphoreus_graph.contracts.bounds import MAX_COUNT, Seed
from amphoreus_graph.models.gateway import merge_use

JSON = dict[str, Any]


def merge_agent_use(current: dict[str, JSON] | None, update: dict[str, JSON] | None) -> dict[str, JSON]:
    """Per-agent model use from concurrent turns, added up."""
    merged = dict(current or {})
    for agent, use in (update or {}).items():
        merged[agent] = merge_use(merged.get(agent), use)
    return merged


def merge_turns(current: dict[str, JSON] | None, update: dict[str, JSON] | None) -> dict[str, JSON]:
    """Parallel agent turns merge their results; an empty update clears the round's turns."""
    if not update:
        return {}
    return {**(current or {}), **update}


class WorldRun(BaseModel):
    """Which world a run lives in, with what seed and how many rounds a cycle: said once here, for a graph's input
    and a run's config (RunConfig) alike."""

    scenario: str = Field(default="amphoreus", description="packaged scenario name or path to a YAML file")
    seed: Seed = Field(default=7, description="same seed + offline model = same run")
    rounds: int | None = Field(
        default=None, ge=1, le=MAX_COUNT, description="rounds per cycle (default: the scenario's)"
    )


CYCLES = Field(default=2, ge=1, le=MAX_COUNT, description="world cycles to live through")


class _RunInput(WorldRun):
    run_id: str = Field(default="", description="names the run's memory and samples; default: the thread id")


class SocietyInput(_RunInput):
    """Run one cycle of a society."""

    cycle: int = Field(default=1, ge=1, le=MAX_COUNT, description="which cycle of the world this is")


class RecurrenceInput(_RunInput):
    """Run the world through several cycles; memories carry over by each Path's retention."""

    cycles: int = CYCLES


class SocietyState(TypedDict, total=False):
    scenario: str
    seed: int
    rounds: int | None
    run_id: str
    branch: str  # a fork's name for the rounds after its fork point (sample ids), set when it forks
    cycle: int
    world: JSON
    situations: dict[str, str]
    recalled: dict[str, list[JSON]]
    decided_in: JSON  # the world the round's turns decided in, until `record` has written them
    turns: Annotated[dict[str, JSON], merge_turns]
    round_events: list[JSON]  # the last round's events, until they are filed into memory
    round_moment: JSON  # when they happened (a Moment)
    model_use: Annotated[JSON, merge_use]  # every model call of the run, by role (what it cost, how it went)
    agent_use: Annotated[dict[str, JSON], merge_agent_use]  # the agents' own decisions' calls, by agent
    round_flags: list[str]
    stats: dict[str, float]
    sample_offsets: dict[str, int]  # samples/ and chronicle/ shards: where the next round appends
    shard_digests: dict[str, str]  # the same shards: a digest of their committed lines (society/ledger.py)
    memory_tally: JSON  # what the memory store held after the last filing (memory/tally.py)
    unreflected: dict[str, float]
    used_memories: dict[str, list[str]]  # each agent's ids of the private memories its turn used


class RecurrenceState(SocietyState, total=False):
    cycles: int
    cycle_summaries: list[JSON]


# what model calls cost is in `model_use`; the last two are the discretion guard's flags (policy/discretion.py)
STAT_KEYS = ("samples_written", "turns", "fallbacks", "repaired", "secret_repaired", "secret_redacted")


def add_stats(current: dict[str, float] | None, delta: Mapping[str, float]) -> dict[str, float]:
    """Running totals of what the run cost; every key of STAT_KEYS is always present."""
    base = {key: 0.0 for key in STAT_KEYS} | (current or {})
    return {key: base[key] + delta.get(key, 0.0) for key in base}
