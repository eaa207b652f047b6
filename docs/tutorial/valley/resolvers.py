"""What the valley's YAML cannot say: a story warms the listeners' trust by one step for every lamp burning."""

from __future__ import annotations

from amphoreus_graph.worlds.kit import Act


def tell_story(act: Act) -> None:
    burning = sum(1 for lamp in act.objectives() if lamp.status == "lit")
    listeners = [a for a in act.agents_at(act.location(act.actor) or "") if a != act.actor]
    for listener in listeners:
        act.change_trust(listener, act.actor, 0.1 * burning)
    told = f"told {', '.join(listeners)} a story of the lamps" if listeners else "told a story of the lamps to no one"
    act.set_text(f"{act.actor} {told} ({burning} burning).")
