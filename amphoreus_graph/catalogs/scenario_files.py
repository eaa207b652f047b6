"""Scenario files on disk: where a scenario name points, how its YAML is read, and how a variant that `extends`
another scenario is merged onto it.

A variant states only what differs from the scenario it extends (`extends: fishery`, or a path relative to the
variant): its keys are merged onto that scenario's as a JSON merge patch (RFC 7396): mappings key by key, `null`
removes a key, anything else (a list, a number, a string) replaces what was there. Relative references (the Path
catalog, seeds, plug-in files, resolvers) resolve from the folder of the scenario at the root of the chain, so a
variant can live anywhere, a run directory included.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from amphoreus_graph.atomic import write_atomic
from amphoreus_graph.errors import ScenarioError

EXTENDS = "extends"
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
MAX_WEIGHT = 1_000_000  # values (and 64-character pieces of text) a YAML file may hold, its aliases expanded


def packaged_scenarios() -> dict[str, Path]:
    """Scenarios shipped with the package, by name: each world folder's top-level YAML files (data files a
    world keeps beside them, and folders that are not worlds, start with `_` or live in a subfolder)."""
    found: dict[str, Path] = {}
    for folder in resources.files("amphoreus_graph.worlds").iterdir():
        if folder.is_dir() and not folder.name.startswith("_"):
            for entry in folder.iterdir():
                if entry.name.endswith(".yaml") and not entry.name.startswith("_"):
                    found[Path(str(entry)).stem] = Path(str(entry))
    return dict(sorted(found.items()))


def resolve_scenario_path(name_or_path: str | Path) -> Path:
    """A packaged scenario name (`amphoreus`) or a path to a user's YAML file."""
    packaged = packaged_scenarios()
    if isinstance(name_or_path, str) and name_or_path in packaged:
        return packaged[name_or_path]
    path = Path(name_or_path)
    if path.is_dir():
        raise ScenarioError(
            f"{path}: is a directory; expected a YAML file (a scenario's .yaml) or one of {sorted(packaged)}"
        )
    if not path.is_file():
        raise ScenarioError(
            f"{path}: no such scenario file; expected a path to a YAML file or one of {sorted(packaged)}"
        )
    return path


