"""The texts a world's generated benchmark items are posed in (Path-Voice's situations, Remembrance's facts and
memories, Erudition's hops, Destruction's pressures), with slots the generator fills from the world's names.

A world may ship its own, so its items speak its language: a plug-in world by an attribute `bench_prose` (the
path of its prose file), any scenario by a file `bench/prose.yaml` beside its YAML (for a variant, beside the
scenario at the root of what it extends). Every section is optional: what a world's file leaves out, and every
section for a world that ships none, comes from the packaged world-neutral prose (`bench/data/prose.yaml`).
A broken prose file is one AmphoreusError line (file: field: what was expected).
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from amphoreus_graph.catalogs.scenario import Scenario
from amphoreus_graph.catalogs.scenario_files import flatten, read_mapping
from amphoreus_graph.errors import AmphoreusError, format_validation_error

PROSE_FILE = Path("bench") / "prose.yaml"  # beside a scenario's YAML
ATTRIBUTE = "bench_prose"  # a plug-in world's optional attribute: the path of its prose file


class _Prose(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Hop(_Prose):
    memory: str
    fact: str
    question: str


class Mould(_Prose):
    fact: str
    question: str


class Prose(_Prose):
    """What the items say, with slots for the world's names (see `bench/data/prose.yaml` for each slot)."""

    voice_situations: list[str] = Field(min_length=1)
    fact_moulds: list[Mould] = Field(min_length=1)
    fact_details: list[list[str]] = Field(min_length=1, description="one list per mould, of at least 4 answers")
    later_memories: list[str] = Field(min_length=3)
    erudition: dict[str, Hop] = Field(min_length=1)
    adversary: str
    pressures: list[str] = Field(min_length=1)

    @model_validator(mode="after")
    def _details_match_moulds(self) -> Prose:
        if len(self.fact_details) != len(self.fact_moulds):
            raise ValueError(
                f"fact_details has {len(self.fact_details)} lists for {len(self.fact_moulds)} fact_moulds; "
                "expected one list of answers per mould"
            )
        if short := [n for n, answers in enumerate(self.fact_details) if len(set(answers)) < 4]:
            raise ValueError(f"fact_details{short}: expected at least 4 different answers per mould")
        return self


def _read(text: str, label: str) -> dict[str, Any]:
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise AmphoreusError(f"{label}: not valid YAML ({str(exc).splitlines()[0]})") from None
    if not isinstance(raw, dict):
        raise AmphoreusError(f"{label}: (top level): expected a mapping of prose sections {sorted(Prose.model_fields)}")
    return raw


@cache
def neutral() -> Prose:
    """The packaged world-neutral prose, posed in any world that ships none."""
    text = resources.files("amphoreus_graph.bench.data").joinpath("prose.yaml").read_text(encoding="utf-8")
    return Prose.model_validate(_read(text, "amphoreus_graph/bench/data/prose.yaml"))


def load_prose(path: Path) -> Prose:
    """A world's prose file, its missing sections taken from the neutral prose."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise AmphoreusError(f"{path}: cannot read it ({exc.__class__.__name__}); expected a UTF-8 YAML file") from None
    raw = _read(text, str(path))
    try:
        return Prose.model_validate({**neutral().model_dump(), **raw})
    except ValidationError as exc:
        raise AmphoreusError(format_validation_error(str(path), exc)) from None


def prose_file(scenario: Scenario) -> Path | None:
    """Where a scenario's world keeps its prose: the plug-in's attribute, else `bench/prose.yaml` beside the
    scenario's file or beside the scenario at the root of what it extends; None if it ships none."""
    declared = getattr(scenario.world, ATTRIBUTE, None)
    if declared is not None:
        if not isinstance(declared, str | Path) or not Path(declared).is_file():
            raise AmphoreusError(
                f"{scenario.source}: world {scenario.name}: {ATTRIBUTE}: no such file {declared!r}; "
                "expected the path of a benchmark prose YAML file"
            )
        return Path(declared)
    root = flatten(read_mapping(scenario.source), scenario.source)[1]
    for folder in (scenario.source.parent, root.parent):
        if (folder / PROSE_FILE).is_file():
            return folder / PROSE_FILE
    return None


@cache
def prose_of(scenario: Scenario) -> Prose:
    """The prose a scenario's items are posed in, read once per process."""
    found = prose_file(scenario)
    return neutral() if found is None else load_prose(found)
