"""Cross-references of the kit's social blocks: a feed's relation, topics and seeds; the sections a social effect
needs; item actions aimed at the items their effects act on; votes' outcomes."""

from __future__ import annotations

from typing import TYPE_CHECKING

from amphoreus_graph.contracts.actions import Reach, TargetKind
from amphoreus_graph.worlds.kit.schema import (
    Accept,
    Decline,
    Effect,
    Like,
    OfferEffect,
    PostEffect,
    Propose,
    Reply,
    Repost,
    Vote,
)
from amphoreus_graph.worlds.kit.social import ITEM_KINDS, item_kind

if TYPE_CHECKING:
    from amphoreus_graph.worlds.kit.checks import _Checker

SOCIAL = (PostEffect, Reply, Repost, Like, Propose, Vote, OfferEffect, Accept, Decline)
# The section of the YAML each social effect needs.
NEEDS = {
    PostEffect: "feed",
    Reply: "feed",
    Repost: "feed",
    Like: "feed",
    Propose: "votes",
    Vote: "votes",
    OfferEffect: "trade",
    Accept: "trade",
    Decline: "trade",
}
OUTCOME_VARS = frozenset({"motion", "text", "author", "ayes", "nays"})


def check_sections(c: _Checker) -> None:
    from amphoreus_graph.worlds.kit.checks import Problem, _known, _template

    spec = c.spec
    feed = spec.feed
    if feed is not None:
        if feed.follows is not None:
            _known("feed.follows", "relation", feed.follows, spec.relations)
        if len(set(feed.topics)) != len(feed.topics):
            raise Problem("feed.topics", f"{feed.topics!r} names a topic twice; expected each once")
        for i, seed in enumerate(feed.seeds):
            _known(f"feed.seeds[{i}].author", "agent", seed.author, c.w.agents)
            if seed.topic is not None:
                _known(f"feed.seeds[{i}].topic", "topic", seed.topic, feed.topics)
    if spec.votes is not None:
        for key in ("passed", "failed"):
            outcome = getattr(spec.votes, key)
            _template(f"votes.{key}.text", outcome.text, c.stakes | OUTCOME_VARS)
            c._effects(
                f"votes.{key}.effects", outcome.effects, context="world", target=TargetKind.NONE, reach=Reach.ANYWHERE
            )
    for i, decl in enumerate(spec.actions):
        kind = item_kind(decl.effects)
        if decl.target is TargetKind.ITEM and kind is None:
            raise Problem(
                f"actions[{i}].target",
                "an item action needs an effect acting on one; expected reply, repost, like, "
                "vote, accept or decline among its effects",
            )
        kinds = {ITEM_KINDS[type(e)] for e in decl.effects if type(e) in ITEM_KINDS}
        if len(kinds) > 1:
            raise Problem(f"actions[{i}].effects", f"acts on {sorted(kinds)} at once; expected one kind of item")


def check_effect(c: _Checker, here: str, effect: Effect, target: TargetKind, context: str) -> None:
    """One social effect: its section is declared, it fits its action, and what it names exists."""
    from amphoreus_graph.worlds.kit.checks import Problem, _known

    section = NEEDS[type(effect)]
    if getattr(c.spec, section) is None:
        raise Problem(here, f"needs a {section}: section; expected one declared at the top of the world")
    if context != "action":
        raise Problem(here, "a social effect is an agent's act; expected it among an action's effects")
    if type(effect) in ITEM_KINDS and target is not TargetKind.ITEM:
        raise Problem(here, f"acts on a {ITEM_KINDS[type(effect)]} the decision names; expected target: item")
    if isinstance(effect, PostEffect | Reply) and effect_topic(effect) is not None:
        assert c.spec.feed is not None
        _known(f"{here}.topic", "topic", effect_topic(effect) or "", c.spec.feed.topics)
    if isinstance(effect, OfferEffect):
        if target is not TargetKind.AGENT:
            raise Problem(here, "offers to the decision's target; expected target: agent")
        for side in ("give", "get"):
            for stat, amount in getattr(effect.offer, side).items():
                _known(f"{here}.{side}.{stat}", "stat", stat, c.spec.stats)
                if isinstance(amount, str):
                    c._expr(f"{here}.{side}.{stat}", amount, ("actor", "target"))
                elif amount <= 0:
                    raise Problem(f"{here}.{side}.{stat}", f"{amount}; expected an amount above 0")


def effect_topic(effect: PostEffect | Reply) -> str | None:
    return effect.post.topic if isinstance(effect, PostEffect) else effect.reply.topic