def read_yaml(path: Path) -> Any:
    """A YAML file's data; unreadable or invalid YAML is one ScenarioError line with the position."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ScenarioError(f"{path}: cannot read the file ({exc}); expected a UTF-8 YAML file") from None
    try:
        return load_yaml(text, str(path))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "(unknown position)"
        problem = getattr(exc, "problem", None) or "invalid YAML"
        raise ScenarioError(f"{path}: {where}: {problem}; expected valid YAML") from None


def load_yaml(text: str, where: str) -> Any:
    """YAML text's data (a yaml.YAMLError if it is not YAML). Data that would weigh more than MAX_WEIGHT once its
    aliases were expanded (a "billion laughs"), or that holds itself, is one ScenarioError line: merging a variant,
    validating, writing JSON or a checkpoint all walk the data expanded, and would grow without bound."""
    data = yaml.load(text, Loader=_LOADER)
    weight = expanded_weight(data)
    if weight is None:
        raise ScenarioError(f"{where}: an alias refers to the mapping or list that holds it; expected finite data")
    if weight > MAX_WEIGHT:
        raise ScenarioError(
            f"{where}: its aliases expand to {weight:.1e} values; expected at most {MAX_WEIGHT:,} (a YAML alias bomb?)"
        )
    return data


def expanded_weight(data: Any) -> int | None:
    """What `data` weighs with every alias expanded (a value 1, a string 1 more per 64 characters), computed once
    per distinct mapping or list, so in time linear in the data as loaded however far it would expand; None when
    a mapping or list holds itself."""
    weights: dict[int, int] = {}
    path: set[int] = set()  # the mappings and lists being weighed, from the top down to the one at hand
    stack: list[tuple[Any, bool]] = [(data, False)]
    while stack:  # iterative: deep nesting must not overflow the Python stack
        node, weighed_below = stack.pop()
        if not isinstance(node, dict | list):
            continue
        children = [*node.keys(), *node.values()] if isinstance(node, dict) else node
        if weighed_below:
            path.discard(id(node))
            weights[id(node)] = 1 + sum(
                weights[id(c)] if isinstance(c, dict | list) else _scalar_weight(c) for c in children
            )
        elif id(node) in path:
            return None
        elif id(node) not in weights:
            path.add(id(node))
            stack.append((node, True))
            stack.extend((c, False) for c in children)
    return weights.get(id(data)) or _scalar_weight(data)


def _scalar_weight(value: Any) -> int:
    return 1 + len(value) // 64 if isinstance(value, str) else 1


def read_mapping(path: Path) -> dict[str, Any]:
    """A scenario file's top-level mapping (one ScenarioError line if it is anything else)."""
    raw = read_yaml(path)
    if not isinstance(raw, dict):
        raise ScenarioError(f"{path}: (top level): expected a mapping of scenario fields")
    return raw


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7396: mappings merge key by key, a `None` (YAML `null`) removes the key, anything else replaces."""
    if not isinstance(patch, dict):
        return patch
    merged = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = merge_patch(merged.get(key), value)
    return merged


def flatten(raw: dict[str, Any], source: Path) -> tuple[dict[str, Any], Path]:
    """A scenario's mapping with everything it extends merged under it (no `extends` left), and the file at the
    root of the chain: where its relative references resolve from."""
    return _flatten(raw, source, frozenset())


def _flatten(raw: dict[str, Any], source: Path, seen: frozenset[Path]) -> tuple[dict[str, Any], Path]:
    own = {key: value for key, value in raw.items() if key != EXTENDS}
    spec = raw.get(EXTENDS)
    if spec is None:
        return own, source
    base = _base_of(spec, source)
    here = source.resolve()
    if base.resolve() in seen | {here}:
        raise ScenarioError(f"{source}: {EXTENDS}: {spec!r} leads back to {base} (a cycle); expected a chain that ends")
    merged, root = _flatten(read_mapping(base), base, seen | {here})
    return merge_patch(merged, own), root


def _base_of(spec: object, source: Path) -> Path:
    """What `extends:` names: a packaged scenario, or a YAML file relative to the variant."""
    packaged = packaged_scenarios()
    if isinstance(spec, str) and spec in packaged:
        return packaged[spec]
    if not isinstance(spec, str) or not spec.strip():
        raise ScenarioError(f"{source}: {EXTENDS}: expected a packaged scenario name or a path to a YAML file")
    path = source.parent / spec
    if not path.is_file():
        raise ScenarioError(
            f"{source}: {EXTENDS}: no such scenario {spec!r} (looked for {path}); expected one of "
            f"{sorted(packaged)} or a YAML file relative to the variant"
        )
    return path


def variant_of(base: str, overrides: dict[str, Any]) -> dict[str, Any]:
    """The mapping of a variant of scenario `base` (a packaged name, or a file: made absolute, so the variant can live
    anywhere) that differs from it by `overrides`."""
    if EXTENDS in overrides:
        raise ScenarioError(f"overrides: {EXTENDS}: the base is the scenario being varied; expected only the changes")
    return {EXTENDS: base if base in packaged_scenarios() else str(Path(base).resolve()), **overrides}


def write_variant(path: Path, variant: dict[str, Any]) -> None:
    write_atomic(path, yaml.safe_dump(variant, sort_keys=False, allow_unicode=True))


def read_overrides(text: str, flag: str) -> dict[str, Any]:
    """Overrides as a user gives them: a YAML file, or a YAML (or JSON) mapping inline."""
    path = Path(text)
    named = _names_a_file(text)
    where = f"{flag} {text}" if named else f"{flag} (inline)"  # inline YAML may span lines: an error stays one
    if named:
        if not path.is_file():
            raise ScenarioError(f"{where}: no such file; expected a YAML file or an inline mapping")
        raw = read_yaml(path)
    else:
        try:
            raw = load_yaml(text, where)
        except yaml.YAMLError as exc:
            raise ScenarioError(
                f"{where}: not valid YAML ({type(exc).__name__}); expected a mapping, e.g. "
                "'{rounds_per_cycle: 8}', or a YAML file"
            ) from None
    if isinstance(raw, dict) and EXTENDS in raw:
        raise ScenarioError(f"{where}: {EXTENDS}: the base is the scenario being varied; expected only the changes")
    if not isinstance(raw, dict) or not raw:
        raise ScenarioError(
            f"{where}: expected a mapping of the scenario's keys to change, e.g. '{{rounds_per_cycle: 8}}'"
        )
    return raw


def _names_a_file(text: str) -> bool:
    """Whether `text` is meant as a file name (else it is the mapping itself)."""
    if text.lstrip().startswith("{"):
        return False
    try:
        return Path(text).suffix in (".yaml", ".yml", ".json") or Path(text).is_file()
    except OSError:  # too long or otherwise no file name: a mapping written out
        return False
