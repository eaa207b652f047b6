"""Rule checks the offline panels apply to a decision in its situation; each returns a value in [0, 1].

They are deliberately simple and readable. The checks here hold in any world: an expert would call a decision
illogical if it is not offered, turns on an ally it trusts, or travels to where it already is; uninformed if it
names people or places nothing accounts for; indiscreet if its speech gives away a memory kept secret. What a
world's own rules make unwise (a rising flood, a last fruit) the world says itself, through `World.critique`,
and the proper nouns it accounts for through `World.vocabulary`: a turn posed outside any world gets only the
neutral checks.
"""

from __future__ import annotations

import re

from amphoreus_graph.catalogs.scenario import catalog_for
from amphoreus_graph.contracts.actions import ActionBrief, TargetKind
from amphoreus_graph.contracts.turn import Decision, RecalledMemory, TurnContext
from amphoreus_graph.data.judges.base import world_of
from amphoreus_graph.policy.offline import HOSTILE_TAGS

HELPING_TAGS = frozenset({"care", "protection", "alliance"})
TRUSTED, DISTRUSTED = 0.4, -0.4  # trust beyond these makes a hostile or a helping act a strange choice
_NAME = re.compile(r"\b[A-Z][a-z]+(?:\s[A-Z][a-z]+)*")
_SENTENCE_END = re.compile(r"[.!?:;]\s+")
# Capitalised words any speech may use mid-sentence without naming anything: English, and the Path vocabulary.
_COMMON = frozenset({"I", "The", "This", "That", "Today", "Path", "Aeon"})
# Target kinds that name someone or somewhere, which a speech about the act would be expected to say.
_NAMED_TARGETS = frozenset({TargetKind.AGENT, TargetKind.LOCATION, TargetKind.OBJECTIVE})


def action_fit(turn: TurnContext, action: str) -> float:
    """How much the agent's Paths favour the action (primary counts twice), from [-1, 1] onto [0, 1]; an
    action the turn did not offer is neutral (its logic already scores 0)."""
    catalog = catalog_for(turn.world)
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


def world_words(turn: TurnContext) -> set[str]:
    """The proper nouns the turn's world accounts for (none for a turn posed outside any world)."""
    world = world_of(turn)
    return world.vocabulary() if world is not None else set()


def known_names(turn: TurnContext) -> set[str]:
    """Everyone and everywhere the agent could know of: from its turn (itself, its place, its aim, those it
    trusts or distrusts, what it may act on), the Paths, and the words of its world."""
    names = {turn.agent, turn.location, turn.aim_target, *turn.trust} - {None}
    names |= {t for option in turn.options for t in option.targets}
    names |= set(catalog_for(turn.world).names())
    return {n for n in names if n} | world_words(turn)


def unknown_names(turn: TurnContext, text: str) -> list[str]:
    """Capitalised names in the text (not sentence starts) that nothing in the agent's world accounts for."""
    known = known_names(turn) | _COMMON
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


# Discretion: does the speech give away a secret the agent recalled? Words are compared, not meanings, so it
# catches a secret said verbatim, trimmed, reordered or lightly reworded, not a true paraphrase ("I traded the
# elders' stamp for a rock"): the LLM judge's prompt asks for that. Only what is the secret's own counts: words
# and spans it shares with what the agent may say anyway (its situation, what it sees, its options, the memories
# that are not secret) give nothing away. That matters for a reflection that cites a secret: it is secret as a
# whole, yet most of its text may quote memories the agent is free to repeat. Words someone said aloud (a speech
# memory's quote) do not count as speakable: a secret that was blurted once must not go free the next time.
LEAK_SPAN = 5  # a run of this many of the secret's content words, said in order, gives it away
LEAK_SHARE = 0.5  # so does saying this share of its distinctive words (content words nothing speakable has) ...
LEAK_MIN_WORDS = 3  # ... if that is at least this many words: one or two shared words are a coincidence
_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_STOP_TEXT = """a about after again against all also am an and any are as at be been before being but by can could did
do does doing down during each few for from further had has have having he her here hers him his how i if in into is
it its itself just me more most my myself no nor not now of off on once only or other our ours out over own same she
should so some such than that the their theirs them then there these they this those through to too under until up
very was we were what when where which while who whom why will with would yet you your yours"""
_STOP_WORDS = frozenset(_STOP_TEXT.split())


def content_words(text: str) -> list[str]:
    """The words that carry meaning, in order and normalised so that small rewordings still match: lower case,
    stop words dropped, possessive and plural endings cut ("the Council's seals" -> ["council", "seal"])."""
    words = []
    for word in _WORD.findall(text.lower()):
        word = word.removesuffix("'s").split("'")[0]
        if word in _STOP_WORDS:
            continue
        if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
            word = word[:-1]
        words.append(word)
    return words


def spans(words: list[str], n: int = LEAK_SPAN) -> set[tuple[str, ...]]:
    """Every run of n consecutive words."""
    return {tuple(words[i : i + n]) for i in range(len(words) - n + 1)}


def speakable_texts(turn: TurnContext) -> list[str]:
    """What an agent may say for reasons of its own, so repeating it gives nothing away: its world's words, its
    own name, aim and place, the situation, what it observes, the agents, places and objectives it may act on,
    and the memories it recalled that are not secret, up to any quoted speech in them."""
    targets = [t for option in turn.options for t in option.targets]
    own = [turn.agent, turn.aim, turn.aim_target or "", turn.location or ""]
    said = [m.text.partition('"')[0] for m in turn.memories if not m.secret]
    return [
        *sorted(_COMMON | world_words(turn)),
        *own,
        turn.situation,
        *turn.observations,
        *turn.trust,
        *targets,
        *said,
    ]


def gives_away(secret: str, speech: str, speakable: list[str] | None = None) -> bool:
    """Whether the speech says the secret: a run of LEAK_SPAN of its own content words, or at least
    LEAK_MIN_WORDS of its distinctive words making up LEAK_SHARE of them. Its own: not shared with `speakable`."""
    known = [content_words(text) for text in speakable or []]
    hidden, said = content_words(secret), content_words(speech)
    own_spans = spans(hidden).difference(*(spans(words) for words in known))
    if own_spans & spans(said):
        return True
    distinctive = set(hidden).difference(*known)
    heard = distinctive & set(said)
    return len(heard) >= LEAK_MIN_WORDS and len(heard) >= LEAK_SHARE * len(distinctive)


def spoken_secrets(turn: TurnContext, speech: str) -> list[RecalledMemory]:
    """The secret memories of the turn that the speech gives away, in recall order."""
    secrets = [m for m in turn.memories if m.secret]
    if not secrets or not speech:
        return []
    speakable = speakable_texts(turn)
    return [m for m in secrets if gives_away(m.text, speech, speakable)]


def discretion(turn: TurnContext, decision: Decision) -> tuple[float, list[str]]:
    """Keeps its secrets (1.0) or speaks one (0.0): an agent may act on a secret, never say it aloud."""
    spoken = spoken_secrets(turn, decision.speech)
    return (0.0, ["speaks a secret"]) if spoken else (1.0, [])
