"""LangGraph Studio entry point: the world through several cycles, memories carried over by retention.

Compiled without a checkpointer or store: `langgraph dev` brings its own.
"""

from amphoreus_graph.society.recurrence import build_recurrence_graph

graph = build_recurrence_graph().compile(name="recurrence")
