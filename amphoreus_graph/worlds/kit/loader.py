"""Loading a kit world: the YAML's mapping validated into a `KitSpec`, its cross-references checked, its
resolvers imported. Every mistake is one ScenarioError line: the file, the field path, what was expected."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from amphoreus_graph.catalogs.scenario_files import read_yaml
from amphoreus_graph.catalogs.trust import import_code, takes
from amphoreus_graph.errors import ScenarioError, field_path
from amphoreus_graph.worlds.kit.checks import check
from amphoreus_graph.worlds.kit.compiled import Resolver
from amphoreus_graph.worlds.kit.effects import EFFECTS
from amphoreus_graph.worlds.kit.problems import Problem
from amphoreus_graph.worlds.kit.schema import KitSpec
from amphoreus_graph.worlds.kit.world import KitWorld

# The scenario loader's own keys: it reads them and hands the kit the rest of the file.
ENGINE_KEYS = frozenset({"world", "paths", "seeds", "memory", "retention", "default_retention"})


def _format(source: Path, exc: ValidationError) -> str:
    """One line for the first problem: the field path (an effect's key said once), what was expected."""
    first = exc.errors()[0]
    loc: list[int | str] = []
    for part in first["loc"]:
        if loc and part == loc[-1] and part in EFFECTS:
            continue  # pydantic names a tagged union member and then its field: `harm.harm` is `harm`
        loc.append(part)
    more = exc.error_count() - 1
    suffix = f" (and {more} more problem{'s' if more > 1 else ''})" if more else ""
    got = first.get("input")
    got_text = "" if first["type"] in ("missing", "effect") or isinstance(got, dict | list) else f", got {got!r}"
    hint = ""
    if first["type"] == "invalid_key" and isinstance(got, bool):
        hint = " (YAML reads a bare on/off/yes/no as true/false: quote the key)"
    return f"{source}: {field_path(tuple(loc))}: {first['msg']}{got_text}{hint}{suffix}"


def load_kit_world(raw: dict[str, Any], source: Path) -> KitWorld:
    """The world a kit YAML declares (`raw`: the file's mapping without the engine's own keys)."""
    if not isinstance(raw, dict):
        raise ScenarioError(f"{source}: (top level): expected a mapping of world fields")
    try:
        spec = KitSpec.model_validate(raw)
    except ValidationError as exc:
        raise ScenarioError(_format(source, exc)) from None
    world = KitWorld(spec)
    world.origin = (raw, source)
    try:
        check(world.rules)
    except Problem as problem:
        raise ScenarioError(f"{source}: {problem.field}: {problem.expected}") from None
    for i, decl in enumerate(spec.actions):
        if decl.resolver is not None:
            world.rules.resolvers[decl.name] = load_resolver(decl.resolver, source, f"actions[{i}].resolver")
    return world


def load_kit_file(path: str | Path) -> KitWorld:
    """A kit world straight from its YAML file (the engine's keys are skipped): for tests and tools."""
    source = Path(path)
    raw = read_yaml(source)
    if not isinstance(raw, dict):
        raise ScenarioError(f"{source}: (top level): expected a mapping of world fields")
    return load_kit_world({k: v for k, v in raw.items() if k not in ENGINE_KEYS}, source)


def load_resolver(spec: str, source: Path, field: str) -> Resolver:
    """`file.py:function` (relative to the YAML's folder) or `package.module:function`: a callable taking one
    `Act`. Anything wrong is one line naming the field."""
    target, _, attr = spec.rpartition(":")
    if not target or not attr:
        raise ScenarioError(f"{source}: {field}: {spec!r}; expected file.py:function or module:function")
    module = import_code(target, spec, source, field, "resolver")
    found = getattr(module, attr, None)
    if found is None:
        raise ScenarioError(f"{source}: {field}: {target} has no {attr!r}; expected a function named {attr}")
    if not callable(found):
        raise ScenarioError(f"{source}: {field}: {attr!r} is a {type(found).__name__}; expected a function")
    if not takes(found, object()):
        raise ScenarioError(f"{source}: {field}: {attr!r} does not take one argument; expected def {attr}(act: Act)")
    resolver: Resolver = found
    return resolver
