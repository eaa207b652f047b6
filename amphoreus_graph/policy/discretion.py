"""Discretion: whether words give away a secret the speaker holds, and the guard that keeps them from being said.

**Matching.** Words are compared, not meanings, so it catches a secret said verbatim, trimmed, reordered or lightly
reworded, not a true paraphrase ("I traded the elders' stamp for a rock": the model judge's prompt asks for that).
Both texts are folded first (`fold`): Unicode compatibility forms, accents and case dropped, curly quotes and
apostrophes made plain, a word hyphenated across a line break joined again; words are then letters and digits in
any script, so punctuation, quoting, spacing and line breaks do not matter. A speech gives a secret away with a run
of LEAK_SPAN of its content words in order, or with most of its distinctive words (LEAK_SHARE, at least
LEAK_MIN_WORDS of them).

Only what is the secret's own counts: words and spans it shares with what the agent may say anyway (its situation,
what it sees, its options, the memories that are not secret) give nothing away. That matters for a reflection that
cites a secret: it is secret as a whole, yet most of its text may quote memories the agent is free to repeat. Words
someone said aloud (a speech memory's quote) do not count as speakable: a secret blurted once must not go free the
next time.

**The guard** (`discreet`): every reply of every policy passes it before it becomes speech, memory, chronicle or a
sample (the society's `agent_turn`, the experts' proposers). A reply that would say a secret the turn recalled, in
its speech or a free-text target (what the world files as heard), is asked for again once where the policy can be
(a model: `Reconsiders`, through its gateway, so the call is counted), flag `secret_repaired`; otherwise, or if the
second reply says it too, the sentences that say it are cut, or the speech becomes NEUTRAL_LINE, flag
`secret_redacted`. The rationale is private (nobody hears it) and is left alone.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Protocol, runtime_checkable

from amphoreus_graph.catalogs.scenario import scenario_for
from amphoreus_graph.contracts.actions import TargetKind
from amphoreus_graph.contracts.turn import (
    SAID_A_SECRET,
    Decision,
    Policy,
    PolicyResult,
    RecalledMemory,
    TurnContext,
)

LEAK_SPAN = 5  # a run of this many of the secret's content words, said in order, gives it away
LEAK_SHARE = 0.5  # so does saying this share of its distinctive words (content words nothing speakable has) ...
LEAK_MIN_WORDS = 3  # ... if that is at least this many words: one or two shared words are a coincidence
SECRET_REPAIRED = "secret_repaired"  # the reply said a secret; asked again, the model kept it
SECRET_REDACTED = "secret_redacted"  # the reply said a secret and the guard cut it out
GUARD_FLAGS = (SECRET_REPAIRED, SECRET_REDACTED)
NEUTRAL_LINE = "I keep my own counsel."  # what is said when nothing of the speech could be kept
REPAIR_RULE = (
    f"{SAID_A_SECRET}, and everyone nearby hears your speech. Secrets may guide your choice and your private "
    "rationale, never your speech or a target you write. Reply again with only the JSON object, with a speech that "
    "neither says nor hints at any secret."
)
# Capitalised words any speech may use mid-sentence without naming anything: English, and the Path vocabulary.
COMMON_NAMES = frozenset({"I", "The", "This", "That", "Today", "Path", "Aeon"})
_STOP_TEXT = """a about after again against all also am an and any are as at be been before being but by can could did
do does doing down during each few for from further had has have having he her here hers him his how i if in into is
it its itself just me more most my myself no nor not now of off on once only or other our ours out over own same she
should so some such than that the their theirs them then there these they this those through to too under until up
very was we were what when where which while who whom why will with would yet you your yours"""
_STOP_WORDS = frozenset(_STOP_TEXT.split())
_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)?")  # letters and digits of any script, with one apostrophe inside
_LINE_HYPHEN = re.compile(r"(?<=[^\W\d_])-[^\S\n]*\n\s*(?=[^\W\d_])")  # "coun-\n cil": one word split at a line end
# Apostrophes and quotation marks as they are typed, set and quoted, made plain; soft hyphens and zero-width marks
# (invisible, yet they split a word for a regular expression) dropped.
_PLAIN = str.maketrans(
    {
        **dict.fromkeys("\u2018\u2019\u201a\u201b\u2032\u02bc\u02bb\u0060\u00b4", "'"),
        **dict.fromkeys("\u00ad\u200b\u200c\u200d\u2060\ufeff", ""),
        **dict.fromkeys("\u2010\u2011", "-"),
    }
)
# A sentence: up to its end mark and any closing quote or bracket, or to a line break.
_SENTENCE = re.compile(r"[^.!?\u2026\n]+(?:[.!?\u2026]+[\"'\u201d\u2019)\]]*)?")


@runtime_checkable
class Reconsiders(Protocol):
    """A policy that can be asked again about a reply it gave, with what was wrong (a model, through its gateway)."""

    async def areconsider(
        self, turn: TurnContext, decision: Decision, result: PolicyResult, instruction: str
    ) -> Decision | None:
        """Its new decision, its calls counted on `result`; None if it could not answer (the guard redacts)."""
        ...


def fold(text: str) -> str:
    """The text as matching sees it: compatibility forms decomposed and accents dropped (NFKD without combining
    marks), apostrophes and quotes plain, a word hyphenated across a line break joined, case folded."""
    decomposed = unicodedata.normalize("NFKD", text.translate(_PLAIN))
    plain = "".join(c for c in decomposed if not unicodedata.combining(c))
    return _LINE_HYPHEN.sub("", plain).casefold()


def content_words(text: str) -> list[str]:
    """The words that carry meaning, in order and normalised so that small rewordings still match: folded, stop
    words dropped, possessive and plural endings cut ("the Council's seals" -> ["council", "seal"])."""
    words = []
    for word in _WORD.findall(fold(text)):
        word = word.removesuffix("'s").split("'")[0]
        if not word or word in _STOP_WORDS:
            continue
        if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
            word = word[:-1]
        words.append(word)
    return words


def spans(words: list[str], n: int = LEAK_SPAN) -> set[tuple[str, ...]]:
    """Every run of n consecutive words."""
    return {tuple(words[i : i + n]) for i in range(len(words) - n + 1)}


def world_words(turn: TurnContext) -> set[str]:
    """The proper nouns the turn's world accounts for (none for a turn posed outside any world)."""
    return scenario.world.vocabulary() if (scenario := scenario_for(turn)) else set()


