"""Path catalogs: value systems as data, loaded and checked once.

A Path rates *tags* (what acts are about: violence, care, inquiry…), never a world's actions one by one, so
one catalog serves every world: an action's affinity for a Path is the mean of the Path's ratings of the
action's tags (a tag it does not rate counts 0; an action without tags is neutral), unless the world
overrides it for that Path. The packaged catalog has the eighteen Paths; a user may load their own (a YAML
file of the same shape, named by a scenario's `paths:` key), with the same validation and one-line errors.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from pathlib import Path as FsPath

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from amphoreus_graph.catalogs.scenario_files import load_yaml
from amphoreus_graph.contracts.actions import TAGS, ActionBrief
from amphoreus_graph.errors import AmphoreusError, format_validation_error

PACKAGED = "packaged"


class Path(BaseModel):
    """One Path: its Aeon, what it holds true, how much it favours each kind of act, and how it speaks."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1)
    aeon: str = ""
    summary: str
    tenets: list[str] = Field(min_length=1)
    tags: dict[str, float] = Field(description="rating of each kind of act, in [-1, 1]; unrated tags count 0")
    lexicon: list[str] = Field(min_length=4)
    voice: list[str] = Field(
        default_factory=list,
        description="plain lines in the Path's voice, in no Path's words: the Path judge's prototypes (optional)",
    )
    opposed: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _ratings_in_range(self) -> Path:
        bad = {tag: v for tag, v in self.tags.items() if not -1.0 <= v <= 1.0}
        if bad:
            raise ValueError(f"tag ratings must lie in [-1, 1], got {bad}")
        return self

    def rating(self, tag: str) -> float:
        return self.tags.get(tag, 0.0)

    def affinity(self, action: ActionBrief) -> float:
        """How much this Path favours an action: the world's override for it, else the mean of its tags."""
        if self.name in action.affinity:
            return action.affinity[self.name]
        if not action.tags:
            return 0.0
        return sum(self.rating(tag) for tag in action.tags) / len(action.tags)

    def speaking_words(self) -> list[str]:
        """The half of the lexicon an offline speaker draws on (every other word, from the first). No Path
        judge hears any of the lexicon (`path_words.py` masks it), so the speaker earns nothing by them."""
        return self.lexicon[0::2]

    def favoured(self, n: int = 3) -> list[str]:
        """The n kinds of act this Path rates highest."""
        return sorted(self.tags, key=lambda t: (-self.tags[t], t))[:n]

    def shunned(self, n: int = 3) -> list[str]:
        """The n kinds of act this Path rates lowest."""
        return sorted(self.tags, key=lambda t: (self.tags[t], t))[:n]


class PathCatalog(BaseModel):
    """All Paths by name, and the tags they may rate: opposed Paths must exist, rated tags must be known."""

    model_config = ConfigDict(frozen=True)

    source: str = PACKAGED
    paths: dict[str, Path]
    tags: dict[str, str] = Field(default_factory=lambda: dict(TAGS), description="tag -> what it means")

    @model_validator(mode="after")
    def _references_exist(self) -> PathCatalog:
        for path in self.paths.values():
            unknown = [p for p in path.opposed if p not in self.paths]
            if unknown:
                raise ValueError(f"Path {path.name!r} opposes unknown Paths {unknown}")
            strange = sorted(set(path.tags) - set(self.tags))
            if strange:
                raise ValueError(
                    f"Path {path.name!r} rates unknown tags {strange}; expected tags from {sorted(self.tags)}"
                )
        return self

    def __getitem__(self, name: str) -> Path:
        return self.paths[name]

    def __contains__(self, name: object) -> bool:
        return name in self.paths

    def names(self) -> list[str]:
        return list(self.paths)


class _CatalogFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tags: dict[str, str] = Field(default_factory=dict, description="tags this catalog adds to the default ones")
    paths: list[Path] = Field(min_length=1)


def _catalog(source: str, text: str) -> PathCatalog:
    try:
        raw = load_yaml(text, source)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "(unknown position)"
        raise AmphoreusError(f"{source}: {where}: invalid YAML; expected a Path catalog") from None
    if not isinstance(raw, dict):
        raise AmphoreusError(f"{source}: (top level): expected a mapping with a list of `paths`")
    try:
        parsed = _CatalogFile.model_validate(raw)
        names = [p.name for p in parsed.paths]
        if dupes := sorted({n for n in names if names.count(n) > 1}):
            raise AmphoreusError(f"{source}: paths: duplicate Path names {dupes}; expected unique names")
        return PathCatalog(source=source, paths={p.name: p for p in parsed.paths}, tags={**TAGS, **parsed.tags})
    except ValidationError as exc:
        raise AmphoreusError(format_validation_error(source, exc)) from None


@cache
def load_paths(file: str | None = None) -> PathCatalog:
    """The packaged catalog, or a user's catalog file (cached: it is read-only data)."""
    if file is None or file == PACKAGED:
        packaged = resources.files("amphoreus_graph.catalogs").joinpath("paths.yaml")
        return _catalog(PACKAGED, packaged.read_text(encoding="utf-8")).model_copy(update={"source": PACKAGED})
    path = FsPath(file)
    if not path.is_file():
        raise AmphoreusError(f"{path}: no such Path catalog; expected a YAML file with a list of `paths`")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise AmphoreusError(f"{path}: cannot read it ({exc}); expected a UTF-8 YAML file") from None
    return _catalog(str(path), text)
