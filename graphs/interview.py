"""LangGraph Studio entry point: interview an agent of a finished run (input has defaults: press Submit).

One node around `amphoreus_graph.society.interview`, the same interview as `amphoreus interview`: the agent
answers in character from its own memories (and public ones), offline or with a model; the run is only read.
Runs written by `amphoreus simulate` and a Studio thread's runs/<thread id> can be interviewed (their
config.json says where the memory lives).
Compiled without a checkpointer: `langgraph dev` brings one.
"""

from pathlib import Path
from typing import Any

from langgraph.graph import END, START, StateGraph
from pydantic import BaseModel, Field
from typing_extensions import TypedDict  # pydantic needs typing_extensions' TypedDict on 3.11

from amphoreus_graph.data.experts import newest_run
from amphoreus_graph.errors import graph_input
from amphoreus_graph.society.interview import interview
from amphoreus_graph.society.services import SocietySettings


class InterviewInput(BaseModel):
    """Ask an agent of a finished run a question."""

    run: str = Field(
        default="",
        description="a run directory (`amphoreus simulate`'s, or a Studio thread's runs/<thread id>); default: "
        "the newest run in AMPHOREUS_RUNS_DIR (runs/)",
    )
    agent: str = Field(default="", description="whom to ask; default: the first agent of the run's scenario")
    question: str = Field(default="What do you remember most, and why?", description="what to ask")
    model: str = Field(default="offline", description="'offline' or a --model string (provider:model, …)")
    base_url: str | None = Field(default=None, description="an OpenAI-compatible endpoint for the model")
    k: int = Field(default=8, ge=1, description="memories the answer draws on")


class InterviewOutput(TypedDict, total=False):
    run: str
    agent: str
    answer: str
    memories: list[dict[str, Any]]  # RecalledMemory as JSON, best first
    decided_by: str
    model_use: dict[str, Any]


class InterviewState(InterviewOutput, total=False):
    question: str
    model: str
    base_url: str | None
    k: int


def ask(state: InterviewState) -> InterviewOutput:
    """Interview the agent (LangGraph hands dict inputs over without the schema's defaults: applied here)."""
    request = graph_input(InterviewInput, state, "interview input")
    run = Path(request.run) if request.run else newest_run(Path(SocietySettings().runs_dir))
    got = interview(
        run, request.agent or None, request.question, model=request.model, base_url=request.base_url, k=request.k
    )
    return InterviewOutput(
        run=str(run),
        agent=got.agent,
        answer=got.answer,
        memories=[m.model_dump(mode="json") for m in got.memories],
        decided_by=got.decided_by,
        model_use=got.model_use,
    )


builder = StateGraph(InterviewState, input_schema=InterviewInput, output_schema=InterviewOutput)
builder.add_node("ask", ask)
builder.add_edge(START, "ask")
builder.add_edge("ask", END)
graph = builder.compile(name="interview")
