"""Who an agent notices where it stands, in a kit world that bounds sight (`sight: N`, docs/worlds-kit.md).

Without a bound every agent at a place sees, can address and witnesses every other there, so in a crowd a prompt
lists the whole crowd and each deed has the whole crowd as witnesses: the cost of a round grows with the square of
the society. With `sight: N` an agent notices at most N others at its place each round: its neighbours on that
round's ring of the place, an order drawn afresh each round from a hash of (cycle, round, exact name), so that over
the rounds an agent meets different people, no name is favoured by where it sorts, and a replayed round draws the
same. The N//2 before it on the ring and the N - N//2 after it are noticed; so the agents who notice a given agent
(the witnesses of its deeds) are as many and as cheap to find. Places with at most N others are seen whole, exactly as
without the bound. The rings are sorted once per sealed state (`KitState.derived`); each agent's window then costs
in proportion to N, not to the crowd around it.
"""

from __future__ import annotations

import bisect
import hashlib
from collections.abc import Callable, Iterable

from amphoreus_graph.worlds.kit.state import KitState


def ring_key(state: KitState, name: str) -> bytes:
    """Where an agent sorts on this round's rings."""
    return hashlib.sha256(f"{state.cycle}\x1f{state.round}\x1f{name}".encode("utf-8", "surrogatepass")).digest()


class _Ring:
    """The agents of one pool in ring order, with each one's position and key."""

    def __init__(self, state: KitState, names: Iterable[str]) -> None:
        keyed = sorted((ring_key(state, n), n) for n in names)
        self.keys = [k for k, _ in keyed]
        self.names = [n for _, n in keyed]
        self.position = {n: i for i, n in enumerate(self.names)}

    def around(self, state: KitState, agent: str, before: int, after: int) -> list[str]:
        """The `before` agents before the agent on the ring and the `after` after it (the agent itself left out, each
        once, however small the ring). An agent not on the ring (elsewhere, or en route) sits where its key would."""
        size = len(self.names)
        at = self.position.get(agent)
        first_after = at + 1 if at is not None else bisect.bisect_left(self.keys, ring_key(state, agent))
        last_before = first_after - 2 if at is not None else first_after - 1
        picked = [self.names[(last_before - j) % size] for j in range(before)]
        picked += [self.names[(first_after + j) % size] for j in range(after)]
        return list(dict.fromkeys(n for n in picked if n != agent))


def _split(sight: int) -> tuple[int, int]:
    """How many an agent notices before and after itself on a ring."""
    return sight // 2, sight - sight // 2


def _place_ring(state: KitState, place: str) -> _Ring:
    rings: dict[str, _Ring] = state.derived("sight rings", dict)
    if place not in rings:
        rings[place] = _Ring(state, state.present(place))
    return rings[place]


def in_order(state: KitState, names: Iterable[str]) -> list[str]:
    """Names in the world's declaration order."""
    order: dict[str, int] = state.derived("declaration order", lambda: {n: i for i, n in enumerate(state.agents)})
    return sorted(set(names), key=order.__getitem__)


def noticed(state: KitState, agent: str, place: str | None, sight: int | None) -> list[str]:
    """The others at `place` whom the agent notices this round, in declaration order."""
    return _window(state, agent, place, sight, turned=False)


def watchers(state: KitState, agent: str, place: str | None, sight: int | None) -> list[str]:
    """The others at `place` who notice the agent this round (who witness what it does there), in declaration
    order: B notices A when A is within B's window, so A's watchers are A's window turned round."""
    return _window(state, agent, place, sight, turned=True)


def _window(state: KitState, agent: str, place: str | None, sight: int | None, *, turned: bool) -> list[str]:
    present = state.present(place)
    if sight is None or len(present) <= sight + 1:  # everyone else there fits
        others = [n for n in present if n != agent]
        if sight is None or len(others) <= sight:
            return others
    before, after = _split(sight)
    if turned:
        before, after = after, before
    return in_order(state, _place_ring(state, place or "").around(state, agent, before, after))


def in_view(state: KitState, agent: str, place: str | None, sight: int | None) -> list[str]:
    """The agents at `place` the agent notices, itself included if it stands there, in declaration order."""
    present = state.present(place)
    if sight is None or len(present) <= sight + 1:
        return present
    seen = noticed(state, agent, place, sight)
    return in_order(state, [*seen, agent]) if agent in _place_ring(state, place or "").position else seen


def within_sight(state: KitState, agent: str, key: str, pool: Callable[[], list[str]], sight: int | None) -> list[str]:
    """At most `sight` others of a pool that is the same for every agent it is asked for (worked out once under
    `key`): the agent's neighbours on the pool's ring, in the pool's order, the agent too if it is in the pool."""
    members: list[str] = state.derived(f"pool {key}", pool)
    if sight is None or len(members) <= sight + 1:
        return members
    ring: _Ring = state.derived(f"ring {key}", lambda: _Ring(state, members))
    before, after = _split(sight)
    kept = {*ring.around(state, agent, before, after), agent}
    return [n for n in members if n in kept]
