"""Amphoreus, the default world: a plug-in with its own schema, actions, rules, texts, scenarios and seeds."""

from amphoreus_graph.worlds.amphoreus.world import AmphoreusWorld, load_world

__all__ = ["AmphoreusWorld", "load_world"]
