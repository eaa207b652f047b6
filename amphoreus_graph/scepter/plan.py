"""The Scepter's plan: N independent societies expanded from one template, saved as RUN/scepter.json.

Society i of run RUN is named `RUN-s{i:03d}`, lives in RUN/societies/RUN-s{i:03d}/, gets seed base_seed + i and
the i-th scenario of the list (cycled). A society's samples and memory are named after it, so its sample ids
(`RUN-s003/c1/r2/Mira`) are unique across societies and across Scepter runs, and the same plan gives the same
societies whatever engine runs them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, ValidationError

from amphoreus_graph.atomic import write_atomic
from amphoreus_graph.contracts.bounds import MAX_COUNT
from amphoreus_graph.errors import AmphoreusError, format_validation_error
from amphoreus_graph.layout import RunDir
from amphoreus_graph.society.config import RunConfig

Engine = Literal["local", "ray"]
ENGINES: tuple[str, ...] = ("local", "ray")


class ScepterConfig(BaseModel):
    """Everything that defines a Scepter run. `engine`, `address`, `connect_timeout_s`, `ray_cpus` and `parallel`
    say how it runs, not what it produces: a resume may change them."""

    name: str = Field(default="", description="the run's name (default: its directory's); prefixes society names")
    societies: int = Field(default=1, ge=1, le=MAX_COUNT)
    scenarios: list[str] = Field(default_factory=lambda: ["amphoreus"], min_length=1)
    template: RunConfig = Field(description="the settings every society shares; its seed is the base seed")
    engine: Engine = "local"
    address: str | None = Field(
        default=None, description="an existing Ray cluster (ray engine): ray://HEAD:10001, HEAD:6379 or auto"
    )
    connect_timeout_s: float = Field(
        default=60.0, gt=0, le=3600, description="how long to wait for the cluster at `address` before giving up"
    )
    ray_cpus: int | None = Field(
        default=None, ge=1, le=MAX_COUNT, description="CPUs of a Ray started here (ray engine)"
    )
    parallel: int = Field(default=16, ge=1, le=MAX_COUNT, description="societies alive at once in one process")

    @property
    def out(self) -> Path:
        return self.template.out

    @property
    def run_id(self) -> str:
        return self.name or self.template.out.name

    def names(self) -> list[str]:
        width = max(3, len(str(self.societies - 1)))
        return [f"{self.run_id}-s{i:0{width}d}" for i in range(self.societies)]

    def society(self, index: int) -> RunConfig:
        """Society `index` as a run of its own; paths are absolute so a Ray worker finds them from anywhere."""
        t = self.template
        name = self.names()[index]
        return t.model_copy(
            update={
                "scenario": _absolute_if_file(self.scenarios[index % len(self.scenarios)]),
                "seed": t.seed + index,
                "out": RunDir(self.out.absolute()).society(name).root,
                "memory_dir": t.memory_dir.absolute() / name if t.memory_dir is not None else None,
                "seeds_dir": _absolute_if_file(t.seeds_dir) if t.seeds_dir is not None else None,
            }
        )

    def society_configs(self) -> list[RunConfig]:
        return [self.society(i) for i in range(self.societies)]

    def save(self) -> None:
        self.out.mkdir(parents=True, exist_ok=True)
        write_atomic(RunDir(self.out).plan, self.model_dump_json(indent=2) + "\n")


def is_scepter_run(run: Path) -> bool:
    return RunDir(run).plan.is_file()


def load_plan(run: Path) -> ScepterConfig:
    """Reopen a Scepter run from its directory (the directory may have moved: `out` follows it)."""
    path = RunDir(run).plan
    if not path.is_file():
        raise AmphoreusError(f"{path}: no such file; expected a run directory written by `amphoreus simulate`")
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        plan = ScepterConfig.model_validate(raw)
    except ValidationError as exc:
        raise AmphoreusError(format_validation_error(str(path), exc)) from None
    except json.JSONDecodeError as exc:
        raise AmphoreusError(f"{path}: not JSON ({exc.msg} at line {exc.lineno})") from None
    return plan.model_copy(update={"template": plan.template.model_copy(update={"out": run})})


def check_engine(engine: str) -> Engine:
    if engine not in ENGINES:
        raise AmphoreusError(f"--engine {engine!r}: expected one of {', '.join(ENGINES)}")
    return engine  # type: ignore[return-value]


def _absolute_if_file(value: str) -> str:
    """A scenario or seeds path that exists relative to here becomes absolute; a packaged name stays as is."""
    path = Path(value)
    return str(path.absolute()) if path.exists() else value
