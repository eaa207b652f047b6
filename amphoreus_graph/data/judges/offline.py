"""The offline expert panels: an embedding Path classifier plus rule checks, no model needed.

All candidates of a batch are embedded in one call (speech, memories, personas), then scored:
- the soundness panel: logic (rules, and the world's own critique), consistency (does the speech agree with what
  the agent recalled, name only what it has seen, and keep its secrets?), knowledge (names that exist, aims at
  real targets). Speech that gives a secret memory away scores the lowest consistency, whatever else: agreeing
  with one's memories by saying the one thing they forbid saying is the worst inconsistency, and the
  memory-support part would otherwise reward the quote.
- the fidelity panel: Path fidelity (the Paths' affinity for the action, and the classifier's belief that the
  speech, its Path words masked, is the agent's Path), character (speech close to the agent's persona),
  narrative (rules).

Each turn is scored against the Path catalog of its own scenario, so one batch may mix worlds and catalogs.
"""

from __future__ import annotations

import asyncio

import numpy as np

from amphoreus_graph.bench.classifier import PathClassifier, path_classifier
from amphoreus_graph.catalogs.paths import PathCatalog, load_paths
from amphoreus_graph.catalogs.scenario import catalog_for
from amphoreus_graph.data.judges import rules
from amphoreus_graph.data.judges.base import JudgeItem, Panel, Verdict, clamp_score
from amphoreus_graph.models.embedder import DEFAULT_MODEL


def persona_text(item: JudgeItem) -> str:
    return " ".join([item.turn.persona, *item.turn.traits])


class OfflineJudge:
    """Both panels without a model; deterministic, batched, calibrated (see `classifier.calibration`)."""

    def __init__(self, classifier: PathClassifier | None = None, embedder_model: str = DEFAULT_MODEL) -> None:
        self.name = "offline"
        self._classifier = classifier
        self._embedder_model = embedder_model

    @property
    def classifier(self) -> PathClassifier:
        """The classifier over the packaged Path catalog (or the one given)."""
        return self.classifier_for(load_paths())

    def classifier_for(self, catalog: PathCatalog) -> PathClassifier:
        """The classifier over a catalog: the one given if it is over that catalog, else the process's own."""
        if self._classifier is not None and self._classifier.catalog.source == catalog.source:
            return self._classifier
        return path_classifier(self._embedder_model, catalog.source)

    async def ascore(self, items: list[JudgeItem]) -> list[dict[Panel, Verdict]]:
        return await asyncio.to_thread(self.score, items)

    def score(self, items: list[JudgeItem]) -> list[dict[Panel, Verdict]]:
        if not items:
            return []
        classifiers = [self.classifier_for(catalog_for(i.turn.world)) for i in items]
        embedder = classifiers[0].embedder
        speeches = [i.decision.speech or i.decision.action for i in items]
        speech_vectors = embedder.encode(speeches)
        heard = embedder.encode([c.mask.mask(s) for c, s in zip(classifiers, speeches, strict=True)])
        persona_vectors = embedder.encode([persona_text(i) for i in items])
        memories = sorted({m.text for i in items for m in i.turn.memories})
        memory_vectors = dict(zip(memories, embedder.encode(memories), strict=True)) if memories else {}
        verdicts = []
        for n, (item, classifier) in enumerate(zip(items, classifiers, strict=True)):
            probabilities = classifier.softmax(heard[n : n + 1] @ classifier.prototypes.T)[0]
            path_belief = probabilities[classifier.paths.index(item.turn.path)] / probabilities.max()
            recalled = [memory_vectors[m.text] for m in item.turn.memories]
            support = float(max(np.stack(recalled) @ speech_vectors[n])) if recalled else None
            character = float(persona_vectors[n] @ speech_vectors[n])
            verdicts.append(self._verdicts(item, float(path_belief), support, character))
        return verdicts

    @staticmethod
    def _verdicts(item: JudgeItem, path_belief: float, support: float | None, character: float) -> dict[Panel, Verdict]:
        turn, decision = item.turn, item.decision
        logic, logic_notes = rules.logic(turn, decision)
        knowledge, knowledge_notes = rules.knowledge(turn, decision)
        unknown = rules.unknown_names(turn, decision.speech)
        grounded = 1.0 - min(1.0, 0.5 * len(unknown))
        memory_fit = 0.5 if support is None else (support - 0.1) / 0.5
        discretion, discretion_notes = rules.discretion(turn, decision)
        consistency = discretion * (0.6 * min(1.0, max(0.0, memory_fit)) + 0.4 * grounded)
        narrative, narrative_notes = rules.narrative(turn, decision)
        action_fit = rules.action_fit(turn, decision.action)
        fidelity = 0.5 * action_fit + 0.5 * path_belief
        return {
            "genius_society": Verdict(
                panel="genius_society",
                scores={
                    "logic": clamp_score(logic),
                    "consistency": clamp_score(consistency),
                    "knowledge": clamp_score(knowledge),
                },
                reasoning="; ".join(logic_notes + discretion_notes + knowledge_notes) or "sound",
            ),
            "nameless": Verdict(
                panel="nameless",
                scores={
                    "path_fidelity": clamp_score(fidelity),
                    "character": clamp_score((character + 0.1) / 0.6),
                    "narrative": clamp_score(narrative),
                },
                reasoning="; ".join(
                    [
                        f"action fits the Path at {action_fit:.2f}, speech sounds of it at {path_belief:.2f}",
                        *narrative_notes,
                    ]
                ),
            ),
        }
