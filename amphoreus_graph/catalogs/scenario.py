"""Scenarios: which world, which agents, which Paths, how memory behaves — loaded and validated once.

A scenario is a YAML file. Its `world:` key says what kind of world it describes: `kit` (the default: the
declarative rules kit, the rest of the file is the world), the name of a world plug-in registered under the
`amphoreus_graph.worlds` entry point (`amphoreus` is one), `module:attr`, or `file.py:attr` beside the scenario.
The plug-in is a `World` object or a factory `(raw, source) -> World` that gets the file's mapping without the
engine's own keys below. Every mistake is one ScenarioError line: the file, the field path, what was expected.

The engine's own keys: `paths` (a Path catalog file, default the packaged one), `seeds` (a folder of seed
memories; default `seeds/` beside the scenario when there is one), `models` (a `--model` string per agent or
Path), `memory`, `retention`, `default_retention`, and `extends`: a scenario this file is a variant of, stating only
what differs (scenario_files.py says how the two merge).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from functools import cache, cached_property
from importlib import metadata
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from amphoreus_graph.catalogs.names import AMBIGUOUS, ambiguous, name_problem, shown
from amphoreus_graph.catalogs.paths import PathCatalog, load_paths
from amphoreus_graph.catalogs.scenario_files import (
    EXTENDS,
    flatten,
    packaged_scenarios,
    read_mapping,
    resolve_scenario_path,
)
from amphoreus_graph.catalogs.trust import import_code, inside, takes
from amphoreus_graph.contracts.memory_seam import Retention, RetentionMode
from amphoreus_graph.contracts.turn import TurnContext
from amphoreus_graph.contracts.world import AgentProfile, World
from amphoreus_graph.errors import AmphoreusError, ScenarioError, format_validation_error

ENTRY_POINTS = "amphoreus_graph.worlds"
DEFAULT_WORLD = "kit"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class RecallMode(StrEnum):
    RANKED = "ranked"
    COSINE = "cosine"


class RecallWeights(_Strict):
    recency: float = Field(default=1.0, ge=0)
    importance: float = Field(default=1.0, ge=0)
    relevance: float = Field(default=2.0, ge=0, description="cosine spreads less than the others: weigh it more")


class MemoryConfig(_Strict):
    """How agents recall and reflect (Generative Agents' scoring, plus a weight per cycle gone by)."""

    mode: RecallMode = Field(default=RecallMode.RANKED, description="ranked, or plain cosine top-k")
    weights: RecallWeights = RecallWeights()
    recency_decay: float = Field(default=0.9, gt=0, le=1, description="recency multiplier per round since access")
    cycle_weight: float = Field(default=0.8, gt=0, le=1, description="score multiplier per cycle gone by")
    overfetch: int = Field(default=4, ge=1, description="fetch k × overfetch by similarity, then rank")
    reflection_budget: float = Field(default=40.0, gt=0, description="unreflected importance that triggers one")
    reflection_evidence: int = Field(default=5, ge=1, description="salient memories a reflection draws on")
    attention: int | None = Field(
        default=None,
        ge=0,
        description="the most events an agent notices each round as a bystander, the most important first (it "
        "always keeps what it took part in); unset: everything it witnessed. Bounds a crowd's memory writes",
    )
    write_behind: bool = Field(
        default=True,
        description="file a round's memories while the next round's agents decide (recalled from the round after "
        "that); false: file them before the next round begins",
    )


class ScenarioSettings(_Strict):
    """The engine's own keys of a scenario file (everything else belongs to the world)."""

    world: str = Field(default=DEFAULT_WORLD, description="kit, a registered plug-in, module:attr or file.py:attr")
    paths: str | None = Field(default=None, description="a Path catalog file, relative to the scenario")
    seeds: str | None = Field(default=None, description="seed memories folder, relative to the scenario")
    memory: MemoryConfig = MemoryConfig()
    models: dict[str, str] = Field(
        default_factory=dict, description="agent or Path -> a --model string for its turns (the run's otherwise)"
    )
    retention: dict[str, Retention] = Field(default_factory=dict, description="per Path")
    default_retention: Retention = Retention(mode=RetentionMode.ECHOES)


ENGINE_KEYS = frozenset(ScenarioSettings.model_fields)


@dataclass(frozen=True, eq=False)  # identity is equality: a run holds one, in its services
class Scenario:
    """A world to live in, with the Path catalog its agents walk and how their memory behaves."""

    ref: str  # a packaged name, or the file's absolute path: what turns record, loadable from any directory
    source: Path
    world: World
    settings: ScenarioSettings
    catalog: PathCatalog
    seeds_dir: Path | None

    @property
    def name(self) -> str:
        return self.world.name

    @property
    def title(self) -> str:
        return self.world.title

    @property
    def agents(self) -> list[AgentProfile]:
        return self.world.agents

    @property
    def agent_names(self) -> list[str]:
        return [a.name for a in self.world.agents]

    def agent(self, name: str) -> AgentProfile:
        return self.profiles[name]

    @cached_property
    def profiles(self) -> dict[str, AgentProfile]:
        """Each agent's profile by its exact name, worked out once (asked for every turn: a scan of the roster
        was 7% of a 10,000-agent round)."""
        return {a.name: a for a in self.world.agents}

    @property
    def rounds_per_cycle(self) -> int:
        return self.world.rounds_per_cycle

    @property
    def memory(self) -> MemoryConfig:
        return self.settings.memory

    def retention_for(self, path: str) -> Retention:
        return self.settings.retention.get(path, self.settings.default_retention)

    @cached_property
    def briefs(self) -> dict[str, dict[str, Any]]:
        """Each declared action's brief as keyword arguments, worked out once (asked for every option of every
        turn)."""
        return {name: spec.brief().model_dump() for name, spec in self.world.actions.items()}


def registered_worlds() -> dict[str, metadata.EntryPoint]:
    """World plug-ins registered by installed packages (`amphoreus_graph.worlds` entry points), by name."""
    return {ep.name: ep for ep in metadata.entry_points(group=ENTRY_POINTS)}


def _world_factory(spec: str, source: Path) -> Any:
    """What `world:` names: a registered plug-in (by its name or its `module:attr`), another `module:attr`, or
    `file.py:attr` beside the scenario (those two are code the scenario brings: catalogs/trust.py)."""
    registered = registered_worlds()
    by_target = {ep.value: ep for ep in registered.values()}
    if spec in registered or spec in by_target:
        return (registered.get(spec) or by_target[spec]).load()
    target, _, attr = spec.rpartition(":")
    if not target or not attr:
        raise ScenarioError(
            f"{source}: world: unknown world {spec!r}; "
            f"expected one of {sorted(registered)}, module:attr or file.py:attr"
        )
    module = import_code(target, spec, source, "world", "World plug-in")
    if not hasattr(module, attr):
        raise ScenarioError(f"{source}: world: {target} has no {attr!r}; expected a World plug-in named {attr}")
    return getattr(module, attr)


def load_world(spec: str, raw: dict[str, Any], source: Path) -> World:
    """The world a scenario describes, from its plug-in (a World, or a factory given the world's own keys)."""
    found = _world_factory(spec, source)
    if isinstance(found, World):
        return found
    if not callable(found) or not takes(found, raw, source):
        what = f"a {type(found).__name__}" + (" that cannot be called as (raw, source)" if callable(found) else "")
        raise ScenarioError(
            f"{source}: world: {spec!r} is {what}; expected a World or a factory (raw, source) -> World "
            "(see contracts/world.py)"
        )
    build: Callable[[dict[str, Any], Path], Any] = found
    try:
        world = build(raw, source)
    except AmphoreusError:
        raise
    except Exception as exc:  # code of the scenario's choosing, not a World factory after all: one line
        raise ScenarioError(
            f"{source}: world: {spec!r} failed ({type(exc).__name__}: {exc}); expected a World factory"
        ) from None
    if not isinstance(world, World):
        raise ScenarioError(
            f"{source}: world: {spec!r} gave a {type(world).__name__}; expected a World (see contracts/world.py)"
        )
    return world


def _check(scenario: Scenario) -> None:
    """Cross-references the world cannot check alone: Paths against the catalog, unique agent names, tags."""
    where = str(scenario.source)
    catalog, names = scenario.catalog, scenario.agent_names
    paths = set(catalog.names())
    for i, agent in enumerate(scenario.agents):
        for field, value in (("path", agent.path), ("secondary_path", agent.secondary_path)):
            if value is not None and value not in paths:
                raise ScenarioError(
                    f"{where}: agents[{i}].{field}: unknown Path {value!r}; expected one of {sorted(paths)}"
                )
    for path in scenario.settings.retention:
        if path not in paths:
            raise ScenarioError(f"{where}: retention.{path}: unknown Path {path!r}; expected one of {sorted(paths)}")
    if not names:
        raise ScenarioError(f"{where}: agents: no agents; expected at least one")
    # Names are data that reach prompts and ids as they are, and memory keys agents by their exact code points:
    # a name on more than one line, an invisible one, or two that look alike is refused here (names.py).
    for i, name in enumerate(names):
        if problem := name_problem(name):
            raise ScenarioError(f"{where}: agents[{i}].name: {name!a}: {problem}")
    if clashes := ambiguous(names):
        raise ScenarioError(
            f"{where}: agents: ambiguous agent names {shown(clashes)} ({AMBIGUOUS}); expected names that differ"
        )
    known_tags = set(catalog.tags) | set(getattr(scenario.world, "tags", None) or {})  # a world may add its own
    for name, action in scenario.world.actions.items():
        if strange := sorted(set(action.tags) - known_tags):
            raise ScenarioError(
                f"{where}: actions.{name}.tags: unknown tags {strange}; expected tags from {sorted(catalog.tags)}"
            )
        if odd := sorted(set(action.affinity) - paths):
            raise ScenarioError(f"{where}: actions.{name}.affinity: unknown Paths {odd}; expected Paths of the catalog")


def load_scenario(name_or_path: str | Path) -> Scenario:
    """Load and validate a scenario; any problem is one ScenarioError line (file: field: expected)."""
    source = resolve_scenario_path(name_or_path)
    packaged = isinstance(name_or_path, str) and name_or_path in packaged_scenarios()
    return scenario_from(read_mapping(source), source, ref=str(name_or_path) if packaged else None)


def scenario_from(raw: dict[str, Any], source: Path, *, ref: str | None = None) -> Scenario:
    """A scenario from its file's mapping, `source` being where that file is (or would be: a variant can be checked
    before it is written). `ref` is what turns record (default: the file's absolute path, loadable from anywhere)."""
    merged, root = flatten(raw, source)
    try:
        return _build(merged, root, source, ref or str(source.resolve()))
    except ScenarioError as exc:
        if root == source:
            raise
        # the mistake is in the variant or in what it extends: say both
        raise ScenarioError(str(exc).replace(str(root), f"{source} ({EXTENDS} {root})", 1)) from None


def _build(raw: dict[str, Any], root: Path, source: Path, ref: str) -> Scenario:
    """A flattened scenario mapping, its relative references resolved from `root`."""
    try:
        settings = ScenarioSettings.model_validate({k: v for k, v in raw.items() if k in ENGINE_KEYS})
    except ValidationError as exc:
        raise ScenarioError(format_validation_error(str(root), exc)) from None
    catalog = load_paths(
        str(inside(f"{root}: paths", root.parent, root.parent / settings.paths)) if settings.paths else None
    )
    seeds = _seeds_dir(root, settings)
    world = load_world(settings.world, {k: v for k, v in raw.items() if k not in ENGINE_KEYS}, root)
    scenario = Scenario(ref=ref, source=source, world=world, settings=settings, catalog=catalog, seeds_dir=seeds)
    _check(scenario)
    return scenario


def _seeds_dir(source: Path, settings: ScenarioSettings) -> Path | None:
    """The scenario's seed memories: the folder it names (which must exist), else `seeds/` beside it, if any."""
    if settings.seeds is not None:
        folder = inside(f"{source}: seeds", source.parent, source.parent / settings.seeds)
        if not folder.is_dir():
            raise ScenarioError(f"{source}: seeds: no such folder {folder}; expected a folder of seed memory files")
        return folder
    beside = source.parent / "seeds"
    if not beside.is_dir():
        return None
    inside(f"{source}: seeds/", source.parent, beside)  # a link out of the scenario's folder is not beside it
    return beside


@cache
def scenario_of(name_or_path: str) -> Scenario:
    """Scenarios are read once per process: a run must not change under its own feet."""
    return load_scenario(name_or_path)


def scenario_for(turn: TurnContext) -> Scenario | None:
    """The scenario `turn` was posed in: the run's own as the turn holds it, else the one it names (a turn read
    back from a sample, or a copy re-posed in another world); None for a turn posed outside any."""
    held = turn.loaded_scenario
    if isinstance(held, Scenario) and held.ref == turn.world:
        return held
    return scenario_of(turn.world) if turn.world else None


def catalog_of_turn(turn: TurnContext) -> PathCatalog:
    """The Path catalog `turn` was posed under (the packaged one for a turn posed outside any scenario)."""
    scenario = scenario_for(turn)
    return scenario.catalog if scenario is not None else load_paths()


def catalog_for(world: str) -> PathCatalog:
    """The Path catalog of the scenario a turn was posed in (the packaged one for a turn posed outside any)."""
    return scenario_of(world).catalog if world else load_paths()
