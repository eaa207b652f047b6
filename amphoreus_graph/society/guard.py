"""A run's guard: what stops a run cleanly at a round boundary, checkpointed and resumable.

- **Budgets**: `max_calls`, `max_tokens`, `max_cost` (a price per 1,000 tokens in and out, per model, from a
  price table the user gives) over everything the run's model calls have cost so far: its `model_use`, which
  survives a resume, and its call log, which also holds the requests of steps a kill cut short (`counted_use`).
  Resuming with a higher budget goes on from where the run stopped.
- **The circuit breaker**: the share of the agents' turns that a stand-in decided since this process took the
  run up; past `max_fallback_rate` (after at least a round's worth of turns) the model is not really deciding,
  and a run that went on would write samples that only pretend to be the model's.

- **A stop point** (`stop_after`: a cycle and round): the run stops once that round is played. A fork replays its
  parent up to its branch point this way (society/fork.py).

All are checked as a round opens (the `director` node), so a stop leaves every round either done or not
begun. The stop is `RunStopped`: one line, exit 3.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from amphoreus_graph.contracts.bounds import MAX_SEED
from amphoreus_graph.errors import AmphoreusError, RunStopped, format_validation_error
from amphoreus_graph.models.call_log import CallLog
from amphoreus_graph.models.gateway import RoleUse, counted_use


class Price(BaseModel):
    model_config = ConfigDict(extra="forbid")

    input_per_1k: float = Field(ge=0, description="per 1,000 tokens sent")
    output_per_1k: float = Field(ge=0, description="per 1,000 tokens received")


class Limits(BaseModel):
    """What a run may spend, and how many fallbacks it may tolerate."""

    max_calls: int | None = Field(default=None, ge=1, le=MAX_SEED, description="model calls in all roles")
    max_tokens: int | None = Field(default=None, ge=1, le=MAX_SEED, description="tokens in and out in all roles")
    max_cost: float | None = Field(default=None, gt=0, description="in the price table's currency")
    max_fallback_rate: float = Field(default=0.2, ge=0, le=1, description="share of turns a stand-in may decide")
    prices: dict[str, Price] = Field(default_factory=dict, description="model -> its price")
    stop_after: tuple[int, int] | None = Field(default=None, description="stop once this (cycle, round) is played")


def load_prices(path: Path) -> dict[str, Price]:
    """A price table: `{model: {input_per_1k: …, output_per_1k: …}}` in YAML; one line for a bad file."""
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise AmphoreusError(
            f"--prices {path}: cannot read it ({type(exc).__name__}); expected a YAML price table"
        ) from None
    if not isinstance(raw, dict):
        raise AmphoreusError(f"--prices {path}: expected a mapping of model -> {{input_per_1k, output_per_1k}}")
    try:
        return {str(model): Price.model_validate(price) for model, price in raw.items()}
    except ValidationError as exc:
        raise AmphoreusError(format_validation_error(f"--prices {path}", exc)) from None


def spent(model_use: dict[str, Any], log: CallLog | None = None) -> RoleUse:
    """Every role's use added up (with what the call log saw sent, if the run keeps one)."""
    total = RoleUse()
    for use in counted_use(model_use, log.totals() if log is not None else None).values():
        total = total.add(use)
    return total


class Guard:
    """Checked as each round opens; raises RunStopped with the reason and the way on."""

    def __init__(self, limits: Limits, model: str, run_dir: str, calls: CallLog | None = None) -> None:
        self.limits = limits
        self.model = model
        self.run_dir = run_dir
        self.calls = calls
        self._turns_at_start: int | None = None
        self._fallbacks_at_start = 0

    def check(self, stats: dict[str, float], model_use: dict[str, Any], agents: int, opening: tuple[int, int]) -> None:
        """Before round `opening` (cycle, round) begins."""
        if self.limits.stop_after is not None and opening > self.limits.stop_after:
            cycle, round_ = self.limits.stop_after
            raise RunStopped(f"stopped after cycle {cycle} round {round_}, as asked; --resume {self.run_dir} goes on")
        self._check_budget(spent(model_use, self.calls))
        self._check_fallbacks(int(stats.get("turns", 0)), int(stats.get("fallbacks", 0)), agents)

    def cost(self, use: RoleUse) -> float | None:
        price = self.limits.prices.get(self.model)
        if price is None:
            return None
        return use.tokens_in / 1000 * price.input_per_1k + use.tokens_out / 1000 * price.output_per_1k

    def _check_budget(self, use: RoleUse) -> None:
        limits, way_on = self.limits, f"--resume {self.run_dir} with a higher budget goes on"
        if limits.max_calls is not None and use.calls >= limits.max_calls:
            raise RunStopped(f"budget spent: {use.calls} model calls of --max-calls {limits.max_calls}; {way_on}")
        tokens = use.tokens_in + use.tokens_out
        if limits.max_tokens is not None and tokens >= limits.max_tokens:
            raise RunStopped(f"budget spent: {tokens} tokens of --max-tokens {limits.max_tokens}; {way_on}")
        if limits.max_cost is not None:
            cost = self.cost(use)
            if cost is None:
                raise RunStopped(f"--max-cost {limits.max_cost}: no price for {self.model!r}; expected it in --prices")
            if cost >= limits.max_cost:
                raise RunStopped(f"budget spent: cost {cost:.4f} of --max-cost {limits.max_cost}; {way_on}")

    def _check_fallbacks(self, turns: int, fallbacks: int, agents: int) -> None:
        if self._turns_at_start is None:  # the first round this process opens: counting starts here
            self._turns_at_start, self._fallbacks_at_start = turns, fallbacks
            return
        taken, replaced = turns - self._turns_at_start, fallbacks - self._fallbacks_at_start
        if taken >= max(1, agents) and replaced / taken > self.limits.max_fallback_rate:
            raise RunStopped(
                f"the model is not deciding: a stand-in decided {replaced} of the last {taken} turns (more than "
                f"--max-fallback-rate {self.limits.max_fallback_rate}); the run stopped at a round boundary. Fix the "
                f"model or its server, then --resume {self.run_dir}"
            )
