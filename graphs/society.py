"""LangGraph Studio entry point: one cycle of the society (input has defaults: press Submit).

Compiled without a checkpointer or store: `langgraph dev` brings its own. Memory and samples go where
the run's context (or AMPHOREUS_* environment variables) say: by default memory/chroma and runs/THREAD.
"""

from amphoreus_graph.society.graph import build_society_graph

graph = build_society_graph().compile(name="society")
