"""Who says which Path a piece of speech belongs to: the embedding Path classifier, or a chat model.

Either hears the speech with every Path word and Path or Aeon name of the catalog masked
(`catalogs/path_words.py`), so a speaker earns a Path by what it says, not by saying the Path's words.
A model judge is asked to pick one Path from the catalog (each with its summary) and answer as JSON; replies
that do not name a Path are retried through the shared caller and then left to the classifier (counted).
"""

from __future__ import annotations

import asyncio
from functools import cache
from importlib import resources
from typing import Any, Protocol

import yaml
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, ConfigDict, Field

from amphoreus_graph.bench.classifier import path_classifier
from amphoreus_graph.catalogs.path_words import PathWordMask
from amphoreus_graph.catalogs.paths import PathCatalog, load_paths
from amphoreus_graph.contracts.turn import CallStats
from amphoreus_graph.models.chat import chat_caller
from amphoreus_graph.models.gateway import ChatCaller, Role, reply_text
from amphoreus_graph.models.replies import parse_reply


class VoiceJudge(Protocol):
    name: str
    catalog: PathCatalog

    async def classify(self, texts: list[str]) -> list[str]: ...


class ClassifierVoiceJudge:
    """The embedding Path classifier over the catalog (it masks the Path words itself)."""

    name = "offline"

    def __init__(self, catalog: PathCatalog | None = None) -> None:
        self.catalog = catalog or load_paths()

    async def classify(self, texts: list[str]) -> list[str]:
        classifier = await asyncio.to_thread(path_classifier, catalog=self.catalog.source)
        similarities = await asyncio.to_thread(classifier.similarities, texts)
        return [classifier.paths[int(row.argmax())] for row in similarities]


def _prompt(text: str, catalog: PathCatalog) -> list[BaseMessage]:
    listing = "\n".join(f"- {p.name}: {p.summary}" for p in catalog.paths.values())
    return [
        SystemMessage(
            "You are an expert on the Paths, the value systems characters live by. "
            "You read speech and say whose Path it is."
        ),
        HumanMessage(
            f"The Paths:\n{listing}\n\nThe speech:\n{text}\n\n"
            f"Choose one of: {', '.join(catalog.names())}\n"
            'Answer with one JSON object: {"choice": "<Path name>"}'
        ),
    ]


class PathChoice(BaseModel):
    choice: str


class ModelVoiceJudge:
    def __init__(self, *, name: str, caller: ChatCaller, catalog: PathCatalog | None = None) -> None:
        self.name = name
        self.catalog = catalog = catalog or load_paths()
        self._call = caller
        self._mask = PathWordMask.of(catalog)
        self._fallback = ClassifierVoiceJudge(catalog)
        self.stats = CallStats()
        self.fallbacks = 0

    async def classify(self, texts: list[str]) -> list[str]:
        answers = await asyncio.gather(*(self._one(t) for t in texts))
        missing = [n for n, a in enumerate(answers) if a is None]
        backup = await self._fallback.classify([texts[n] for n in missing]) if missing else []
        self.fallbacks += len(missing)
        for n, path in zip(missing, backup, strict=True):
            answers[n] = path
        return [a for a in answers if a is not None]

    async def _one(self, text: str) -> str | None:
        try:
            prompt = _prompt(self._mask.mask(text), self.catalog)
            choice = parse_reply(reply_text(await self._call(prompt, self.stats)), PathChoice).choice
        except Exception:
            return None
        return choice if choice in self.catalog else None


class VoiceProbe(BaseModel):
    """A hand-written utterance and the Path its author wrote it for."""

    model_config = ConfigDict(extra="forbid")

    path: str
    text: str = Field(min_length=1)


@cache
def voice_probes() -> tuple[VoiceProbe, ...]:
    """`data/voice_probes.yaml`: utterances written by hand, in none of any Path's catalog words (voice_probes.md)."""
    text = resources.files("amphoreus_graph.bench.data").joinpath("voice_probes.yaml").read_text(encoding="utf-8")
    return tuple(VoiceProbe.model_validate(p) for p in yaml.safe_load(text)["probes"])


async def judge_accuracy(judge: VoiceJudge) -> dict[str, Any]:
    """How often the judge hears the Path a hand-written utterance was written for: overall, per Path, and the
    confusion matrix (rows: the Path written for, columns: the Path heard). The judge's own figure, beside the
    speakers' scores it gives (on the probes written for Paths of the judge's catalog)."""
    probes = [p for p in voice_probes() if p.path in judge.catalog]
    heard = await judge.classify([p.text for p in probes])
    paths = judge.catalog.names()
    confusion = {p: dict.fromkeys(paths, 0) for p in paths}
    for probe, guess in zip(probes, heard, strict=True):
        confusion[probe.path][guess] += 1
    per_path = {p: round(100 * row[p] / sum(row.values()), 1) for p, row in confusion.items() if sum(row.values())}
    right = sum(row[p] for p, row in confusion.items())
    return {
        "judge": judge.name,
        "utterances": len(probes),
        "accuracy": round(100 * right / max(1, len(probes)), 1),
        "per_path": per_path,
        "confusion": confusion,
    }


def resolve_voice_judge(spec: str, *, base_url: str | None = None, catalog: PathCatalog | None = None) -> VoiceJudge:
    """`--judge`: "offline" (the classifier) or a chat model, over `catalog` (None: the packaged one)."""
    if spec == "offline":
        return ClassifierVoiceJudge(catalog)
    caller = chat_caller(spec, role=Role.JUDGE, base_url=base_url, temperature=0.0)
    return ModelVoiceJudge(name=spec, caller=caller, catalog=catalog)
