"""Path-Voice: every Path's subject answers open situations; whose Path does the speech alone reveal?

Scored by the embedding Path classifier offline or a model judge (`--judge`); reports accuracy per Path and
a confusion matrix (rows: the subject's Path, columns: the Path the judge heard), and beside them the judge's
own accuracy on hand-written utterances (`judge_accuracy`), so a score can be read against its judge.
"""

from __future__ import annotations

import asyncio

from amphoreus_graph.bench.items import ItemSet, VoiceItem, item_set
from amphoreus_graph.bench.subjects import Stage, stage
from amphoreus_graph.bench.tasks.base import BenchSettings, ItemScore, TaskResult
from amphoreus_graph.contracts.turn import Policy, TurnContext


def voice_turn(world: Stage, item: VoiceItem, path: str, seed: int) -> TurnContext:
    """An open turn: everything the subject is offered as a cycle begins, so nothing forces a Path."""
    return world.pose(
        path,
        item_id=f"{item.id}/{path}",
        situation=f"{item.situation} Say it in your own words.",
        options=world.open_options(path),
        seed=seed,
    )


class PathVoiceTask:
    name = "path_voice"
    item_model = VoiceItem

    async def speak(
        self, policy: Policy, settings: BenchSettings
    ) -> tuple[ItemSet[VoiceItem], list[tuple[VoiceItem, str]], list[str]]:
        """Every item posed to every Path's subject and answered; no judge yet (a recorded bench stops here)."""
        world = stage(settings.scenario)
        posed = item_set(self.name, self.item_model, settings)
        asked = [(item, path) for item in posed.items for path in world.catalog.names()]
        results = await asyncio.gather(*(policy.adecide(voice_turn(world, i, p, settings.seed)) for i, p in asked))
        return posed, asked, [r.decision.speech or r.decision.action for r in results]

    async def run(self, policy: Policy, settings: BenchSettings) -> TaskResult:
        from amphoreus_graph.bench.voice_judge import judge_accuracy, resolve_voice_judge  # the embedder: on use

        posed, asked, speeches = await self.speak(policy, settings)
        catalog = stage(settings.scenario).catalog
        paths = catalog.names()
        judge = resolve_voice_judge(settings.judge, base_url=settings.base_url, catalog=catalog)
        heard = await judge.classify(speeches)
        confusion = {p: dict.fromkeys(paths, 0) for p in paths}
        scores = []
        for (item, path), guess, speech in zip(asked, heard, speeches, strict=True):
            confusion[path][guess] += 1
            scores.append(
                ItemScore(
                    item=item.id, path=path, score=float(guess == path), detail={"heard": guess, "speech": speech}
                )
            )
        extra = {"confusion": confusion, "judge_accuracy": await judge_accuracy(judge)}
        return TaskResult(task=self.name, scores=scores, extra=extra, skipped=posed.skipped)
