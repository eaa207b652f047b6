"""What Brindle Green's YAML cannot say: the stage needs several pairs of hands. Each beam raised fills the
`stage` pool by one; the last one finishes the Stage, narrated as the chores' own `lit` transition."""

from __future__ import annotations

from amphoreus_graph.worlds.kit import Act

STAGE = "Stage"


def raise_beam(act: Act) -> None:
    if act.objective(STAGE).status == "lit":
        act.set_text(f"{act.actor} checked the beams of the finished stage.")
        return
    act.change_pool("stage", 1)
    act.add_tally(act.actor, 0.5)
    beams, helpers = act.pool("stage"), [a for a in act.agents_at(act.location(act.actor) or "") if a != act.actor]
    if beams >= 3:
        act.set_text(f"{act.actor} raised the last beam of the stage.")
        act.set_objective(STAGE, "lit", location="Village Green", holder=act.actor, transition="lit")
    else:
        watched = f", while {', '.join(helpers)} looked on" if helpers else ""
        act.set_text(f"{act.actor} raised a beam for the stage ({beams:g} of 3){watched}.")
