"""Benchmark items: one YAML per task committed beside the default scenario (its world's bench/), generated for any
other (except the hand-written, world-neutral ones under bench/data/), and validated by the task's pydantic item
model.

A broken file is one error line (file, item index and field, what was expected), like scenarios. A generated
item that does not validate in its world is skipped, with the reason, like an item the world cannot pose.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Generic, Literal, TypeVar, get_args

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model, model_validator

from amphoreus_graph.bench.generate import generated
from amphoreus_graph.bench.subjects import DEFAULT_SCENARIO, default_items_dir
from amphoreus_graph.bench.tasks.base import BenchSettings, Skipped
from amphoreus_graph.catalogs.paths import load_paths
from amphoreus_graph.errors import AmphoreusError, format_validation_error

HANDWRITTEN = frozenset({"path_choice"})  # world-neutral items, written by hand: the same file in every world
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
    """One answer to a dilemma, in free text, and the Path it embodies (never shown to the one who chooses)."""

    model_config = ConfigDict(extra="forbid")

    path: str
    text: str = Field(min_length=1)

    @model_validator(mode="after")
    def _path_exists(self) -> ChoiceOption:
        _known_path(self.path)
        return self


class ChoiceItem(_Item):
    """A dilemma whose free-text options each embody a different Path; `path` is whose Path the item tests."""

    path: str
    situation: str = Field(min_length=1)
    options: list[ChoiceOption] = Field(min_length=2, max_length=26, description="lettered A, B… when posed")

    @model_validator(mode="after")
    def _well_formed(self) -> ChoiceItem:
        _known_path(self.path)
        if sum(o.path == self.path for o in self.options) != 1:
            raise ValueError(f"exactly one option must embody {self.path!r}")
        if len({o.path for o in self.options}) != len(self.options):
            raise ValueError("each option must embody a different Path, so the faithful answer is unambiguous")
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
    return packaged_items(task, model, split, scenario).items


def item_set(task: str, model: type[ItemT], settings: BenchSettings) -> ItemSet[ItemT]:
    """The items a benchmark run poses: the user's file (`--items`, all of it), else the packaged ones."""
    if settings.items is not None:
        return ItemSet(read_user_items(settings.items, model), [])
    return packaged_items(task, model, settings.split, settings.scenario)


def packaged_items(
    task: str, model: type[ItemT], split: str = "all", scenario: str = DEFAULT_SCENARIO
) -> ItemSet[ItemT]:
    """The task's items in `split` and those skipped: the packaged file for the default scenario (and for a
    hand-written task in any world), else the same generator run on the scenario's world."""
    if task in HANDWRITTEN:
        source = resources.files("amphoreus_graph.bench.data").joinpath(f"{task}.yaml")
        found = parse_item_file(source.read_text(encoding="utf-8"), f"amphoreus_graph/bench/data/{task}.yaml", model)
        return found.in_split(split)
    if scenario == DEFAULT_SCENARIO:
        committed = default_items_dir() / f"{task}.yaml"
        return parse_item_file(committed.read_text(encoding="utf-8"), str(committed), model).in_split(split)
    made = generated(task, scenario)
    items, skipped = [], list(made.skipped)
    for raw in made.items:
        try:
            items.append(model.model_validate(raw))
        except ValidationError as exc:
            reason = format_validation_error(f"{scenario} ({task})", exc)
            skipped.append(Skipped(id=str(raw["id"]), split=str(raw["split"]), reason=reason))
    return ItemSet(items, skipped).in_split(split)


def read_user_items(path: Path, model: type[ItemT]) -> list[ItemT]:
    """A user's items: JSON Lines (one item a line) or YAML (an `items:` list, as the packaged files). `split`
    may be left out (dev). Any problem is one AmphoreusError line: file, line or item, field, what was expected."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise AmphoreusError(
            f"--items {path}: cannot read it ({exc.__class__.__name__}); expected a JSONL or YAML file"
        ) from None
    if path.suffix.lower() in {".yaml", ".yml"}:
        raw = _load_yaml(text, str(path))
        if isinstance(raw, dict) and isinstance(raw.get("items"), list):
            raw["items"] = [{"split": "dev", **i} if isinstance(i, dict) else i for i in raw["items"]]
        items = _validate_item_file(raw, str(path), model).items
    else:
        items = [_json_item(line, f"{path}:{n}", model) for n, line in enumerate(text.splitlines(), 1) if line.strip()]
    if not items:
        raise AmphoreusError(f"{path}: no items; expected one {model.__name__} a line (JSONL) or an items: list")
    ids = [i.id for i in items]
    if len(set(ids)) != len(ids):
        raise AmphoreusError(f"{path}: id: ids must be unique; {sorted({i for i in ids if ids.count(i) > 1})[:3]}")
    return items


def _json_item(line: str, label: str, model: type[ItemT]) -> ItemT:
    try:
        raw = json.loads(line)
    except json.JSONDecodeError as exc:
        raise AmphoreusError(f"{label}: not valid JSON ({exc.msg}); expected one item object a line") from None
    if not isinstance(raw, dict):
        raise AmphoreusError(f"{label}: expected a JSON object, got {type(raw).__name__}")
    try:
        return model.model_validate({"split": "dev", **raw})
    except ValidationError as exc:
        raise AmphoreusError(format_validation_error(label, exc)) from None


def parse_items(text: str, label: str, model: type[ItemT]) -> list[ItemT]:
    """Validate an item file's text; any problem is one AmphoreusError line naming `label` and the field."""
    return parse_item_file(text, label, model).items


def parse_item_file(text: str, label: str, model: type[ItemT]) -> ItemSet[ItemT]:
    """An item file's items and the generator's notes on those it skipped (`skipped`, if any)."""
    return _validate_item_file(_load_yaml(text, label), label, model)


def _load_yaml(text: str, label: str) -> Any:
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise AmphoreusError(f"{label}: not valid YAML ({str(exc).splitlines()[0]})") from None


def _validate_item_file(raw: Any, label: str, model: type[ItemT]) -> ItemSet[ItemT]:
    fields: dict[str, Any] = {"items": (list[model], ...), "skipped": (list[Skipped], [])}  # type: ignore[valid-type]
    item_file = create_model(f"{model.__name__}File", **fields)
    try:
        parsed: Any = item_file.model_validate(raw)
    except ValidationError as exc:
        raise AmphoreusError(format_validation_error(label, exc)) from None
    ids = [i.id for i in parsed.items]
    if len(set(ids)) != len(ids):
        raise AmphoreusError(f"{label}: items: ids must be unique")
    return ItemSet(parsed.items, parsed.skipped)
