"""LangGraph Studio entry point: judge a run's turns into DPO pairs; set `human: true` to be the expert.

With `human`, the run pauses at each judged turn showing candidates A and B side by side; resume it with
`{"choice": "A" | "B" | "tie", "reason": "..."}`. Compiled without a checkpointer: `langgraph dev` brings one.
"""

from amphoreus_graph.data.experts import build_experts_graph

graph = build_experts_graph().compile(name="experts")
