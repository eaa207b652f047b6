"""What Saltmere Bay's YAML cannot say: a trawl's catch depends on how full the bay is, and a fisher may hand
part of their own catch to another."""

from __future__ import annotations

from amphoreus_graph.worlds.kit import Act

TRAWL_REACH = 0.12  # a trawl sweeps up this share of the fish in the bay
TRAWL_MAX = 8.0  # …but a boat holds no more than this many crates
SHARE = 2.0  # crates handed over by share_catch


def trawl(act: Act) -> None:
    """Drag the deep water: the fuller the bay, the bigger the haul (at most a boat's hold)."""
    stock = act.pool("fish")
    want = min(TRAWL_MAX, round(stock * TRAWL_REACH))
    caught = -act.change_pool("fish", -want) if want > 0 else 0.0
    act.add_tally(act.actor, caught)
    if caught >= TRAWL_MAX / 2:
        act.set_text(f"{act.actor} dragged a trawl through the deep water and landed {caught:g} crates.")
    else:
        act.set_text(f"{act.actor} dragged a trawl through the deep water; the nets came up thin, {caught:g} crates.")


def share_catch(act: Act) -> None:
    """Hand some of one's own landed catch to another fisher."""
    other = act.target
    if other is None:
        return
    given = min(SHARE, act.tally(act.actor))
    if given <= 0:
        act.set_text(f"{act.actor} wanted to share a catch with {other} but had landed nothing yet.")
        return
    act.add_tally(act.actor, -given)
    act.add_tally(other, given)
    act.change_trust(other, act.actor, 0.2)
    act.set_text(f"{act.actor} gave {other} {given:g} crates from their own catch.")
