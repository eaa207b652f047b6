"""A shortcut probe for preference pairs: can a bag of words tell the chosen reply from the rejected one?

A pair should differ in what the agent did, not in a surface word that gives the answer away (a Path named only
in rejected rationales, say); a model trained on such pairs learns the word. The probe fits a logistic regression
on the words of the replies alone, without the prompt, on half of the pairs and scores the other half; the same
probe on the decision alone (action and target) says how much of that the act itself explains, so the difference
is what surface words add (near 0: none). The words it leans on most are listed so a high figure can be traced.
A high decision-only figure is worth reading too: the judges then prefer some acts whatever the Path.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

MIN_PAIRS = 20  # fewer and a held-out half says nothing


class ShortcutProbe(BaseModel):
    pairs: int
    heldout_replies: int = 0  # how many replies the accuracies are measured on (both of each held-out pair)
    heldout_accuracy: float | None = None
    decision_only_accuracy: float | None = None
    telling_words: list[str] = []
    note: str = ""

    @property
    def margin_of_error(self) -> float | None:
        """Half the width of a 95% interval around either accuracy (normal approximation at 50%)."""
        return round(1.96 * math.sqrt(0.25 / self.heldout_replies), 4) if self.heldout_replies else None

    @property
    def beyond_decision(self) -> float | None:
        """What the replies' other words add to telling the pairs apart (held-out accuracy points)."""
        if self.heldout_accuracy is None or self.decision_only_accuracy is None:
            return None
        return round(self.heldout_accuracy - self.decision_only_accuracy, 4)


def reply_text(messages: list[dict[str, Any]]) -> str:
    """The assistant reply of a conversational row as plain words (a Decision's JSON values)."""
    content = messages[-1]["content"]
    try:
        decision = json.loads(content)
    except (TypeError, json.JSONDecodeError):
        return str(content)
    return " ".join(str(v) for v in decision.values() if v) if isinstance(decision, dict) else str(content)


def reply_decision(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The decision a reply (the last message) states, as its JSON fields; {} for a reply that is not one."""
    try:
        decision = json.loads(messages[-1]["content"])
    except (TypeError, KeyError, IndexError, json.JSONDecodeError):
        return {}
    return decision if isinstance(decision, dict) else {}


def decision_text(messages: list[dict[str, Any]]) -> str:
    """The act alone: the reply's action and target."""
    decision = reply_decision(messages)
    return f"{decision.get('action', '')} {decision.get('target') or ''}" if decision else ""


def probe_pairs(rows: list[dict[str, Any]], seed: int = 0) -> ShortcutProbe:
    """Held-out accuracy at telling chosen (1) from rejected (0): on the whole replies and on the decisions."""
    if len(rows) < MIN_PAIRS:
        return ShortcutProbe(pairs=len(rows), note=f"too few pairs to probe (fewer than {MIN_PAIRS})")
    full, telling = _probe(rows, reply_text, seed)
    decided, _ = _probe(rows, decision_text, seed)
    return ShortcutProbe(
        pairs=len(rows),
        heldout_replies=2 * (len(rows) // 2),
        heldout_accuracy=full,
        decision_only_accuracy=decided,
        telling_words=telling,
    )


def _probe(
    rows: list[dict[str, Any]], text_of: Callable[[list[dict[str, Any]]], str], seed: int
) -> tuple[float, list[str]]:
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.linear_model import LogisticRegression

    halves: tuple[list[str], list[str]] = ([], [])
    labels: tuple[list[int], list[int]] = ([], [])
    for n, row in enumerate(rows):
        half = n % 2  # alternate pairs: both replies of a pair stay on the same side
        for key, label in (("chosen", 1), ("rejected", 0)):
            halves[half].append(text_of(row[key]))
            labels[half].append(label)
    words = CountVectorizer(binary=True, lowercase=True, token_pattern=r"(?u)\b\w[\w'-]*\b")
    fit = words.fit_transform(halves[0])
    model = LogisticRegression(max_iter=2000, C=1.0, random_state=seed).fit(fit, labels[0])
    accuracy = float(model.score(words.transform(halves[1]), labels[1]))
    vocabulary = words.get_feature_names_out()
    weights = model.coef_[0]
    telling = [str(vocabulary[i]) for i in abs(weights).argsort()[::-1][:10]]
    return round(accuracy, 4), telling
