"""Rule checks the offline panels apply to a decision in its situation; each returns a value in [0, 1].

They are deliberately simple and readable: an expert would call a decision illogical if it attacks a trusted
ally or withdraws while the Black Tide drowns the world, and uninformed if it names people who do not exist.
"""

from __future__ import annotations

import re

from amphoreus_graph.actions import ACTION_TARGETS, Action, TargetKind
from amphoreus_graph.paths import load_paths
from amphoreus_graph.policy.base import Decision, TurnContext

_NAME = re.compile(r"\b[A-Z][a-z]+(?:\s[A-Z][a-z]+)*")
_SENTENCE_END = re.compile(r"[.!?:;]\s+")
_COMMON = {"I", "The", "This", "That", "Today", "Titan", "Titans", "Coreflame", "Coreflames", "Path", "Aeon"}
_COMMON |= {"Black Tide", "Tide", "Black", "Amphoreus", "Heir", "Heirs", "Chrysos", "Vortex", "Genesis", "Era Nova"}


def action_fit(turn: TurnContext, action: Action) -> float:
    """How much the heir's Paths favour the action (primary counts twice), from [-1, 1] onto [0, 1]."""
    catalog = load_paths()
    value = 2.0 * catalog[turn.path].affinity[action]
    weight = 2.0
    if turn.secondary_path:
        value += catalog[turn.secondary_path].affinity[action]
        weight += 1.0
    return (value / weight + 1.0) / 2.0


def logic(turn: TurnContext, decision: Decision) -> tuple[float, list[str]]:
    """Is the decision allowed and sensible given trust, health and the Tide? Returns (value, reasons)."""
    if problem := turn.problem_with(decision):
        return 0.0, [problem]
    reasons = []
    trust = turn.trust.get(decision.target or "", 0.0)
    tide, action = turn.black_tide, decision.action
    checks = [
        (action is Action.ATTACK and trust > 0.4, 0.45, "attacks a heir it trusts"),
        (action in (Action.AID, Action.DEFEND, Action.ALLY) and trust < -0.4, 0.3, "helps a heir it distrusts"),
        (action is Action.WITHDRAW and tide > 70, 0.45, "withdraws while the Black Tide rises"),
        (action is Action.FIGHT_TIDE and tide < 15, 0.3, "fights a Tide that is low"),
        (action is Action.AID and turn.health < 30, 0.2, "tends others while badly wounded"),
        (action is Action.EXPLORE and decision.target == turn.location, 0.5, "travels to where it already is"),
        (action in (Action.JEST, Action.STUDY) and tide > 85, 0.2, "idles while the world drowns"),
        (
            action is Action.SEEK_COREFLAME and decision.target != turn.seeks and turn.seeks in turn.options[action],
            0.2,
            "chases a Coreflame other than its own",
        ),
    ]
    value = 1.0
    for failed, cost, reason in checks:
        if failed:
            value -= cost
            reasons.append(reason)
    return value, reasons


def known_names(turn: TurnContext) -> set[str]:
    """Everyone and everywhere the heir could know of from its situation."""
    names = {turn.heir, turn.seeks, turn.location, *turn.trust, *turn.holding}
    names |= {t for targets in turn.options.values() for t in targets}
    names |= set(load_paths().names())
    return names


def unknown_names(turn: TurnContext, text: str) -> list[str]:
    """Capitalised names in the text (not sentence starts) that nothing in the heir's world accounts for."""
    known = known_names(turn) | _COMMON
    context = " ".join([turn.situation, *turn.observations, *(m.text for m in turn.memories), turn.persona])
    names = [n for sentence in _SENTENCE_END.split(text) for n in _NAME.findall(sentence.partition(" ")[2])]
    return [n for n in names if n not in known and n not in context]


def knowledge(turn: TurnContext, decision: Decision) -> tuple[float, list[str]]:
    """Names only what exists; aiming at a real target or its own quest shows it knows the world."""
    unknown = unknown_names(turn, decision.speech)
    value = 0.8 - 0.25 * len(unknown)
    mentioned = {decision.target, turn.seeks} - {None}
    if any(name and name in decision.speech for name in mentioned):
        value += 0.2
    reasons = [f"names unknown {', '.join(unknown)}"] if unknown else []
    return value, reasons


def narrative(decision: Decision) -> tuple[float, list[str]]:
    """Says something, neither a grunt nor a sermon, without repeating itself."""
    words = decision.speech.split()
    if not words:
        return 0.0, ["says nothing"]
    reasons = []
    value = 1.0
    if len(words) < 6:
        value -= 0.4
        reasons.append("too terse")
    elif len(words) > 90:
        value -= 0.3
        reasons.append("rambles")
    diversity = len({w.lower().strip(".,!?") for w in words}) / len(words)
    if diversity < 0.6:
        value -= 0.3
        reasons.append("repeats itself")
    if (
        ACTION_TARGETS[decision.action] is not TargetKind.NONE
        and decision.target
        and decision.target not in decision.speech
    ):
        value -= 0.1
        reasons.append("does not say whom or where")
    return value, reasons
