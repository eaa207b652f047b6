"""Benchmark items: one YAML per task under bench/data/ for the default scenario, generated for any other, and
validated by the task's pydantic item model.

A broken file is one error line (file, item index and field, what was expected), like scenarios. A generated
item that does not validate in its world is skipped, with the reason, like an item the world cannot pose.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from typing import Any, Generic, Literal, TypeVar, get_args

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model, model_validator

from amphoreus_graph.bench.generate import generated
from amphoreus_graph.bench.subjects import DEFAULT_SCENARIO
from amphoreus_graph.bench.tasks.base import Skipped
from amphoreus_graph.catalogs.paths import load_paths
from amphoreus_graph.errors import AmphoreusError, format_validation_error

Split = Literal["dev", "heldout"]
SplitChoice = Literal[Split, "all"]
SPLITS: tuple[str, ...] = get_args(SplitChoice)


class _Item(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    split: Split


def _known_path(name: str) -> str:
    if name not in load_paths():
        raise ValueError(f"unknown Path {name!r}")
    return name


class ChoiceOption(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str
    action: str = Field(min_length=1, description="an action of the world the item is posed in")
    target: str | None = None
    text: str = Field(min_length=1)

    @model_validator(mode="after")
    def _path_exists(self) -> ChoiceOption:
        _known_path(self.path)
        return self


class ChoiceItem(_Item):
    """A dilemma whose options each embody one Path; `path` is whose Path the item tests."""

    path: str
    situation: str
    options: list[ChoiceOption] = Field(min_length=2)

    @model_validator(mode="after")
    def _well_formed(self) -> ChoiceItem:
        _known_path(self.path)
        if sum(o.path == self.path for o in self.options) != 1:
            raise ValueError(f"exactly one option must embody {self.path!r}")
        if len({o.action for o in self.options}) != len(self.options):
            raise ValueError("options must use distinct actions, so a Decision names exactly one")
        return self

    def own_option(self) -> ChoiceOption:
        return next(o for o in self.options if o.path == self.path)


class VoiceItem(_Item):
    """An open situation every Path's subject answers in its own words."""

    situation: str = Field(min_length=1)


class EruditionItem(_Item):
    """A question answerable only by combining one of the subject's memories with one world fact."""

    path: str
    memories: list[str] = Field(min_length=1)
    facts: list[str] = Field(min_length=1)
    question: str
    answer: str = Field(min_length=1)

    @model_validator(mode="after")
    def _answer_needs_both(self) -> EruditionItem:
        _known_path(self.path)
        if any(self.answer.lower() in m.lower() for m in self.memories):
            raise ValueError("the answer must not appear in a memory: the question needs a world fact too")
        return self


class SteadfastItem(_Item):
    """An adversary presses the subject of `path` over len(pressures) turns to walk `tempter` instead."""

    path: str
    tempter: str
    pressures: list[str] = Field(min_length=1)

    @model_validator(mode="after")
    def _paths_exist(self) -> SteadfastItem:
        _known_path(self.path)
        _known_path(self.tempter)
        if self.path == self.tempter:
            raise ValueError("the tempter's Path must differ from the subject's")
        return self


ItemT = TypeVar("ItemT", bound=_Item)


@dataclass(frozen=True)
class ItemSet(Generic[ItemT]):
    """A task's items in one world, and those the world could not pose."""

    items: list[ItemT]
    skipped: list[Skipped]

    def in_split(self, split: str) -> ItemSet[ItemT]:
        def keep(item_split: str) -> bool:
            return split == "all" or item_split == split

        return ItemSet([i for i in self.items if keep(i.split)], [s for s in self.skipped if keep(s.split)])


def load_items(task: str, model: type[ItemT], split: str = "all", scenario: str = DEFAULT_SCENARIO) -> list[ItemT]:
    """The task's items in `split` (dev, heldout or all) for a scenario's world."""
    return item_set(task, model, split, scenario).items


def item_set(task: str, model: type[ItemT], split: str = "all", scenario: str = DEFAULT_SCENARIO) -> ItemSet[ItemT]:
    """The task's items in `split` and those skipped: the packaged file for the default scenario, else the
    same generator run on the scenario's world."""
    if scenario == DEFAULT_SCENARIO:
        source = resources.files("amphoreus_graph.bench.data").joinpath(f"{task}.yaml")
        found = parse_item_file(source.read_text(encoding="utf-8"), f"amphoreus_graph/bench/data/{task}.yaml", model)
        return found.in_split(split)
    made = generated(task, scenario)
    items, skipped = [], list(made.skipped)
    for raw in made.items:
        try:
            items.append(model.model_validate(raw))
        except ValidationError as exc:
            reason = format_validation_error(f"{scenario} ({task})", exc)
            skipped.append(Skipped(id=str(raw["id"]), split=str(raw["split"]), reason=reason))
    return ItemSet(items, skipped).in_split(split)


def parse_items(text: str, label: str, model: type[ItemT]) -> list[ItemT]:
    """Validate an item file's text; any problem is one AmphoreusError line naming `label` and the field."""
    return parse_item_file(text, label, model).items


def parse_item_file(text: str, label: str, model: type[ItemT]) -> ItemSet[ItemT]:
    """An item file's items and the generator's notes on those it skipped (`skipped`, if any)."""
    fields: dict[str, Any] = {"items": (list[model], ...), "skipped": (list[Skipped], [])}  # type: ignore[valid-type]
    item_file = create_model(f"{model.__name__}File", **fields)
    try:
        parsed: Any = item_file.model_validate(yaml.safe_load(text))
    except yaml.YAMLError as exc:
        raise AmphoreusError(f"{label}: not valid YAML ({str(exc).splitlines()[0]})") from None
    except ValidationError as exc:
        raise AmphoreusError(format_validation_error(label, exc)) from None
    ids = [i.id for i in parsed.items]
    if len(set(ids)) != len(ids):
        raise AmphoreusError(f"{label}: items: ids must be unique")
    return ItemSet(parsed.items, parsed.skipped)
