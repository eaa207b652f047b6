"""What RUN/summary.json holds, defined by what writes it (`runner.build_summary`, `recurrence.end_cycle`); the CLI,
the report and the Scepter read it through these models.

`format_version` says which shape a file has: a field that changes meaning or goes bumps it, and a reader refuses
a file newer than it knows, in one line, rather than misread it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from amphoreus_graph.errors import stored_model
from amphoreus_graph.layout import RunDir

SUMMARY_FORMAT = 1


class CycleSummary(BaseModel):
    """One cycle as summary.json records it (or as the chronicle shows it so far), in its world's words."""

    cycle: int
    outcome: str
    text: str = Field(default="", description="how the cycle ended, as the world tells it")
    rounds: int
    score: float | None = None
    tally: dict[str, float] = Field(default_factory=dict, description="agent → its score this cycle")
    facts: dict[str, Any] = Field(default_factory=dict, description="the world's own numbers for the cycle")
    fallen: list[str] = Field(default_factory=list)
    memories_kept: dict[str, int] = Field(default_factory=dict)


class CacheUse(BaseModel):
    """The response cache's part: where it is (None: off, or no model asked), its hits, what they would have cost."""

    file: str | None = None
    hits: int = 0
    would_have_cost: dict[str, int | float] = Field(default_factory=dict, description="tokens_in, tokens_out, cost")


class AgentUse(BaseModel):
    calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0


class RunSummary(BaseModel):
    """One run's closing summary. The counts default to nothing so that a run without summary.json (still going,
    or made in Studio) can be shown as far as its chronicle goes."""

    format_version: int = Field(default=SUMMARY_FORMAT, le=SUMMARY_FORMAT, description="the shape of this file")
    run: str
    scenario: str = ""
    model: str
    seed: int
    cycles: list[CycleSummary]
    world: str = ""
    score_label: str = Field(default="score", description="what the world's score counts, in its words")
    tally_per_agent: dict[str, float] = Field(default_factory=dict, description="each agent's score over the cycles")
    samples_written: int = Field(default=0, description="sample lines on disk that parse")
    turns: int = 0
    fallbacks: int = 0
    repaired: int = 0
    secret_repaired: int = Field(default=0, description="turns whose reply said a secret and, asked again, kept it")
    secret_redacted: int = Field(default=0, description="turns whose reply said a secret the guard cut out")
    model_calls: int = 0
    failures: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cache: CacheUse = Field(default_factory=CacheUse)
    models: dict[str, dict[str, Any]] = Field(default_factory=dict, description="model calls by role, as counted")
    per_agent: dict[str, AgentUse] = Field(default_factory=dict)
    wall_time_s: float = 0.0
    stopped: str | None = Field(default=None, description="why the run stopped before its end, if it did")

    def payload(self) -> dict[str, Any]:
        """The summary as summary.json holds it (`stopped` only when the run stopped)."""
        return self.model_dump(mode="json", exclude={"stopped"} if self.stopped is None else set())


def stored_summary(run_dir: Path) -> RunSummary:
    """RUN/summary.json as the run wrote it; a missing or damaged file is one line."""
    return stored_model(RunSummary, RunDir(run_dir).summary, "`amphoreus simulate`")