def speakable_texts(turn: TurnContext) -> list[str]:
    """What an agent may say for reasons of its own, so repeating it gives nothing away: its world's words, its
    own name, aim and place, the situation, what it observes, the agents, places and objectives it may act on,
    and the memories it recalled that are not secret, up to any quoted speech in them."""
    targets = [t for option in turn.options for t in option.targets]
    own = [turn.agent, turn.aim, turn.aim_target or "", turn.location or ""]
    said = [m.text.partition('"')[0] for m in turn.memories if not m.secret]
    return [
        *sorted(COMMON_NAMES | world_words(turn)),
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


def spoken_secrets(turn: TurnContext, speech: str, speakable: list[str] | None = None) -> list[RecalledMemory]:
    """The secret memories of the turn that the speech gives away, in recall order (`speakable`: the turn's
    speakable texts, if already known)."""
    secrets = [m for m in turn.memories if m.secret]
    if not secrets or not speech.strip():
        return []
    speakable = speakable_texts(turn) if speakable is None else speakable
    return [m for m in secrets if gives_away(m.text, speech, speakable)]


def free_target(turn: TurnContext, decision: Decision) -> str | None:
    """The decision's target where it is free text the agent wrote (the world may file it), else None."""
    option = turn.option(decision.action)
    return decision.target if option is not None and option.target is TargetKind.TEXT else None


def public_texts(turn: TurnContext, decision: Decision) -> list[str]:
    """What of a decision others hear or the world files: its speech, and its target where that is free text."""
    written = free_target(turn, decision)
    return [decision.speech, *([written] if written else [])]


def says_a_secret(turn: TurnContext, decision: Decision) -> bool:
    """Whether any public part of the decision gives away a secret the turn recalled."""
    if not any(m.secret for m in turn.memories):
        return False
    speakable = speakable_texts(turn)
    return any(spoken_secrets(turn, text, speakable) for text in public_texts(turn, decision))


def redact_text(turn: TurnContext, text: str, speakable: list[str] | None = None) -> str:
    """The text without the sentences that give away a secret of the turn: NEUTRAL_LINE if nothing is left, or if
    what is left still gives one away (a secret spread over sentences); unchanged if it keeps them all."""
    speakable = speakable_texts(turn) if speakable is None else speakable

    def leaks(part: str) -> bool:
        return bool(spoken_secrets(turn, part, speakable))

    if not leaks(text):
        return text
    kept = " ".join(s.strip() for s in _SENTENCE.findall(text) if s.strip() and not leaks(s))
    return kept if kept and not leaks(kept) else NEUTRAL_LINE


def redact(turn: TurnContext, decision: Decision) -> Decision:
    """The decision with what gives a secret away taken out of its public parts: the sentences of its speech that
    say one are cut (`redact_text`) and a free-text target that says one is dropped. Action and rationale stay."""
    speakable = speakable_texts(turn)
    target = decision.target
    if (written := free_target(turn, decision)) is not None and spoken_secrets(turn, written, speakable):
        target = None
    return decision.model_copy(update={"speech": redact_text(turn, decision.speech, speakable), "target": target})


async def discreet(policy: Policy, turn: TurnContext, result: PolicyResult) -> PolicyResult:
    """The policy's result as it may be said aloud: unchanged if it keeps the turn's secrets; else asked again once
    (a policy that `Reconsiders`), flagged SECRET_REPAIRED, or redacted, flagged SECRET_REDACTED. Never raises."""
    if not says_a_secret(turn, result.decision):
        return result
    if isinstance(policy, Reconsiders):
        again = await policy.areconsider(turn, result.decision, result, REPAIR_RULE)
        if again is not None and not says_a_secret(turn, again):
            result.decision = again
            result.flags.append(SECRET_REPAIRED)
            return result
        if again is not None:
            result.decision = again
    result.decision = redact(turn, result.decision)
    result.flags.append(SECRET_REDACTED)
    return result


def guarded(flags: list[str]) -> bool:
    """Whether a sample's or candidate's flags say the guard changed its reply."""
    return any(flag in GUARD_FLAGS for flag in flags)
