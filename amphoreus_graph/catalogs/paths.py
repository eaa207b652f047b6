"""Path catalog files: the packaged one, or a user's, whole or as an extension of another.

A whole catalog lists its Paths (`paths: [...]`). An extension states only what differs from the catalog it
`extends` (`default`: the packaged one, or a catalog file relative to this one, inside its folder as
`trust.inside` rules): `paths: {extends: default, add: [...], drop: [...], change: {Name: {field: value}}}`.
Paths of the base it `drop`s go, those it `change`s get their fields merged (as a scenario variant's are:
mappings key by key, `null` removes a field, anything else replaces), those it `add`s (whole Path entries,
new names) come last; its `tags` are added to the base's and its `patron_title` replaces the base's. The
result is checked as a whole catalog is, and every mistake is one AmphoreusError line naming the file.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from pathlib import Path as FsPath
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from amphoreus_graph.catalogs.path_model import (
    OLD_PATRON,
    OLD_PATRON_TITLE,
    PACKAGED,
    Path,
    PathCatalog,
    new_spelling,
    reference_problem,
)
from amphoreus_graph.catalogs.scenario_files import load_yaml, merge_patch
from amphoreus_graph.catalogs.trust import inside
from amphoreus_graph.contracts.actions import TAGS
from amphoreus_graph.errors import AmphoreusError, format_validation_error

__all__ = ["DEFAULT", "PACKAGED", "Path", "PathCatalog", "load_paths"]

DEFAULT = "default"  # what `extends:` calls the packaged catalog


class _Extension(BaseModel):
    model_config = ConfigDict(extra="forbid")

    extends: str = Field(min_length=1, description="`default`, or a catalog file relative to this one")
    add: list[Path] = Field(default_factory=list, description="new Paths, each a whole entry")
    drop: list[str] = Field(default_factory=list, description="Paths of the base to leave out")
    change: dict[str, dict[str, Any]] = Field(default_factory=dict, description="Path -> fields to merge in")


class _File(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tags: dict[str, str] = Field(default_factory=dict, description="tags this catalog adds to the default ones")
    patron_title: str | None = Field(default=None, description="the world's word for a patron")


class _WholeFile(_File):
    paths: list[Path] = Field(min_length=1)


class _ExtendingFile(_File):
    paths: _Extension


@cache
def load_paths(file: str | None = None) -> PathCatalog:
    """The packaged catalog, or a user's catalog file (cached: it is read-only data)."""
    if file is None or file == PACKAGED:
        packaged = resources.files("amphoreus_graph.catalogs").joinpath("paths.yaml")
        text = packaged.read_text(encoding="utf-8")
        return _catalog(_mapping(PACKAGED, text), PACKAGED, FsPath(str(packaged)).parent, frozenset())
    return _read(FsPath(file), frozenset())


def _read(path: FsPath, seen: frozenset[FsPath]) -> PathCatalog:
    """The catalog in a file; `seen`: the files that extend it, down the chain (a cycle is an error)."""
    if not path.is_file():
        raise AmphoreusError(f"{path}: no such Path catalog; expected a YAML file with `paths`")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise AmphoreusError(f"{path}: cannot read it ({exc}); expected a UTF-8 YAML file") from None
    return _catalog(_mapping(str(path), text), str(path), path.parent, seen | {path.resolve()})


def _mapping(source: str, text: str) -> dict[str, Any]:
    try:
        raw = load_yaml(text, source)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "(unknown position)"
        raise AmphoreusError(f"{source}: {where}: invalid YAML; expected a Path catalog") from None
    if not isinstance(raw, dict):
        raise AmphoreusError(f"{source}: (top level): expected a mapping with `paths`")
    return raw


