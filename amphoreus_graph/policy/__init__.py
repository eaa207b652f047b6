"""Who decides an agent's turn: an LLM over any chat model, or the offline Path policy."""

from amphoreus_graph.contracts.turn import Decision, Policy, PolicyResult, TurnContext
from amphoreus_graph.policy.registry import resolve_model

__all__ = ["Decision", "Policy", "PolicyResult", "TurnContext", "resolve_model"]
