"""The kit's shared terms: what an objective's states and transitions are called, whom an effect touches, and a
number that may be an expression. Used by the effect vocabulary (effects.py) and the world's schema (schema.py)."""

from __future__ import annotations

from enum import StrEnum
from functools import partial
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, PlainValidator

from amphoreus_graph.worlds.kit.expr import Expr, ExprError


def _parses(text: str) -> str:
    try:
        Expr.parse(text)
    except ExprError as error:
        raise ValueError(str(error)) from None
    return text


def _amount(value: Any, *, positive: bool = False) -> float | str:
    if isinstance(value, int | float) and not isinstance(value, bool):
        if positive and value <= 0:
            raise ValueError(f"{value} is not above 0; expected a number > 0 or an expression")
        return float(value)
    if isinstance(value, str):
        return _parses(value)
    raise ValueError(f"expected a number or an expression, got {type(value).__name__}")


# An expression of the kit's language (worlds/kit/expr.py): its syntax is checked here, its names when the
# world's cross-references are (checks.py).
Formula = Annotated[str, AfterValidator(_parses)]
# A number, or an expression computing one when the effect applies.
Amount = Annotated[float | str, PlainValidator(_amount)]
PositiveAmount = Annotated[float | str, PlainValidator(partial(_amount, positive=True))]


class Strict(BaseModel):
    """A YAML shape: unknown keys are an error (one line naming them), and a parsed value never changes."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class Status(StrEnum):
    """Where an objective stands: free (waiting where it is), held (carried by an agent), lit (claimed in
    place), doused (lit once, put out: it may be relit), delivered (brought home: done), lost (gone)."""

    FREE = "free"
    HELD = "held"
    LIT = "lit"
    DOUSED = "doused"
    DELIVERED = "delivered"
    LOST = "lost"


class Transition(StrEnum):
    """What can happen to an objective; each may declare its own text and effects (`transitions:`)."""

    SOUGHT = "sought"  # a claim that failed its chance
    CLAIMED = "claimed"  # a carried objective taken into hand (-> held)
    LIT = "lit"  # an in-place objective claimed for the first time (-> lit)
    RELIT = "relit"  # a doused one claimed again (-> lit)
    CONTESTED = "contested"  # each claimant who lost a contest (several claimed it in one round)
    DELIVERED = "delivered"  # a held objective brought to where it belongs (-> delivered)
    DOUSED = "doused"  # a lit one put out (-> doused)
    LOST = "lost"  # gone for the rest of the cycle (-> lost)
    TAKEN = "taken"  # wrested from its holder (-> held by the taker)
    DROPPED = "dropped"  # its holder fell and it lies where they fell (-> free)


class Who(StrEnum):
    """Whom an effect touches: the actor, the decision's target agent, the others at the actor's place,
    everyone there (actor included), or every standing agent."""

    ACTOR = "actor"
    TARGET = "target"
    OTHERS_HERE = "others_here"
    EVERYONE_HERE = "everyone_here"
    ALL = "all"
