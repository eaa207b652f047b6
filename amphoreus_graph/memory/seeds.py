"""Seed memories: what agents (or everyone, publicly) remember at the genesis of cycle 1.

Files: the scenario's seeds folder (its `seeds:` key, or `seeds/` beside it), or `SEEDS_DIR/<scenario name>/`
when a run names a seeds directory; `*.yaml` files, each a list of entries
`{text: ..., agents: [Name, ...] | public: true, importance: 1-10, secret: false}`.

`secret: true` marks a private memory its agents may act on and reason about but must never say aloud: the
offline policy never quotes it, the LLM prompt says so, and the judges mark down speech that gives it away.
A public secret is a contradiction, so the loader rejects it.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from amphoreus_graph.catalogs.names import shown
from amphoreus_graph.catalogs.scenario import Scenario
from amphoreus_graph.catalogs.scenario_files import read_yaml
from amphoreus_graph.catalogs.trust import inside
from amphoreus_graph.contracts.ids import seed_id
from amphoreus_graph.contracts.memory import MemoryEvent, MemoryKind
from amphoreus_graph.errors import ScenarioError, format_validation_error


class SeedMemory(BaseModel):
    """One seed entry. Unknown keys are errors: a misspelt `secret` must not quietly plant a speakable memory."""

    model_config = ConfigDict(extra="forbid")

    text: str = Field(min_length=1)
    agents: list[str] = Field(default_factory=list)
    public: bool = False
    secret: bool = Field(default=False, description="known to its agents, never to be said aloud")
    importance: float = Field(default=5.0, ge=1, le=10)


def seeds_folder(scenario: Scenario, seeds_dir: str | Path | None = None) -> Path | None:
    """Where a run's seed memories are: `seeds_dir/<scenario name>` when a run names a seeds directory (which
    must then exist: a typo would plant nothing and say nothing), else the scenario's own (None: no seeds)."""
    if seeds_dir is None:
        return scenario.seeds_dir
    folder = Path(seeds_dir) / scenario.name
    if not folder.is_dir():
        raise ScenarioError(
            f"--seeds-dir {seeds_dir}: no folder {scenario.name}/ in it; expected SEEDS_DIR/<scenario name>/*.yaml"
        )
    return folder


def load_seeds(folder: Path | None, agents: list[str]) -> list[MemoryEvent]:
    """Seed events for cycle 1, round 0; a bad file is one ScenarioError line (file, entry, expected)."""
    events: list[MemoryEvent] = []
    if folder is None:
        return events
    for path in sorted(folder.glob("*.yaml")):
        inside(str(path), folder, path)  # a link out of the seeds folder is not a seed file of it
        try:
            entries = TypeAdapter(list[SeedMemory]).validate_python(read_yaml(path) or [])
        except ValidationError as exc:
            raise ScenarioError(format_validation_error(str(path), exc)) from None
        for i, entry in enumerate(entries):
            unknown = [a for a in entry.agents if a not in agents]
            if unknown or not (entry.agents or entry.public):
                expected = f"unknown agents [{shown(unknown)}]" if unknown else "no agents and not public"
                raise ScenarioError(
                    f"{path}: [{i}].agents: {expected}; expected names from [{shown(agents)}] or public: true"
                )
            if entry.public and entry.secret:
                raise ScenarioError(
                    f"{path}: [{i}]: public and secret together; expected at most one of public: true, secret: true"
                )
            events.append(
                MemoryEvent(
                    id=seed_id(path.stem, i),
                    text=entry.text,
                    cycle=1,
                    round=0,
                    witnesses=entry.agents,
                    public=entry.public,
                    secret=entry.secret,
                    importance=entry.importance,
                    kind=MemoryKind.SEED,
                )
            )
    return events
