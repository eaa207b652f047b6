"""What a Path is, and a catalog of them: value systems as data, checked once (`paths.py` reads them from files).

A Path rates *tags* (what acts are about: violence, care, inquiry…), never a world's actions one by one, so
one catalog serves every world: an action's affinity for a Path is the mean of the Path's ratings of the
action's tags (a tag it does not rate counts 0; an action without tags is neutral), unless the world
overrides it for that Path. A Path may have a patron (a figure its followers look to); the catalog may give
its world's word for one (`patron_title`, e.g. "Aeon"). Both are optional: a world without patrons has none.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from amphoreus_graph.contracts.actions import TAGS, ActionBrief

PACKAGED = "packaged"
OLD_PATRON = "aeon"  # what `patron` was called before worlds other than the default one had catalogs
OLD_PATRON_TITLE = "Aeon"  # the title a catalog that still says `aeon:` meant


def new_spelling(entry: object) -> object:
    """A Path's fields with the old `aeon` key read as `patron` (both at once is ambiguous: a ValueError)."""
    if not isinstance(entry, Mapping) or OLD_PATRON not in entry:
        return entry
    if "patron" in entry:
        raise ValueError(f"both `patron` and `{OLD_PATRON}` (its old name) are given; expected `patron` only")
    return {("patron" if key == OLD_PATRON else key): value for key, value in entry.items()}


class Path(BaseModel):
    """One Path: its patron (if any), what it holds true, how much it favours each kind of act, how it speaks."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1)
    patron: str = Field(default="", description="the figure the Path's followers look to (optional; old name `aeon`)")
    summary: str
    tenets: list[str] = Field(min_length=1)
    tags: dict[str, float] = Field(description="rating of each kind of act, in [-1, 1]; unrated tags count 0")
    lexicon: list[str] = Field(min_length=4)
    voice: list[str] = Field(
        default_factory=list,
        description="plain lines in the Path's voice, in no Path's words: the Path judge's prototypes (optional)",
    )
    opposed: list[str] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _old_patron_key(cls, data: Any) -> Any:
        return new_spelling(data)

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


def reference_problem(paths: Mapping[str, Path], tags: Mapping[str, str]) -> str | None:
    """What is wrong with the Paths' references, as `field: problem` (None: nothing): an opposed Path the
    catalog lacks, or a rated tag it does not know."""
    for path in paths.values():
        if missing := [p for p in path.opposed if p not in paths]:
            return (
                f"paths: {path.name}: opposed: no Path {', '.join(map(repr, missing))} in the catalog; expected "
                f"Paths of the catalog ({', '.join(paths)}), or that name taken out of `opposed`"
            )
        if strange := sorted(set(path.tags) - set(tags)):
            return f"paths: {path.name}: tags: unknown tags {strange}; expected tags from {sorted(tags)}"
    return None


class PathCatalog(BaseModel):
    """All Paths by name, the tags they may rate, and the world's word for a patron (if it has one)."""

    model_config = ConfigDict(frozen=True)

    source: str = PACKAGED
    paths: dict[str, Path]
    tags: dict[str, str] = Field(default_factory=lambda: dict(TAGS), description="tag -> what it means")
    patron_title: str = Field(default="", description='the world\'s word for a patron ("Aeon"); optional')

    @model_validator(mode="after")
    def _references_exist(self) -> PathCatalog:
        if problem := reference_problem(self.paths, self.tags):
            raise ValueError(problem)
        return self

    def __getitem__(self, name: str) -> Path:
        return self.paths[name]

    def __contains__(self, name: object) -> bool:
        return name in self.paths

    def names(self) -> list[str]:
        return list(self.paths)

    def same_paths(self, other: PathCatalog) -> bool:
        """Whether the two hold the same Paths, field for field, whatever their patrons (a world naming its own
        patrons over the packaged Paths walks those Paths)."""
        return self.names() == other.names() and all(
            p.model_copy(update={"patron": ""}) == other[p.name].model_copy(update={"patron": ""})
            for p in self.paths.values()
        )

    def patron_of(self, name: str) -> str:
        """The Path's patron as a prompt names it ("Aeon X" with a title, "patron: X" without); "" for none."""
        patron = self[name].patron
        if not patron:
            return ""
        return f"{self.patron_title} {patron}" if self.patron_title else f"patron: {patron}"
