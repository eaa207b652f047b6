"""LangGraph Studio entry point: the Path Emanator benchmarks (input has defaults: press Submit)."""

from amphoreus_graph.bench.graph import build_benchmark_graph

graph = build_benchmark_graph().compile(name="benchmark")
