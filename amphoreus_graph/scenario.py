"""Scenario models and the loader: a world (heirs, Titans, locations, rules) described in YAML.

Every user mistake ends in one `ScenarioError` naming the file, the field path and what was expected.
"""

from __future__ import annotations

import unicodedata
from enum import StrEnum
from importlib import resources
from pathlib import Path as FsPath

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from amphoreus_graph.errors import ScenarioError, format_validation_error
from amphoreus_graph.paths import PathCatalog, load_paths

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Location(_Strict):
    name: str
    description: str = ""


class Titan(_Strict):
    name: str
    domain: str
    coreflame: str
    location: str


class Heir(_Strict):
    """A Chrysos Heir: who they are, the Path they walk, and the Coreflame they chase."""

    name: str
    title: str = ""
    path: str
    secondary_path: str | None = None
    seeks: str = Field(description="the Titan whose Coreflame this heir chases")
    persona: str
    traits: list[str] = Field(default_factory=list)
    start_location: str
    relationships: dict[str, float] = Field(
        default_factory=dict, description="initial trust in other heirs, -1 (enmity) to 1 (devotion)"
    )


class RetentionMode(StrEnum):
    ALL = "all"
    ECHOES = "echoes"
    NONE = "none"


class Retention(_Strict):
    """What a heir of a Path keeps of its memories when the world resets."""

    mode: RetentionMode
    keep: int = Field(default=5, ge=0, description="echoes: how many of the most important memories")
    decay: float = Field(default=0.5, gt=0, le=1, description="echoes: importance multiplier per reset")


class RecallMode(StrEnum):
    RANKED = "ranked"
    COSINE = "cosine"


class RecallWeights(_Strict):
    recency: float = Field(default=1.0, ge=0)
    importance: float = Field(default=1.0, ge=0)
    relevance: float = Field(default=2.0, ge=0, description="cosine spreads less than the others: weigh it more")


class MemoryConfig(_Strict):
    """How heirs recall and reflect (Generative Agents' scoring, plus a weight per cycle gone by)."""

    mode: RecallMode = Field(default=RecallMode.RANKED, description="ranked, or plain cosine top-k")
    weights: RecallWeights = RecallWeights()
    recency_decay: float = Field(default=0.9, gt=0, le=1, description="recency multiplier per round since access")
    cycle_weight: float = Field(default=0.8, gt=0, le=1, description="score multiplier per cycle gone by")
    overfetch: int = Field(default=4, ge=1, description="fetch k × overfetch by similarity, then rank")
    reflection_budget: float = Field(default=40.0, gt=0, description="unreflected importance that triggers one")
    reflection_evidence: int = Field(default=5, ge=1, description="salient memories a reflection draws on")


class BlackTide(_Strict):
    start: float = Field(default=10.0, ge=0)
    rise_per_round: float = Field(default=4.0, ge=0)
    limit: float = Field(default=100.0, gt=0, description="the Tide wins the cycle when it reaches this")


class EndConditions(_Strict):
    era_nova: bool = Field(default=True, description="end the cycle once every Coreflame is delivered")
    black_tide: bool = Field(default=True, description="end the cycle when the Black Tide reaches its limit")
    all_fallen: bool = Field(default=True, description="end the cycle when every heir has fallen")


class Scenario(_Strict):
    """A whole world. Cross-references (Paths, Titans, locations, heirs) are checked by `load_scenario`."""

    name: str
    title: str
    description: str
    director: str = "Lycurgus"
    vortex: str = Field(description="the location where Coreflames are delivered")
    rounds_per_cycle: int = Field(default=12, ge=1)
    locations: list[Location] = Field(min_length=1)
    titans: list[Titan] = Field(min_length=1)
    heirs: list[Heir] = Field(min_length=1)
    black_tide: BlackTide = BlackTide()
    end_conditions: EndConditions = EndConditions()
    retention: dict[str, Retention] = Field(default_factory=dict, description="per Path")
    default_retention: Retention = Retention(mode=RetentionMode.ECHOES)
    memory: MemoryConfig = MemoryConfig()
    situations: list[str] = Field(
        default_factory=list, description="situation templates the director draws from each round"
    )

    def heir(self, name: str) -> Heir:
        return next(h for h in self.heirs if h.name == name)

    def titan(self, name: str) -> Titan:
        return next(t for t in self.titans if t.name == name)

    @property
    def heir_names(self) -> list[str]:
        return [h.name for h in self.heirs]

    def retention_for(self, path: str) -> Retention:
        return self.retention.get(path, self.default_retention)


