"""CLI options stated by the models they fill: a field's help and bounds become its option's, and its default the
parameter's, so a default or a range lives in one place (the model) and the CLI cannot drift from the library or
Studio."""

from __future__ import annotations

from typing import Any

import typer
from annotated_types import Ge, Gt, Le, Lt
from pydantic import BaseModel

# typer has no open bounds: gt/lt become min/max, and the model itself refuses the bound (one line, see simulate)
_BOUNDS = {Ge: ("min", "ge"), Gt: ("min", "gt"), Le: ("max", "le"), Lt: ("max", "lt")}


def field_option(model: type[BaseModel], name: str, *flags: str, help: str | None = None) -> Any:
    """A typer Option for `model`'s field `name`: its description as the help (unless `help` says it for the CLI),
    its ge/gt/le/lt as min/max."""
    info = model.model_fields[name]
    bounds: dict[str, Any] = {}
    for constraint in info.metadata:
        if (found := _BOUNDS.get(type(constraint))) is not None:
            side, attribute = found
            bounds[side] = getattr(constraint, attribute)
    return typer.Option(*flags, help=help or info.description, **bounds)


def default(model: type[BaseModel], name: str) -> Any:
    """The field's default, as the CLI parameter's."""
    return model.model_fields[name].get_default(call_default_factory=True)
