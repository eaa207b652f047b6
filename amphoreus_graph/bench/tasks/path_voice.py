"""Path-Voice: every Path's subject answers open situations; whose Path does the speech alone reveal?

Scored by the embedding Path classifier offline or a model judge (`--judge`); reports accuracy per Path and
a confusion matrix (rows: the subject's Path, columns: the Path the judge heard).
"""

from __future__ import annotations

import asyncio

from amphoreus_graph.actions import ACTION_TARGETS, Action, TargetKind
from amphoreus_graph.bench.items import VoiceItem, load_items
from amphoreus_graph.bench.subjects import pose, subjects
from amphoreus_graph.bench.tasks.base import BenchSettings, ItemScore, TaskResult
from amphoreus_graph.bench.voice_judge import resolve_voice_judge
from amphoreus_graph.catalogs.paths import load_paths
from amphoreus_graph.catalogs.scenario import scenario_of
from amphoreus_graph.contracts.turn import Policy, TurnContext


def open_options(heir: str) -> dict[Action, list[str]]:
    """Every action but delivery, aimed at a couple of heirs, one Titan and one place: nothing forces a Path."""
    scenario = scenario_of("amphoreus")
    targets = {
        TargetKind.NONE: [],
        TargetKind.HEIR: [h for h in scenario.heir_names if h != heir][:2],
        TargetKind.TITAN: [scenario.titans[0].name],
        TargetKind.LOCATION: [scenario.locations[1].name],
    }
    return {a: targets[k] for a, k in ACTION_TARGETS.items() if a is not Action.DELIVER_COREFLAME}


def voice_turn(item: VoiceItem, path: str, seed: int) -> TurnContext:
    return pose(
        path,
        item_id=f"{item.id}/{path}",
        situation=f"{item.situation} Say it in your own words.",
        options=open_options(subjects()[path].heir),
        seed=seed,
    )


class PathVoiceTask:
    name = "path_voice"

    async def run(self, policy: Policy, settings: BenchSettings) -> TaskResult:
        items = load_items(self.name, VoiceItem, settings.split)
        paths = load_paths().names()
        posed = [(item, path) for item in items for path in paths]
        results = await asyncio.gather(*(policy.adecide(voice_turn(i, p, settings.seed)) for i, p in posed))
        speeches = [r.decision.speech or r.decision.action.value for r in results]
        heard = await resolve_voice_judge(settings.judge, base_url=settings.base_url).classify(speeches)
        confusion = {p: dict.fromkeys(paths, 0) for p in paths}
        scores = []
        for (item, path), guess, speech in zip(posed, heard, speeches, strict=True):
            confusion[path][guess] += 1
            scores.append(
                ItemScore(
                    item=item.id, path=path, score=float(guess == path), detail={"heard": guess, "speech": speech}
                )
            )
        return TaskResult(task=self.name, scores=scores, extra={"confusion": confusion})