def _catalog(raw: dict[str, Any], source: str, folder: FsPath, seen: frozenset[FsPath]) -> PathCatalog:
    """A catalog file's mapping as a checked catalog (an extension's base read first)."""
    spec = raw.get("paths")
    if spec is not None and not isinstance(spec, list | dict):
        raise AmphoreusError(
            f"{source}: paths: expected a list of Paths, or a mapping with `extends` (and `add`, `drop`, `change`)"
        )
    try:
        if isinstance(spec, dict):
            extending = _ExtendingFile.model_validate(raw)
            said = [*(spec.get("add") or []), *(spec.get("change") or {}).values()]
            return _extended(extending, said, source, folder, seen)
        whole = _WholeFile.model_validate(raw)
    except ValidationError as exc:
        raise AmphoreusError(format_validation_error(source, exc)) from None
    names = [p.name for p in whole.paths]
    if dupes := sorted({n for n in names if names.count(n) > 1}):
        raise AmphoreusError(f"{source}: paths: duplicate Path names {dupes}; expected unique names")
    title = _title(whole.patron_title, "", spec or [])
    return _checked(source, {p.name: p for p in whole.paths}, {**TAGS, **whole.tags}, title)


def _extended(
    file: _ExtendingFile, said: list[Any], source: str, folder: FsPath, seen: frozenset[FsPath]
) -> PathCatalog:
    """The base with this file's changes (`said`: its Path entries as written, for the old `aeon` key)."""
    extension = file.paths
    base = _base(extension.extends, source, folder, seen)
    paths = dict(base.paths)
    for name in extension.drop:
        if name not in paths:
            raise AmphoreusError(
                f"{source}: paths.drop: no Path {name!r} in {base.source}; expected one of {list(paths)}"
            )
        del paths[name]
    for name, fields in extension.change.items():
        paths[name] = _changed(paths, name, fields, source, base.source)
    for index, path in enumerate(extension.add):
        if path.name in paths:
            raise AmphoreusError(
                f"{source}: paths.add[{index}]: Path {path.name!r} is already in the catalog; expected a new name "
                "(`change` alters a Path of the base)"
            )
        paths[path.name] = path
    return _checked(source, paths, {**base.tags, **file.tags}, _title(file.patron_title, base.patron_title, said))


def _base(spec: str, source: str, folder: FsPath, seen: frozenset[FsPath]) -> PathCatalog:
    """What `extends:` names: the packaged catalog, or a catalog file beside this one (never one down the chain)."""
    if spec in (DEFAULT, PACKAGED):
        return load_paths()
    target = inside(f"{source}: paths.extends", folder, folder / spec)
    if target in seen:
        raise AmphoreusError(
            f"{source}: paths.extends: {spec!r} leads back to {target} (a cycle); expected a chain that ends"
        )
    if not target.is_file():
        raise AmphoreusError(
            f"{source}: paths.extends: no such catalog {spec!r} (looked for {target}); expected {DEFAULT!r} or a "
            "YAML file relative to this one"
        )
    return _read(target, seen)


def _changed(paths: dict[str, Path], name: str, fields: dict[str, Any], source: str, base: str) -> Path:
    """A Path of the base with the fields a `change` gives merged in."""
    where = f"paths.change.{name}"
    if name not in paths:
        raise AmphoreusError(f"{source}: {where}: no Path {name!r} in {base}; expected one of {list(paths)}")
    try:
        changed = Path.model_validate(merge_patch(paths[name].model_dump(), new_spelling(fields)))
    except ValidationError as exc:
        raise AmphoreusError(format_validation_error(source, exc, at=("paths", "change", name))) from None
    except ValueError as exc:  # both the old and the new name of a field
        raise AmphoreusError(f"{source}: {where}: {exc}") from None
    if changed.name != name:
        raise AmphoreusError(
            f"{source}: {where}.name: a change cannot rename a Path; expected `drop` of {name!r} and `add` of the "
            "new one"
        )
    return changed


def _title(given: str | None, inherited: str, said: list[Any]) -> str:
    """The catalog's word for a patron: the one it gives, else its base's, else "Aeon" where a Path entry it
    `said` still has `aeon:` (the old name of `patron`, which meant that title), else none."""
    if given is not None:
        return given
    if inherited:
        return inherited
    return OLD_PATRON_TITLE if any(isinstance(e, dict) and OLD_PATRON in e for e in said) else ""


def _checked(source: str, paths: dict[str, Path], tags: dict[str, str], title: str) -> PathCatalog:
    if problem := reference_problem(paths, tags):
        raise AmphoreusError(f"{source}: {problem}")
    return PathCatalog(source=source, paths=paths, tags=tags, patron_title=title)
