"""What a custom resolver receives: the action being carried out, and a typed view of the round it may change.

A resolver is a plain function in the world's own folder, named by an action's `resolver:` field
(`resolvers.py:harvest` beside the YAML, or `package.module:harvest`)::

    from amphoreus_graph.worlds.kit import Act

    def harvest(act: Act) -> None:
        stock = act.pool("fish")
        caught = -act.change_pool("fish", -min(4.0, stock / 10))
        act.add_tally(act.actor, caught)
        act.say(f"{act.actor} hauled in {caught:g} crates.")

It runs after the action's declared costs and effects, in the same round, with the round's seeded `rng` (use
no other randomness: a replayed round must resolve identically). Everything it changes goes through the
methods below, which keep every number in its declared range and make agents fall as the YAML's effects do.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from amphoreus_graph.contracts.turn import Decision
from amphoreus_graph.worlds.kit.rules import Round, _Ctx
from amphoreus_graph.worlds.kit.scope import Scope
from amphoreus_graph.worlds.kit.state import Post
from amphoreus_graph.worlds.kit.terms import Status, Transition


@dataclass(frozen=True)
class ObjectiveInfo:
    name: str
    kind: str
    noun: str
    status: str  # free, held, lit, doused, delivered, lost
    location: str | None  # where it lies (None while carried or lost)
    holder: str | None  # who carries it (held), or who lit or delivered it


class Act:
    """One action being carried out, and the round around it."""

    def __init__(self, round_: Round, ctx: _Ctx) -> None:
        self._r = round_
        self._ctx = ctx

    # ---------------------------------------------------------------------------------------- the action

    @property
    def actor(self) -> str:
        return self._ctx.actor

    @property
    def action(self) -> str:
        return self._ctx.decl.name

    @property
    def target(self) -> str | None:
        """The decision's target (an agent, a place, an objective or free text), if any."""
        return self._ctx.decision.target

    @property
    def speech(self) -> str:
        return self._ctx.decision.speech

    @property
    def rng(self) -> random.Random:
        """The round's seeded randomness: the only randomness a resolver may use."""
        return self._r.rng

    @property
    def cycle(self) -> int:
        return self._r.s.cycle

    @property
    def round(self) -> int:
        return self._r.s.round

    @property
    def decisions(self) -> dict[str, Decision]:
        """Every allowed decision of this round, by agent (copies: changing them changes nothing)."""
        return {name: d.model_copy() for name, d in self._r.valid.items()}

    # ------------------------------------------------------------------------------------------ agents

    @property
    def agents(self) -> list[str]:
        return list(self._r.s.agents)

    def standing(self) -> list[str]:
        return self._r.s.standing()

    def location(self, agent: str) -> str | None:
        """Where an agent stood as the round began (None: en route)."""
        return self._r.where[agent]

    def agents_at(self, location: str) -> list[str]:
        return self._r.here(location)

    def stat(self, agent: str, name: str) -> float:
        return self._r.s.agents[agent].stats[name]

    def change_stat(self, agent: str, name: str, delta: float) -> float:
        """Change a stat within its range; returns the change made. The vital stat at its min fells the agent."""
        changed = self._r.set_stat(agent, name, self.stat(agent, name) + delta)
        self._r.maybe_fall(self._ctx, agent, self.actor)
        return changed

    def tally(self, agent: str) -> float:
        return self._r.s.agents[agent].tally

    def add_tally(self, agent: str, delta: float) -> None:
        me = self._r.s.agents[agent]
        me.tally = round(me.tally + delta, 4)

    def trust(self, truster: str, trusted: str) -> float:
        return self._r.s.trust.get(truster, {}).get(trusted, 0.0)

    def change_trust(self, truster: str, trusted: str, delta: float) -> None:
        """Within [-1, 1]; nobody's trust in themself."""
        self._r.s.adjust_trust(truster, trusted, delta)

    def relation(self, name: str, holder: str, other: str) -> float:
        """How far `holder` stands to `other` in a declared relation (or "trust")."""
        return Scope(self._r.w.spec, self._r.s).relation(name, holder, other)

    def change_relation(self, name: str, holder: str, other: str, delta: float) -> float:
        """Within the relation's range; nobody's relation to themself. Returns the change made."""
        if name not in self._r.w.spec.relations and name != "trust":
            raise ValueError(f"unknown relation {name!r}; expected one of {sorted(self._r.w.spec.relations)}")
        return self._r.add_relation(name, holder, other, delta)

    def move(self, agent: str, to: str) -> None:
        """Send a standing agent towards a place: it sets out at the round's end like a `move` effect's actor (the
        journey takes the quickest open route's rounds, one if none is open)."""
        if to not in self._r.w.location:
            raise ValueError(f"unknown location {to!r}; expected one of {self._r.w.locations}")
        here = self._r.where[agent]
        if here is not None and here != to and not self._r.s.agents[agent].fallen:
            found = self._r.w.route(self._r.start, here, to)
            self._r.moves[agent] = (to, found[1] if found else 1)

    def post(self, author: str, text: str, *, topic: str | None = None) -> str:
        """A post on the world's feed by `author` (the world must declare `feed:`); returns its id."""
        feed = self._r.w.spec.feed
        if feed is None:
            raise ValueError("the world declares no feed: section")
        if topic is not None and topic not in feed.topics:
            raise ValueError(f"unknown topic {topic!r}; expected one of {feed.topics}")
        made = Post(id=self._r.s.new_id(), author=author, text=text, round=self._r.s.round, topic=topic)
        self._r.s.posts.append(made)
        return made.id

    def remove_post(self, post: str) -> None:
        """Take a post off the feed (moderation, a deleted message)."""
        self._r.s.posts = [p for p in self._r.s.posts if p.id != post]

    # ------------------------------------------------------------------------------------------- world

    def pool(self, name: str) -> float:
        return self._r.s.pools[name]

    def change_pool(self, name: str, delta: float) -> float:
        """Within the pool's range; returns the change made."""
        return self._r.add_pool(name, delta)

    @property
    def clock(self) -> float | None:
        return self._r.s.clock

    def change_clock(self, delta: float, name: str | None = None) -> float:
        """The world's clock (or a named one of `clocks:`), within its range; returns the change made."""
        if name is not None and name not in self._r.w.spec.clocks:
            raise ValueError(f"unknown clock {name!r}; expected one of {sorted(self._r.w.spec.clocks)}")
        return self._r.add_clock(delta, name)

    def named_clock(self, name: str) -> float:
        return self._r.s.clocks[name]

    def objective(self, name: str) -> ObjectiveInfo:
        obj = self._r.s.objectives[name]
        w = self._r.w
        return ObjectiveInfo(name, w.kind_of[name], w.noun(name), obj.status.value, obj.at, obj.by)

    def objectives(self) -> list[ObjectiveInfo]:
        return [self.objective(name) for name in self._r.s.objectives]

    def set_objective(
        self,
        name: str,
        status: str,
        *,
        location: str | None = None,
        holder: str | None = None,
        transition: str | None = None,
        other: str | None = None,
    ) -> None:
        """Put an objective in a state; with `transition` (e.g. 'lit'), narrate it and run its declared effects
        as if the YAML's own effect had caused it (`other`: the other agent involved, the effects' target)."""
        obj = self._r.s.objectives[name]
        obj.status, obj.at, obj.by = Status(status), location, holder
        if transition is not None:
            self._r.transition(self._ctx, name, Transition(transition), other)

    # ----------------------------------------------------------------------------------------- telling

    def say(self, sentence: str) -> None:
        """Add a sentence to this action's event."""
        self._ctx.sentences.append(sentence)

    def set_text(self, text: str) -> None:
        """Replace the action's declared text (placeholders as in the YAML)."""
        self._ctx.lead = text

    def bump(self, amount: float) -> None:
        """Raise (or lower) the importance of this action's event."""
        self._ctx.bump += amount

    def announce(self) -> None:
        """File this action's event for everyone."""
        self._ctx.public = True

    def involve(self, agent: str) -> None:
        """Make an agent a witness (and one of those involved) of this action's event."""
        if agent not in self._ctx.involved:
            self._ctx.involved.append(agent)

    def event(
        self,
        text: str,
        *,
        location: str | None = None,
        involved: list[str] | None = None,
        public: bool = False,
        importance: float = 3.0,
    ) -> None:
        """Another event of this round, owned by the actor (its id gets a suffix); witnessed by those involved
        and everyone at `location` (default: where the actor stands)."""
        self._r.file(
            self.actor,
            text,
            location=location or self._ctx.location,
            involved=[self.actor, *(involved or [])],
            public=public,
            importance=importance,
            tags=list(self._ctx.decl.tags),
        )

    def end(self, outcome: str) -> None:
        """End the cycle after this round with a declared ending's id."""
        if outcome not in self._r.w.endings and outcome not in ("round_limit", "all_fallen"):
            raise ValueError(f"unknown ending {outcome!r}; expected one of {sorted(self._r.w.endings)}")
        self._r.end(outcome)
