"""The benchmark as a LangGraph graph (Studio: `benchmark`):

    START ─Send×models→ benchmark_model → write_leaderboard → END

Every model is benchmarked in parallel, its tasks one after another. Custom stream events report progress:
`task_started` and `task_done` (with the task's score) per model and task, `model_done` with the model's PES,
and `leaderboard_written` with the ranking.
"""

from __future__ import annotations

import operator
from pathlib import Path
from typing import Annotated, Any

from langgraph.config import get_stream_writer
from langgraph.graph import END, START, StateGraph
from langgraph.types import Send
from pydantic import BaseModel, Field
from typing_extensions import TypedDict  # pydantic needs typing_extensions' TypedDict on 3.11

from amphoreus_graph.bench.items import SplitChoice
from amphoreus_graph.bench.leaderboard import PACKAGED_TASKS, bench_model, benchable, task_names, write_leaderboard
from amphoreus_graph.bench.subjects import DEFAULT_SCENARIO
from amphoreus_graph.bench.tasks.base import BenchSettings
from amphoreus_graph.contracts.bounds import Seed
from amphoreus_graph.contracts.events import LeaderboardWritten, ModelDone


class BenchmarkInput(BaseModel):
    """Benchmark models on the Path Emanator tasks (defaults: the three baselines, all tasks, held-out split)."""

    models: list[str] = Field(
        default=["offline", "random", "single-path:Destruction"],
        description="offline, random, single-path:<Path>, pes:CKPT or any --model string",
    )
    tasks: list[str] = Field(
        default=["all"], description=f"'all' or some of: {', '.join(PACKAGED_TASKS)} (and any a package registers)"
    )
    scenario: str = Field(
        default=DEFAULT_SCENARIO, description="whose world poses the items: a packaged scenario or a YAML file"
    )
    split: SplitChoice = Field(default="heldout", description="which items: dev, heldout (every third) or all")
    seed: Seed = Field(default=0, description="policy noise and bootstrap seed")
    seeds: int = Field(
        default=1, ge=1, le=100, description="run every task under seeds seed, seed+1, …: scores are their mean"
    )
    judge: str = Field(default="offline", description="who hears the Path in free speech: offline or a --model")
    out_dir: str = Field(default="runs/bench", description="where leaderboard.json, .md and .png go")


class BenchmarkState(TypedDict, total=False):
    models: list[str]
    tasks: list[str]
    scenario: str
    split: str
    seed: int
    seeds: int
    judge: str
    out_dir: str
    rows: Annotated[list[dict[str, Any]], operator.add]
    leaderboard: dict[str, Any]


def _request(state: BenchmarkState) -> BenchmarkInput:
    return BenchmarkInput.model_validate({k: v for k, v in state.items() if k in BenchmarkInput.model_fields})


def _settings(request: BenchmarkInput) -> BenchSettings:
    return BenchSettings(
        scenario=request.scenario, split=request.split, seed=request.seed, seeds=request.seeds, judge=request.judge
    )


def fan_out(state: BenchmarkState) -> list[Send]:
    """One parallel `benchmark_model` per model (a scenario the benchmark cannot pose is refused first)."""
    request = _request(state)
    tasks = task_names(request.tasks)
    benchable(request.scenario)
    settings = _settings(request)
    jobs = [{"model": m, "tasks": tasks, "settings": settings.model_dump()} for m in request.models]
    return [Send("benchmark_model", job) for job in jobs]


async def benchmark_model(job: dict[str, Any]) -> dict[str, Any]:
    """Run every task for one model (a job sent by `fan_out`, not the graph's state); its leaderboard row."""
    emit = get_stream_writer()
    settings = BenchSettings.model_validate(job["settings"])
    row = await bench_model(job["model"], job["tasks"], settings, progress=emit)
    emit(ModelDone(model=row["model"], pes_score=row["pes_score"], ci=row["ci"]).payload())
    return {"rows": [row]}


def write_leaderboard_files(state: BenchmarkState) -> dict[str, Any]:
    """Rank the models by PES; leaderboard.json, .md and .png under `out_dir`."""
    request = _request(state)
    board = write_leaderboard(state["rows"], task_names(request.tasks), _settings(request), Path(request.out_dir))
    ranking = [{"model": r["model"], "pes_score": r["pes_score"]} for r in board["models"]]
    get_stream_writer()(LeaderboardWritten(out_dir=request.out_dir, ranking=ranking).payload())
    return {"leaderboard": board}


def build_benchmark_graph() -> StateGraph[Any, None, Any, Any]:
    builder = StateGraph(BenchmarkState, input_schema=BenchmarkInput)
    builder.add_node("benchmark_model", benchmark_model)  # type: ignore[call-overload,arg-type]
    builder.add_node("write_leaderboard", write_leaderboard_files)
    builder.add_conditional_edges(START, fan_out, ["benchmark_model"])
    builder.add_edge("benchmark_model", "write_leaderboard")
    builder.add_edge("write_leaderboard", END)
    return builder
