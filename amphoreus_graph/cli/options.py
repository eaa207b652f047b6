"""CLI options stated by the models they fill: a field's help and bounds become its option's, and its default the
parameter's, so a default or a range lives in one place (the model) and the CLI cannot drift from the library or
Studio."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Annotated, Any, TypeVar

import typer
from annotated_types import Ge, Gt, Le, Lt
from pydantic import BaseModel, ValidationError

from amphoreus_graph.errors import AmphoreusError

# typer has no open bounds: gt/lt become min/max, and the model itself refuses the bound (one line, see simulate)
F = TypeVar("F", bound=Callable[..., Any])
M = TypeVar("M", bound=BaseModel)
_BOUNDS = {Ge: ("min", "ge"), Gt: ("min", "gt"), Le: ("max", "le"), Lt: ("max", "lt")}


def field_option(model: type[BaseModel], name: str, *decls: str) -> Any:
    """A typer Option for `model`'s field `name`: its description as the help, its ge/gt/le/lt as min/max; `decls`
    name it otherwise (`-k`, `--flag/--no-flag`)."""
    info = model.model_fields[name]
    bounds: dict[str, Any] = {}
    for constraint in info.metadata:
        if (found := _BOUNDS.get(type(constraint))) is not None:
            side, attribute = found
            bounds[side] = getattr(constraint, attribute)
    return typer.Option(*decls, help=info.description, **bounds)


def default(model: type[BaseModel], name: str) -> Any:
    """The field's default, as the CLI parameter's."""
    return model.model_fields[name].get_default(call_default_factory=True)


def model_options(
    model: type[BaseModel], fields: dict[str, str], into: str, decls: dict[str, tuple[str, ...]] | None = None
) -> Callable[[F], F]:
    """Give a typer command one option per model field (`fields`: option name → field name), named, typed,
    defaulted, helped and bounded by the field, and hand the command their values as one dict (field → value) in
    its parameter `into`; in `--help` they stand where `into` is declared. The options are the model's: a field
    added to the map is a CLI option, nothing more. `decls` gives an option other names (option → typer's
    param decls)."""
    decls = decls or {}

    def decorate(command: F) -> F:
        signature = inspect.signature(command, eval_str=True)  # the command's own annotations, resolved
        names = list(signature.parameters)
        at = names.index(into)
        added = [
            inspect.Parameter(
                option,
                inspect.Parameter.POSITIONAL_OR_KEYWORD,  # typer passes every option by name
                default=default(model, field),
                annotation=Annotated[
                    model.model_fields[field].annotation, field_option(model, field, *decls.get(option, ()))
                ],
            )
            for option, field in fields.items()
        ]

        @functools.wraps(command)
        def with_fields(*args: Any, **kwargs: Any) -> Any:
            given = {field: kwargs.pop(option) for option, field in fields.items()}
            return command(*args, **kwargs, **{into: given})

        ours = list(signature.parameters.values())
        parameters = [*ours[:at], *added, *ours[at + 1 :]]
        with_fields.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
        hints = {p.name: p.annotation for p in parameters}
        with_fields.__annotations__ = hints | {"return": signature.return_annotation}
        return with_fields  # type: ignore[return-value]

    return decorate


def validated(model: type[M], values: dict[str, Any]) -> M:
    """The model from a command's option values (None: the field's default); a value it refuses is one line
    naming the option."""
    try:
        return model.model_validate({name: value for name, value in values.items() if value is not None})
    except ValidationError as exc:
        first = exc.errors()[0]
        raise AmphoreusError(f"--{str(first['loc'][0]).replace('_', '-')}: {first['msg']}") from None
