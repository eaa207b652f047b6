"""The rules kit: a `World` declared in YAML (map, objectives, clock, pools, actions, endings), with optional
resolvers in the world's own folder for what YAML cannot say. Reference: docs/worlds-kit.md."""

from amphoreus_graph.worlds.kit.act import Act, ObjectiveInfo
from amphoreus_graph.worlds.kit.loader import ENGINE_KEYS, load_kit_file, load_kit_world
from amphoreus_graph.worlds.kit.schema import KitSpec
from amphoreus_graph.worlds.kit.terms import Status, Transition
from amphoreus_graph.worlds.kit.world import KitWorld

__all__ = [
    "ENGINE_KEYS",
    "Act",
    "KitSpec",
    "KitWorld",
    "ObjectiveInfo",
    "Status",
    "Transition",
    "load_kit_file",
    "load_kit_world",
]
