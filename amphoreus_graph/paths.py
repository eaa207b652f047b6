"""The Path catalog: value systems as data (amphoreus_graph/data/paths.yaml), loaded and checked once."""

from __future__ import annotations

from functools import cache
from importlib import resources

import yaml
from pydantic import BaseModel, Field, ValidationError, model_validator

from amphoreus_graph.actions import Action
from amphoreus_graph.errors import AmphoreusError, format_validation_error


class Path(BaseModel):
    """One Path: its Aeon, what it holds true, how much it favours each action, and how it speaks."""

    name: str
    aeon: str
    summary: str
    tenets: list[str] = Field(min_length=1)
    affinity: dict[Action, float]
    lexicon: list[str] = Field(min_length=4)
    opposed: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _every_action_rated(self) -> Path:
        missing = [a.value for a in Action if a not in self.affinity]
        if missing:
            raise ValueError(f"affinity is missing actions {missing}")
        bad = {a.value: v for a, v in self.affinity.items() if not -1.0 <= v <= 1.0}
        if bad:
            raise ValueError(f"affinities must lie in [-1, 1], got {bad}")
        return self

    def favoured(self, n: int = 3) -> list[Action]:
        """The n actions this Path rates highest."""
        return sorted(self.affinity, key=lambda a: -self.affinity[a])[:n]

    def shunned(self, n: int = 3) -> list[Action]:
        """The n actions this Path rates lowest."""
        return sorted(self.affinity, key=lambda a: self.affinity[a])[:n]


class PathCatalog(BaseModel):
    """All Paths by name; opposed Paths must exist in the catalog."""

    paths: dict[str, Path]

    @model_validator(mode="after")
    def _opposed_exist(self) -> PathCatalog:
        for path in self.paths.values():
            unknown = [p for p in path.opposed if p not in self.paths]
            if unknown:
                raise ValueError(f"Path {path.name!r} opposes unknown Paths {unknown}")
        return self

    def __getitem__(self, name: str) -> Path:
        return self.paths[name]

    def __contains__(self, name: object) -> bool:
        return name in self.paths

    def names(self) -> list[str]:
        return list(self.paths)


@cache
def load_paths() -> PathCatalog:
    """Load the packaged Path catalog (cached: it is read-only data)."""
    source = resources.files("amphoreus_graph.data").joinpath("paths.yaml")
    raw = yaml.safe_load(source.read_text(encoding="utf-8"))
    entries = raw.get("paths", []) if isinstance(raw, dict) else []
    try:
        return PathCatalog(paths={entry["name"]: Path.model_validate(entry) for entry in entries})
    except ValidationError as exc:
        raise AmphoreusError(format_validation_error(str(source), exc)) from None
