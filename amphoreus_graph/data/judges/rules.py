"""Rule checks the offline panels apply to a decision in its situation; each returns a value in [0, 1].

They are deliberately simple and readable: an expert would call a decision illogical if it attacks a trusted
ally or withdraws while the Black Tide drowns the world, uninformed if it names people who do not exist, and
indiscreet if its speech gives away a memory the heir keeps secret.
"""

from __future__ import annotations

import re

from amphoreus_graph.actions import ACTION_TARGETS, Action, TargetKind
from amphoreus_graph.catalogs.paths import load_paths
from amphoreus_graph.contracts.turn import Decision, RecalledMemory, TurnContext

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


# Discretion: does the speech give away a secret the heir recalled? Words are compared, not meanings, so it
# catches a secret said verbatim, trimmed, reordered or lightly reworded, not a true paraphrase ("I traded the
# elders' stamp for a rock"): the LLM judge's prompt asks for that. Only what is the secret's own counts: words
# and spans it shares with what the heir may say anyway (its situation, what it sees, its options, the memories
# that are not secret) give nothing away. That matters for a reflection that cites a secret: it is secret as a
# whole, yet most of its text may quote memories the heir is free to repeat. Words someone said aloud (a speech
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
    """What a heir may say for reasons of its own, so repeating it gives nothing away: the world's common words
    (Coreflame, Titan), its own name, quest and place, the situation, what it observes, the heirs, Titans and
    places it may act on, and the memories it recalled that are not secret, up to any quoted speech in them."""
    targets = [t for names in turn.options.values() for t in names]
    context = [turn.heir, turn.seeks, turn.location, turn.situation, *turn.observations, *turn.trust, *targets]
    return [*sorted(_COMMON), *context, *(m.text.partition('"')[0] for m in turn.memories if not m.secret)]


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
    """Keeps its secrets (1.0) or speaks one (0.0): a heir may act on a secret, never say it aloud."""
    spoken = spoken_secrets(turn, decision.speech)
    return (0.0, ["speaks a secret"]) if spoken else (1.0, [])
