"""The benchmark's subjects: one agent per Path, drawn from a scenario's world and posed situations through the
same TurnContext the society uses.

A Path walked by one of the scenario's agents borrows that agent (name, title, persona, traits, and what the
world shows it as a cycle begins: place, aim, status lines, the actions it is offered, its trust); the others
get a plain Emanator of that Path, standing where the scenario's first agent stands, offered the same actions
(aimed at every agent). Subjects have no secondary Path: the benchmark measures one. The turns carry no
pressures: a benchmark of Path fidelity poses a calm turn, where nothing the world urges competes with the Path.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

from pydantic import BaseModel

from amphoreus_graph.catalogs.paths import PathCatalog
from amphoreus_graph.catalogs.scenario import Scenario, scenario_of
from amphoreus_graph.catalogs.scenario_files import packaged_scenarios
from amphoreus_graph.contracts.actions import ActionSpec, TargetKind
from amphoreus_graph.contracts.turn import Option, RecalledMemory, TurnContext
from amphoreus_graph.contracts.world import AgentProfile, Perception, WorldLabels
from amphoreus_graph.errors import AmphoreusError

DEFAULT_SCENARIO = "amphoreus"


def default_items_dir() -> Path:
    """Where the default scenario's generated items are committed: `bench/` beside its scenario file."""
    return packaged_scenarios()[DEFAULT_SCENARIO].parent / "bench"


class Subject(BaseModel):
    """Who answers a Path's items, and the world around it at the start of a cycle."""

    agent: str
    title: str
    persona: str
    traits: list[str]
    path: str
    aim: str
    aim_target: str | None
    location: str | None
    status: dict[str, str]
    options: list[Option]
    trust: dict[str, float]


def _merged(sequences: list[list[str]]) -> list[str]:
    """Names in the order the sequences agree on: each new name goes right after its predecessor in its own
    sequence. Every agent is offered the places other than its own, so two agents at different places give
    the world's whole list in its own order."""
    order: list[str] = []
    for sequence in sequences:
        at = 0
        for name in sequence:
            if name in order:
                at = order.index(name) + 1
            else:
                order.insert(at, name)
                at += 1
    return order


@dataclass(frozen=True)
class Stage:
    """A scenario's world as the benchmark poses it: who answers for each Path, and the world's names."""

    scenario: Scenario
    subjects: dict[str, Subject]
    agents: list[str]
    seen: dict[str, Perception]  # what each agent perceives as a cycle begins
    locations: list[str]
    objectives: list[str]

    @property
    def ref(self) -> str:
        return self.scenario.ref

    @property
    def catalog(self) -> PathCatalog:
        return self.scenario.catalog

    @property
    def labels(self) -> WorldLabels:
        return self.scenario.world.labels

    @property
    def actions(self) -> dict[str, ActionSpec]:
        return self.scenario.world.actions

    def offer(self, targets: dict[str, list[str]]) -> list[Option]:
        """Actions with their targets as offered options, built from the world's specs and in the order the
        world offers its actions (as any turn lists them); an action the world lacks is one error line."""
        unknown = sorted(set(targets) - set(self.actions))
        if unknown:
            raise AmphoreusError(
                f"bench: {unknown} are not among {self.scenario.name}'s actions {sorted(self.actions)}"
            )
        return [
            Option(action=name, targets=targets[name], **spec.brief().model_dump())
            for name, spec in self.actions.items()
            if name in targets
        ]

    def open_options(self, path: str) -> list[Option]:
        """Everything the subject is offered as a cycle begins: nothing forces a Path."""
        return list(self.subjects[path].options)

    def answering(self, path: str) -> list[Option]:
        """The subject's options that take no target: a list of names would put answers in its mouth."""
        return [o for o in self.subjects[path].options if not o.targets]

    def pose(
        self,
        path: str,
        *,
        item_id: str,
        situation: str,
        options: list[Option],
        seed: int = 0,
        memories: list[RecalledMemory] | None = None,
        observations: list[str] | None = None,
        round_: int = 1,
        choice: bool = False,
    ) -> TurnContext:
        """The turn the subject of `path` faces for one benchmark item (`choice`: its options are free text)."""
        subject = self.subjects[path]
        return TurnContext(
            run_id=f"bench/{item_id}",
            seed=seed,
            cycle=1,
            round=round_,
            world=self.ref,
            role=self.labels.role,
            agent=subject.agent,
            title=subject.title,
            persona=subject.persona,
            traits=subject.traits,
            path=path,
            secondary_path=None,
            aim=subject.aim,
            aim_target=subject.aim_target,
            location=subject.location,
            status=subject.status,
            situation=situation,
            observations=observations or [],
            memories=memories or [],
            options=options,
            choice=choice,
            trust=subject.trust,
        )


def _borrowed(profile: AgentProfile, seen: Perception) -> Subject:
    """One of the scenario's agents, as its world shows it when a cycle begins."""
    return Subject(
        agent=profile.name,
        title=profile.title,
        persona=profile.persona,
        traits=profile.traits,
        path=profile.path,
        aim=seen.aim,
        aim_target=seen.aim_target,
        location=seen.location,
        status=seen.status,
        options=seen.options,
        trust=seen.trust,
    )


def _emanator(path: str, stand_in: Perception, agents: list[str]) -> Subject:
    """A plain follower of `path`, where the first agent stands, able to aim at any agent of the world."""
    options = [
        o.model_copy(update={"targets": list(agents)}) if o.target is TargetKind.AGENT else o for o in stand_in.options
    ]
    return Subject(
        agent=f"Emanator of {path}",
        title=f"a follower of the Path of {path}",
        persona=f"A wanderer who walks the Path of {path} and measures every choice by it.",
        traits=[],
        path=path,
        aim=stand_in.aim,
        aim_target=stand_in.aim_target,
        location=stand_in.location,
        status=stand_in.status,
        options=options,
        trust=dict.fromkeys(agents, 0.0),
    )


@cache
def stage(scenario: str = DEFAULT_SCENARIO) -> Stage:
    """The stage for a scenario (a packaged name or a YAML file), built once per process. Its names are the
    world's as a cycle begins: the agents, the places they stand at or are offered, the objectives it shows."""
    loaded = scenario_of(scenario)
    world, agents = loaded.world, loaded.agent_names
    genesis = world.genesis(1)
    seen = {name: world.perceive(genesis, name) for name in agents}
    view = world.view(genesis)

    def offered(kind: TargetKind) -> list[list[str]]:
        return [o.targets for p in seen.values() for o in p.options if o.target is kind]

    standing = [
        [where] for where in [p.location for p in seen.values()] + [v.location for v in view.agents.values()] if where
    ]
    subjects: dict[str, Subject] = {}
    for profile in loaded.agents:
        subjects.setdefault(profile.path, _borrowed(profile, seen[profile.name]))
    return Stage(
        scenario=loaded,
        subjects={p: subjects.get(p) or _emanator(p, seen[agents[0]], agents) for p in loaded.catalog.names()},
        agents=agents,
        seen=seen,
        locations=_merged(offered(TargetKind.LOCATION) + standing) or [loaded.title],
        objectives=_merged([list(view.objectives), *offered(TargetKind.OBJECTIVE)]),
    )
