"""Onboarding a world: what worlds there are (`amphoreus worlds`) and a starter to make your own
(`amphoreus new-world NAME`), written from the commented template in `worlds/_starter/`."""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

from amphoreus_graph.catalogs.scenario import load_scenario, registered_worlds
from amphoreus_graph.catalogs.scenario_files import packaged_scenarios, read_yaml
from amphoreus_graph.errors import AmphoreusError

NAME = re.compile(r"[a-z][a-z0-9_-]{0,40}")


@dataclass(frozen=True)
class WorldEntry:
    """One packaged scenario as `amphoreus worlds` lists it."""

    scenario: str
    kind: str
    title: str
    agents: str
    paths: int
    actions: int
    rounds: int


def packaged_worlds() -> list[WorldEntry]:
    """Every packaged scenario with the kind of world it runs on (a registered plug-in, the kit, the game master)."""
    entries = []
    for name, path in packaged_scenarios().items():
        scenario = load_scenario(name)
        raw = read_yaml(path)
        labels = scenario.world.labels
        entries.append(
            WorldEntry(
                scenario=name,
                kind=str(raw.get("world", "kit")),
                title=scenario.title,
                agents=f"{len(scenario.agents)} {labels.agents}",
                paths=len({a.path for a in scenario.agents}),
                actions=len(scenario.world.actions),
                rounds=scenario.rounds_per_cycle,
            )
        )
    return entries


def world_kinds() -> list[str]:
    """The kinds of world a scenario's `world:` may name without a path: the registered plug-ins."""
    return sorted(registered_worlds())


def write_starter(name: str, where: Path) -> list[Path]:
    """`where/NAME/`: a commented starter world (scenario YAML, seed memories, README card) that runs as written.

    Refuses a name that is not a simple identifier, or a folder that already exists (nothing is overwritten)."""
    if not NAME.fullmatch(name):
        raise AmphoreusError(
            f"new-world {name!r}: expected a short lowercase name (letters, digits, - and _; starting with a letter)"
        )
    folder = where / name
    if folder.exists():
        raise AmphoreusError(f"{folder}: already exists; expected a new folder (nothing was written)")
    template = resources.files("amphoreus_graph.worlds").joinpath("_starter")
    title = name.replace("-", " ").replace("_", " ").title() + " Valley"
    written = []
    for source, target in _template_files(template, folder, name):
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(source.read_text(encoding="utf-8").replace("{{name}}", name).replace("{{title}}", title))
        written.append(target)
    return written


def _template_files(template: Traversable, folder: Path, name: str) -> list[tuple[Traversable, Path]]:
    return [
        (template / "world.yaml", folder / f"{name}.yaml"),
        (template / "README.md", folder / "README.md"),
        (template / "seeds" / "{{name}}.yaml", folder / "seeds" / f"{name}.yaml"),
    ]
