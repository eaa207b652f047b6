"""The `game_master:` block of a prose world's scenario: the world told in prose, and the model that tells it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from amphoreus_graph.errors import ScenarioError, format_validation_error

# `--model` values that name a policy rather than a chat model: a game master needs a model that writes JSON.
_POLICIES = ("offline", "random", "keywords", "single-path:", "pes:")


class GameMasterConfig(BaseModel):
    """How the game master resolves a round (docs/worlds-gm.md)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    prose: str = Field(min_length=1, description="the world in prose: what matters here, how things tend to go")
    model: str = Field(description="a chat model as --model names one: provider:model, or scripted:... offline")
    base_url: str | None = Field(default=None, description="an OpenAI-compatible server for a bare model name")
    temperature: float | None = Field(default=None, ge=0, le=2)
    max_events: int = Field(default=24, ge=1, le=200, description="events one reply may narrate")
    max_changes: int = Field(default=24, ge=0, le=200, description="state changes one reply may make")
    timeout_s: float = Field(default=60.0, gt=0, description="one call's time limit")
    attempts: int = Field(default=3, ge=1, le=10, description="calls per request before the reply is given up")

    @field_validator("prose")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("blank prose; expected the world told in a few paragraphs")
        return value.strip()

    @field_validator("model")
    @classmethod
    def _chat_model(cls, value: str) -> str:
        """The spec's form only: whether the provider is installed is asked when the first round needs it, so a
        run's files stay readable where it is not."""
        if value.startswith(_POLICIES) or not value.strip():
            raise ValueError(f"{value!r} is not a chat model; expected provider:model (e.g. openai:gpt-4o-mini)")
        return value

    @model_validator(mode="after")
    def _provider(self) -> GameMasterConfig:
        if ":" not in self.model and self.base_url is None:
            raise ValueError(
                f"model {self.model!r} names no provider; expected provider:model, or a base_url to serve it"
            )
        return self


class _Block(BaseModel):
    """The scenario's mapping as far as the game master reads it (the rest is the kit's)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    game_master: GameMasterConfig


def read_config(raw: dict[str, Any], source: Path) -> GameMasterConfig:
    """The `game_master:` block, validated; any problem is one ScenarioError line (file, field, expected)."""
    if not isinstance(raw.get("game_master"), dict):
        raise ScenarioError(f"{source}: game_master: missing; expected a mapping with prose and model")
    try:
        return _Block.model_validate(raw).game_master
    except ValidationError as exc:
        raise ScenarioError(format_validation_error(str(source), exc)) from None
