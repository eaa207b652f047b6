"""LangGraph Studio entry point: branch off a run after one of its rounds (`amphoreus simulate --fork` as a graph).

Compiled without a checkpointer: `langgraph dev` brings one (the branch itself is a run directory with its own).
"""

from amphoreus_graph.cli.fork_graph import build_fork_graph

graph = build_fork_graph().compile(name="fork")
