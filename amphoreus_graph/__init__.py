"""amphoreus-graph: a society of LLM agents living by Paths, orchestrated by LangGraph.

The front door of the library: `import amphoreus_graph as ag`, then `ag.Simulation(ag.RunConfig(...))` and the
other names of `__all__` (docs/library.md). Each is imported on first use, from the module that defines it, so that
`import amphoreus_graph` (and the CLI, which imports its parts directly) loads nothing it does not need.
"""

from __future__ import annotations

from importlib import import_module

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing, which `import amphoreus_graph` does not need
if TYPE_CHECKING:
    from typing import Any

    from amphoreus_graph.contracts import events as events
    from amphoreus_graph.contracts.memory_seam import Memory
    from amphoreus_graph.contracts.turn import Decision, Policy, PolicyResult, TurnContext
    from amphoreus_graph.contracts.world import World
    from amphoreus_graph.errors import AmphoreusError
    from amphoreus_graph.layout import RunDir
    from amphoreus_graph.memory.index import RecordIndex
    from amphoreus_graph.memory.langgraph_store import ChromaStore
    from amphoreus_graph.memory.store import MemorySpec, open_memory
    from amphoreus_graph.policy.llm import LLMPolicy
    from amphoreus_graph.scepter.plan import ScepterConfig
    from amphoreus_graph.scepter.runner import Scepter, ScepterSummary
    from amphoreus_graph.society.config import RunConfig, stored_config
    from amphoreus_graph.society.fork import fork, plan_fork
    from amphoreus_graph.society.graph import build_society_graph
    from amphoreus_graph.society.recurrence import build_recurrence_graph
    from amphoreus_graph.society.runner import Simulation
    from amphoreus_graph.society.services import SocietySettings
    from amphoreus_graph.society.summary import RunSummary, stored_summary

    __version__: str

# name -> the module that defines it (the module itself for `events`)
_HOMES = {
    # a run, and many
    "Simulation": "amphoreus_graph.society.runner",
    "RunConfig": "amphoreus_graph.society.config",
    "RunSummary": "amphoreus_graph.society.summary",
    "Scepter": "amphoreus_graph.scepter.runner",
    "ScepterConfig": "amphoreus_graph.scepter.plan",
    "ScepterSummary": "amphoreus_graph.scepter.runner",
    "fork": "amphoreus_graph.society.fork",
    "plan_fork": "amphoreus_graph.society.fork",
    # reading a run back
    "RunDir": "amphoreus_graph.layout",
    "stored_config": "amphoreus_graph.society.config",
    "stored_summary": "amphoreus_graph.society.summary",
    "events": "amphoreus_graph.contracts.events",
    # your own parts
    "Policy": "amphoreus_graph.contracts.turn",
    "TurnContext": "amphoreus_graph.contracts.turn",
    "PolicyResult": "amphoreus_graph.contracts.turn",
    "Decision": "amphoreus_graph.contracts.turn",
    "LLMPolicy": "amphoreus_graph.policy.llm",
    "Memory": "amphoreus_graph.contracts.memory_seam",
    "MemorySpec": "amphoreus_graph.memory.store",
    "open_memory": "amphoreus_graph.memory.store",
    "RecordIndex": "amphoreus_graph.memory.index",
    "World": "amphoreus_graph.contracts.world",
    # the graphs themselves, and the LangGraph store
    "build_society_graph": "amphoreus_graph.society.graph",
    "build_recurrence_graph": "amphoreus_graph.society.recurrence",
    "SocietySettings": "amphoreus_graph.society.services",
    "ChromaStore": "amphoreus_graph.memory.langgraph_store",
    "AmphoreusError": "amphoreus_graph.errors",
}
_MODULES = {"events"}
__all__ = [
    "AmphoreusError",
    "ChromaStore",
    "Decision",
    "LLMPolicy",
    "Memory",
    "MemorySpec",
    "Policy",
    "PolicyResult",
    "RecordIndex",
    "RunConfig",
    "RunDir",
    "RunSummary",
    "Scepter",
    "ScepterConfig",
    "ScepterSummary",
    "Simulation",
    "SocietySettings",
    "TurnContext",
    "World",
    "__version__",
    "build_recurrence_graph",
    "build_society_graph",
    "events",
    "fork",
    "open_memory",
    "plan_fork",
    "stored_config",
    "stored_summary",
]


def _version() -> str:
    """The installed distribution's version; in a source checkout that was never installed, its pyproject's."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("amphoreus-graph")
    except PackageNotFoundError:
        import tomllib
        from pathlib import Path

        pyproject = Path(__file__).resolve().parent.parent / "pyproject.toml"
        if not pyproject.is_file():
            return "0+unknown"
        return str(tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["version"])


def __getattr__(name: str) -> Any:
    if name == "__version__":
        value: Any = _version()
    elif name in _HOMES:
        home = import_module(_HOMES[name])
        value = home if name in _MODULES else getattr(home, name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value  # looked up once
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
