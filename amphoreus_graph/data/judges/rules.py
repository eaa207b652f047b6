"""Rule checks the offline panels apply to a decision in its situation; each returns a value in [0, 1].

They are deliberately simple and readable. The checks here hold in any world: an expert would call a decision
illogical if it is not offered, turns on an ally it trusts, or travels to where it already is; uninformed if it
names people or places nothing accounts for; indiscreet if its speech gives away a memory kept secret (matched as
the society's guard matches it: policy/discretion.py). What a
world's own rules make unwise (a rising flood, a last fruit) the world says itself, through `World.critique`,
and the proper nouns it accounts for through `World.vocabulary`: a turn posed outside any world gets only the
neutral checks.
"""

from __future__ import annotations

import re

from amphoreus_graph.catalogs.scenario import catalog_of_turn
from amphoreus_graph.contracts.actions import ActionBrief, TargetKind
from amphoreus_graph.contracts.turn import Decision, TurnContext
from amphoreus_graph.data.judges.base import world_of
from amphoreus_graph.policy.discretion import COMMON_NAMES, says_a_secret, world_words
from amphoreus_graph.policy.offline import HOSTILE_TAGS

HELPING_TAGS = frozenset({"care", "protection", "alliance"})
TRUSTED, DISTRUSTED = 0.4, -0.4  # trust beyond these makes a hostile or a helping act a strange choice
_NAME = re.compile(r"\b[A-Z][a-z]+(?:\s[A-Z][a-z]+)*")
_SENTENCE_END = re.compile(r"[.!?:;]\s+")
# Target kinds that name someone or somewhere, which a speech about the act would be expected to say.
_NAMED_TARGETS = frozenset({TargetKind.AGENT, TargetKind.LOCATION, TargetKind.OBJECTIVE})


def action_fit(turn: TurnContext, action: str) -> float:
    """How much the agent's Paths favour the action (primary counts twice), from [-1, 1] onto [0, 1]; an
    action the turn did not offer is neutral (its logic already scores 0)."""
    catalog = catalog_of_turn(turn)
    brief: ActionBrief = turn.option(action) or ActionBrief()
    value = 2.0 * catalog[turn.path].affinity(brief)
    weight = 2.0
    if turn.secondary_path:
        value += catalog[turn.secondary_path].affinity(brief)
        weight += 1.0
    return (value / weight + 1.0) / 2.0


def neutral_checks(turn: TurnContext, decision: Decision) -> list[tuple[bool, float, str]]:
    """(failed, cost, reason) for what is unwise in any world, read from the offered option's tags."""
    tags = set(option.tags) if (option := turn.option(decision.action)) else set()
    trust = turn.trust.get(decision.target or "", 0.0)
    aim = turn.aim_target
    return [
        (bool(tags & HOSTILE_TAGS) and trust > TRUSTED, 0.45, "turns on one it trusts"),
        (bool(tags & HELPING_TAGS) and trust < DISTRUSTED, 0.3, "helps one it distrusts"),
        ("travel" in tags and decision.target == turn.location, 0.5, "travels to where it already is"),
        (
            aim is not None and decision.target != aim and aim in turn.targets(decision.action),
            0.2,
            f"aims at {decision.target}, not its own aim {aim}",
        ),
    ]


def logic(turn: TurnContext, decision: Decision) -> tuple[float, list[str]]:
    """Is the decision allowed and sensible, by the neutral checks and the world's own critique? Returns
    (value, reasons)."""
    if problem := turn.problem_with(decision):
        return 0.0, [problem]
    failed = [(cost, reason) for broken, cost, reason in neutral_checks(turn, decision) if broken]
    if (world := world_of(turn)) is not None:
        failed += [(c.cost, c.reason) for c in world.critique(turn, decision)]
    return 1.0 - sum(cost for cost, _ in failed), [reason for _, reason in failed]


def known_names(turn: TurnContext) -> set[str]:
    """Everyone and everywhere the agent could know of: from its turn (itself, its place, its aim, those it
    trusts or distrusts, what it may act on), the Paths, and the words of its world."""
    names = {turn.agent, turn.location, turn.aim_target, *turn.trust} - {None}
    names |= {t for option in turn.options for t in option.targets}
    names |= set(catalog_of_turn(turn).names())
    return {n for n in names if n} | world_words(turn)


def unknown_names(turn: TurnContext, text: str) -> list[str]:
    """Capitalised names in the text (not sentence starts) that nothing in the agent's world accounts for."""
    known = known_names(turn) | COMMON_NAMES
    context = " ".join([turn.situation, *turn.observations, *(m.text for m in turn.memories), turn.persona])
    names = [n for sentence in _SENTENCE_END.split(text) for n in _NAME.findall(sentence.partition(" ")[2])]
    return [n for n in names if n not in known and n not in context]


def knowledge(turn: TurnContext, decision: Decision) -> tuple[float, list[str]]:
    """Names only what exists; aiming at a real target or its own aim shows it knows the world."""
    unknown = unknown_names(turn, decision.speech)
    value = 0.8 - 0.25 * len(unknown)
    mentioned = {decision.target, turn.aim_target} - {None}
    if any(name and name in decision.speech for name in mentioned):
        value += 0.2
    reasons = [f"names unknown {', '.join(unknown)}"] if unknown else []
    return value, reasons


def narrative(turn: TurnContext, decision: Decision) -> tuple[float, list[str]]:
    """Says something, neither a grunt nor a sermon, without repeating itself, and says whom or where it aims at."""
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
    option = turn.option(decision.action)
    named = option is not None and option.target in _NAMED_TARGETS
    if named and decision.target and decision.target not in decision.speech:
        value -= 0.1
        reasons.append("does not say whom or where")
    return value, reasons


def discretion(turn: TurnContext, decision: Decision) -> tuple[float, list[str]]:
    """Keeps its secrets (1.0) or speaks one (0.0): an agent may act on a secret, never say it aloud. The match is
    the society's guard's (policy/discretion.py), so a guarded reply never scores as a leak and no leak the guard
    would miss scores as discreet."""
    return (0.0, ["speaks a secret"]) if says_a_secret(turn, decision) else (1.0, [])
