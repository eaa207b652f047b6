"""The benchmark as a LangGraph graph (Studio: `benchmark`): every model is benchmarked in parallel (`Send`),
then the leaderboard is written. Custom stream events say which model finished, with its PES."""

from __future__ import annotations

import operator
from pathlib import Path
from typing import Annotated, Any

from langgraph.config import get_stream_writer
from langgraph.graph import END, START, StateGraph
from langgraph.types import Send
from pydantic import BaseModel, Field
from typing_extensions import TypedDict  # pydantic needs typing_extensions' TypedDict on 3.11

from amphoreus_graph.bench.leaderboard import bench_model, task_names, write_leaderboard
from amphoreus_graph.bench.tasks.base import BenchSettings


class BenchmarkInput(BaseModel):
    """Benchmark models on the Path Emanator tasks (defaults: the three baselines, all tasks, held-out split)."""

    models: list[str] = Field(default_factory=lambda: ["offline", "random", "single-path:Destruction"])
    tasks: list[str] = Field(default_factory=lambda: ["all"])
    split: str = Field(default="heldout", description="dev, heldout or all")
    seed: int = 0
    judge: str = Field(default="offline", description="who hears the Path in free speech")
    out_dir: str = Field(default="runs/bench", description="where the leaderboard files go")


class BenchmarkState(TypedDict, total=False):
    models: list[str]
    tasks: list[str]
    split: str
    seed: int
    judge: str
    out_dir: str
    rows: Annotated[list[dict[str, Any]], operator.add]
    leaderboard: dict[str, Any]


def _request(state: BenchmarkState) -> BenchmarkInput:
    return BenchmarkInput.model_validate({k: v for k, v in state.items() if k in BenchmarkInput.model_fields})


def fan_out(state: BenchmarkState) -> list[Send]:
    request = _request(state)
    tasks = task_names(request.tasks)
    settings = BenchSettings(split=request.split, seed=request.seed, judge=request.judge)
    return [Send("bench_one", {"model": m, "tasks": tasks, "settings": settings.model_dump()}) for m in request.models]


async def bench_one(payload: dict[str, Any]) -> dict[str, Any]:
    row = await bench_model(payload["model"], payload["tasks"], BenchSettings.model_validate(payload["settings"]))
    get_stream_writer()({"type": "model_done", "model": row["model"], "pes_score": row["pes_score"], "ci": row["ci"]})
    return {"rows": [row]}


def write(state: BenchmarkState) -> dict[str, Any]:
    request = _request(state)
    settings = BenchSettings(split=request.split, seed=request.seed, judge=request.judge)
    board = write_leaderboard(state["rows"], task_names(request.tasks), settings, Path(request.out_dir))
    return {"leaderboard": board}


def build_benchmark_graph() -> StateGraph[Any, None, Any, Any]:
    builder = StateGraph(BenchmarkState, input_schema=BenchmarkInput)
    builder.add_node("bench_one", bench_one)  # type: ignore[call-overload]
    builder.add_node("write", write)
    builder.add_conditional_edges(START, fan_out, ["bench_one"])
    builder.add_edge("bench_one", "write")
    builder.add_edge("write", END)
    return builder
