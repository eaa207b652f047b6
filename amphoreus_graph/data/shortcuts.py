"""A shortcut probe for preference pairs: can a bag of words tell the chosen reply from the rejected one?

A pair should differ in what the agent did, not in a surface word that gives the answer away (a Path named only
in rejected rationales, say); a model trained on such pairs learns the word. The probe fits a logistic regression
on the words of the replies alone, without the prompt, on half of the pairs and scores the other half; the same
probe on the decision alone (action and target) says how much of that the act itself explains, so the difference
is what surface words add (near 0: none). One split of a few hundred pairs moves by several points with the
split, so the figures are means over many random halvings, with the range the middle 95% of them span. The words
it leans on most (fit on every pair) are listed so a high figure can be traced. A high decision-only figure is
worth reading too: the judges then prefer some acts whatever the Path.

The probe can only fail where chosen and rejected may differ in words: pairs whose two replies the offline policy
wrote share every word but the act's, so on them it holds by construction (`offline_written`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray
from pydantic import BaseModel

MIN_PAIRS = 20  # fewer and a held-out half says nothing
SPLITS = 40
OFFLINE_WRITER = "offline"


class ShortcutProbe(BaseModel):
    pairs: int
    heldout_replies: int = 0  # how many replies the accuracies are measured on (both of each held-out pair)
    splits: int = 0  # random halvings the accuracies are the mean of
    heldout_accuracy: float | None = None
    heldout_range: tuple[float, float] | None = None  # the middle 95% of the halvings' accuracies
    decision_only_accuracy: float | None = None
    telling_words: list[str] = []
    note: str = ""

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


def offline_written(row: dict[str, Any]) -> bool:
    """Whether the offline policy wrote both replies of a pair (the probe cannot fail on such a pair)."""
    return row.get("chosen_writer") == row.get("rejected_writer") == OFFLINE_WRITER


def probe_pairs(rows: list[dict[str, Any]], seed: int = 0, splits: int = SPLITS) -> ShortcutProbe:
    """Held-out accuracy at telling chosen (1) from rejected (0), on the whole replies and on the decisions: the
    mean over `splits` random halvings of the pairs (both replies of a pair on one side)."""
    if len(rows) < MIN_PAIRS:
        return ShortcutProbe(pairs=len(rows), note=f"too few pairs to probe (fewer than {MIN_PAIRS})")
    rng = np.random.default_rng(seed)
    halvings = [rng.permutation(len(rows)) for _ in range(splits)]
    full = [_heldout_accuracy(rows, reply_text, order, seed) for order in halvings]
    decided = [_heldout_accuracy(rows, decision_text, order, seed) for order in halvings]
    low, high = np.percentile(full, [2.5, 97.5])
    return ShortcutProbe(
        pairs=len(rows),
        heldout_replies=2 * (len(rows) - len(rows) // 2),
        splits=splits,
        heldout_accuracy=round(float(np.mean(full)), 4),
        heldout_range=(round(float(low), 4), round(float(high), 4)),
        decision_only_accuracy=round(float(np.mean(decided)), 4),
        telling_words=_telling_words(rows, seed),
    )


def _replies(rows: list[dict[str, Any]], text_of: Callable[[list[dict[str, Any]]], str]) -> tuple[list[str], list[int]]:
    texts, labels = [], []
    for row in rows:
        for key, label in (("chosen", 1), ("rejected", 0)):
            texts.append(text_of(row[key]))
            labels.append(label)
    return texts, labels


def _vectorizer() -> Any:
    from sklearn.feature_extraction.text import CountVectorizer

    return CountVectorizer(binary=True, lowercase=True, token_pattern=r"(?u)\b\w[\w'-]*\b")


def _heldout_accuracy(
    rows: list[dict[str, Any]], text_of: Callable[[list[dict[str, Any]]], str], order: NDArray[np.int64], seed: int
) -> float:
    from sklearn.linear_model import LogisticRegression

    half = len(rows) // 2
    fit_texts, fit_labels = _replies([rows[i] for i in order[:half]], text_of)
    test_texts, test_labels = _replies([rows[i] for i in order[half:]], text_of)
    words = _vectorizer()
    model = LogisticRegression(max_iter=2000, C=1.0, random_state=seed).fit(words.fit_transform(fit_texts), fit_labels)
    return float(model.score(words.transform(test_texts), test_labels))


def _telling_words(rows: list[dict[str, Any]], seed: int) -> list[str]:
    """The ten words a probe fit on every pair leans on most."""
    from sklearn.linear_model import LogisticRegression

    texts, labels = _replies(rows, reply_text)
    words = _vectorizer()
    model = LogisticRegression(max_iter=2000, C=1.0, random_state=seed).fit(words.fit_transform(texts), labels)
    vocabulary = words.get_feature_names_out()
    return [str(vocabulary[i]) for i in abs(model.coef_[0]).argsort()[::-1][:10]]
