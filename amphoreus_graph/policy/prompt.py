"""Render a TurnContext as the chat messages a model sees (and a sample records), in any world: the turn
carries the world's framing (the agent's role, its aim, its status lines and the offered actions' help).

Secret memories are listed like the others (they may guide the choice) but marked, and the system prompt then
says they must never reach `speech`: only turns that recall a secret carry the extra line, so every other
turn's prompt, and the samples recorded from it, stay as they were.

The user prompt is a list of lines; whatever the world or another agent's speech put in an item (a memory, an
observation, the situation, an option) is rendered on its one line (`one_line`), so no text can start a line
of its own: a fake "You remember:" in a memory stays inside that memory.
"""

from __future__ import annotations

import json

from amphoreus_graph.catalogs.scenario import catalog_of_turn
from amphoreus_graph.contracts.memory import one_line
from amphoreus_graph.contracts.turn import Decision, RecalledMemory, TurnContext

SECRET_MARK = "(secret: never say this aloud)"
SECRET_RULE = (
    f"Memories marked {SECRET_MARK} are yours alone: let them guide your choice and your private rationale, "
    "but never speak them or hint at them in your speech, which everyone nearby hears."
)


def system_prompt(turn: TurnContext) -> str:
    catalog = catalog_of_turn(turn)
    path = catalog[turn.path]
    patron = catalog.patron_of(path.name)
    who = ", ".join(part for part in (turn.agent, turn.title, turn.role) if part)
    lines = [
        f"You are {one_line(who)}.",
        turn.persona,
        f"You walk the Path of {path.name}{f' ({patron})' if patron else ''}: {path.summary}",
        "Your tenets: " + " ".join(path.tenets),
    ]
    if turn.secondary_path:
        lines.append(f"You also lean towards the Path of {turn.secondary_path}.")
    if turn.traits:
        lines.append("Traits: " + ", ".join(turn.traits) + ".")
    aim = f"You seek {turn.aim}. " if turn.aim else ""
    lines.append(f"{aim}Stay true to your Path in word and deed.")
    if any(m.secret for m in turn.memories):
        lines.append(SECRET_RULE)
    return "\n".join(lines)


def memory_line(memory: RecalledMemory) -> str:
    """One remembered item as the model sees it; a secret says so before its text, where it cannot be missed."""
    mark = f" {SECRET_MARK}" if memory.secret else ""
    return f"- (cycle {memory.cycle}, round {memory.round}){mark} {one_line(memory.text)}"


def user_prompt(turn: TurnContext) -> str:
    where = f" You are at {turn.location}." if turn.location else ""
    lines = [f"Cycle {turn.cycle}, round {turn.round}.{where}"]
    if turn.status:
        lines.append("; ".join(f"{key}: {value}" for key, value in turn.status.items()) + ".")
    lines.append(f"Situation: {turn.situation}")
    if turn.observations:
        lines.append("You observe:")
        lines.extend(f"- {o}" for o in turn.observations)
    if turn.memories:
        lines.append("You remember:")
        lines.extend(memory_line(m) for m in turn.memories)
    if turn.choice:
        lines.append("Your options (choose one; its letter is your action):")
    else:
        lines.append("Your options (action: targets):")
    for option in turn.options:
        aimed = f" [{', '.join(option.targets)}]" if option.targets else ""
        lines.append(f"- {option.action}{aimed}: {option.help}")
    lines.append("Answer with one JSON object with the keys action, target (null if none), speech and rationale.")
    return "\n".join(one_line(line) for line in lines)


def render_messages(turn: TurnContext) -> list[dict[str, str]]:
    """The messages a chat model sees for this turn, as role/content dicts (the sample format)."""
    return [
        {"role": "system", "content": system_prompt(turn)},
        {"role": "user", "content": user_prompt(turn)},
    ]


def decision_json(decision: Decision) -> str:
    """The canonical assistant reply for a decision (sorted keys: byte-stable samples)."""
    return json.dumps(decision.model_dump(mode="json"), ensure_ascii=False, sort_keys=True)
