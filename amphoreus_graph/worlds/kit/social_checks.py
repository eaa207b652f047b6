"""Cross-references of the kit's social blocks: a feed's relation, topics and seeds; item actions aimed at the
items their effects act on; votes' outcomes. (Each social effect checks itself: effects.py.)"""

from __future__ import annotations

from typing import TYPE_CHECKING

from amphoreus_graph.contracts.actions import Reach, TargetKind
from amphoreus_graph.worlds.kit.effects import WORLD, item_kind
from amphoreus_graph.worlds.kit.problems import Problem, known
from amphoreus_graph.worlds.kit.texts import check_template

if TYPE_CHECKING:
    from amphoreus_graph.worlds.kit.checks import _Checker

OUTCOME_VARS = frozenset({"motion", "text", "author", "ayes", "nays"})


def check_sections(c: _Checker) -> None:
    spec = c.spec
    feed = spec.feed
    if feed is not None:
        if feed.follows is not None:
            known("feed.follows", "relation", feed.follows, spec.relations)
        if len(set(feed.topics)) != len(feed.topics):
            raise Problem("feed.topics", f"{feed.topics!r} names a topic twice; expected each once")
        for i, seed in enumerate(feed.seeds):
            known(f"feed.seeds[{i}].author", "agent", seed.author, c.w.agents)
            if seed.topic is not None:
                known(f"feed.seeds[{i}].topic", "topic", seed.topic, feed.topics)
    if spec.votes is not None:
        for key in ("passed", "failed"):
            outcome = getattr(spec.votes, key)
            if problem := check_template(outcome.text, c.stakes | OUTCOME_VARS):
                raise Problem(f"votes.{key}.text", problem)
            c._effects(
                f"votes.{key}.effects", outcome.effects, context=WORLD, target=TargetKind.NONE, reach=Reach.ANYWHERE
            )
    for i, decl in enumerate(spec.actions):
        kind = item_kind(decl.effects)
        if decl.target is TargetKind.ITEM and kind is None:
            raise Problem(
                f"actions[{i}].target",
                "an item action needs an effect acting on one; expected reply, repost, like, "
                "vote, accept or decline among its effects",
            )
        kinds = {e.item for e in decl.effects if e.item is not None}
        if len(kinds) > 1:
            raise Problem(f"actions[{i}].effects", f"acts on {sorted(kinds)} at once; expected one kind of item")