def _check_references(scenario: Scenario, catalog: PathCatalog) -> tuple[str, str] | None:
    """Return (field path, what was expected) for the first dangling reference, else None."""
    locations = {loc.name for loc in scenario.locations}
    titans = {t.name for t in scenario.titans}
    heirs = set(scenario.heir_names)
    paths = set(catalog.names())

    def one_of(kind: str, value: str, options: set[str]) -> str:
        return f"unknown {kind} {value!r}; expected one of {sorted(options)}"

    checks: list[tuple[str, str, str, set[str]]] = [("vortex", scenario.vortex, "location", locations)]
    for i, titan in enumerate(scenario.titans):
        checks.append((f"titans[{i}].location", titan.location, "location", locations))
    for i, heir in enumerate(scenario.heirs):
        checks.append((f"heirs[{i}].path", heir.path, "Path", paths))
        if heir.secondary_path is not None:
            checks.append((f"heirs[{i}].secondary_path", heir.secondary_path, "Path", paths))
        checks.append((f"heirs[{i}].seeks", heir.seeks, "Titan", titans))
        checks.append((f"heirs[{i}].start_location", heir.start_location, "location", locations))
        for other in heir.relationships:
            checks.append((f"heirs[{i}].relationships.{other}", other, "heir", heirs - {heir.name}))
    for path in scenario.retention:
        checks.append((f"retention.{path}", path, "Path", paths))
    for field, value, kind, options in checks:
        if value not in options:
            return field, one_of(kind, value, options)
    for kind, names in (("heir", scenario.heir_names), ("Titan", [t.name for t in scenario.titans])):
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            return f"{kind.lower()}s", f"duplicate {kind} names {dupes}; expected unique names"
    # Memory keys heirs by their exact code points, so "Zoé" typed composed and decomposed would be two heirs
    # with two stores that look like one name everywhere else (prompts, samples, reports): refused here.
    normal = [unicodedata.normalize("NFC", n) for n in scenario.heir_names]
    clashes = [n for n, key in zip(scenario.heir_names, normal, strict=True) if normal.count(key) > 1]
    if clashes:
        shown = ", ".join(ascii(n) for n in clashes)
        return "heirs", f"duplicate heir names {shown} after Unicode normalisation (NFC); expected unique names"
    return None


def packaged_scenarios() -> dict[str, FsPath]:
    """Scenarios shipped with the package, by name."""
    folder = resources.files("amphoreus_graph.scenarios")
    return {FsPath(str(entry)).stem: FsPath(str(entry)) for entry in folder.iterdir() if entry.name.endswith(".yaml")}


def resolve_scenario_path(name_or_path: str | FsPath) -> FsPath:
    """A packaged scenario name (`amphoreus`) or a path to a user's YAML file."""
    packaged = packaged_scenarios()
    if isinstance(name_or_path, str) and name_or_path in packaged:
        return packaged[name_or_path]
    path = FsPath(name_or_path)
    if path.is_dir():
        raise ScenarioError(
            f"{path}: is a directory; expected a YAML file (a scenario's .yaml) or one of {sorted(packaged)}"
        )
    if not path.is_file():
        raise ScenarioError(
            f"{path}: no such scenario file; expected a path to a YAML file or one of {sorted(packaged)}"
        )
    return path


def load_scenario(name_or_path: str | FsPath) -> Scenario:
    """Load and validate a scenario; any problem is one ScenarioError line (file: field: expected)."""
    path = resolve_scenario_path(name_or_path)
    try:
        raw = yaml.load(path.read_text(encoding="utf-8"), Loader=_LOADER)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "(unknown position)"
        problem = getattr(exc, "problem", None) or "invalid YAML"
        raise ScenarioError(f"{path}: {where}: {problem}; expected valid YAML") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ScenarioError(f"{path}: cannot read the file ({exc}); expected a UTF-8 YAML file") from None
    if not isinstance(raw, dict):
        raise ScenarioError(f"{path}: (top level): expected a mapping of scenario fields")
    try:
        scenario = Scenario.model_validate(raw)
    except ValidationError as exc:
        raise ScenarioError(format_validation_error(str(path), exc)) from None
    problem = _check_references(scenario, load_paths())
    if problem is not None:
        field, expected = problem
        raise ScenarioError(f"{path}: {field}: {expected}")
    return scenario
