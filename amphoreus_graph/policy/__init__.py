"""Who decides a heir's turn: an LLM over any chat model, or the offline Path policy."""

from amphoreus_graph.policy.base import Decision, Policy, PolicyResult, TurnContext
from amphoreus_graph.policy.registry import resolve_model

__all__ = ["Decision", "Policy", "PolicyResult", "TurnContext", "resolve_model"]
