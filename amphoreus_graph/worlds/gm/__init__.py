"""The LLM game master: a world told in prose, whose rounds a chat model resolves into narrated events and typed
state changes on a kit world's map and numbers (checked, repaired once, else resolved by the kit's own rules).
Reference: docs/worlds-gm.md."""

from amphoreus_graph.worlds.gm.config import GameMasterConfig
from amphoreus_graph.worlds.gm.reply import Reply, Vocabulary
from amphoreus_graph.worlds.gm.world import GameMasterWorld, load_game_master_world

__all__ = ["GameMasterConfig", "GameMasterWorld", "Reply", "Vocabulary", "load_game_master_world"]
