"""The Ray engine: the plan's societies in batches, one Ray task (one worker process) per batch.

A task runs its batch with the local engine, so a worker loads the embedder once and keeps each society's own
Chroma directory (or the Chroma server) and SQLite checkpoint. A worker that dies, or whose node dies, is retried
by Ray (`max_retries`, on a node still alive); the retry finds its societies on disk: finished ones are skipped,
started ones resume from their checkpoints, and the shard writer's checkpointed offsets keep every sample
exactly-once. The driver follows the societies' progress files (each names the process and Ray node running it)
and hands each finished society on to be merged.

Workers read and write RUN/ directly: on a cluster of several machines (`--address`), RUN must be on a filesystem
they all mount at the same path. Ray is imported only when this engine runs.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import AsyncGenerator
from contextlib import aclosing
from pathlib import Path
from typing import Any

from amphoreus_graph.contracts.events import SocietyDone, SocietyUpdate
from amphoreus_graph.errors import AmphoreusError
from amphoreus_graph.models.limits import share_endpoints
from amphoreus_graph.scepter.local import LocalEngine
from amphoreus_graph.scepter.plan import ScepterConfig
from amphoreus_graph.scepter.progress import read_progress
from amphoreus_graph.scepter.ray_connect import join
from amphoreus_graph.scepter.society import read_summary

RAY_HINT = "pip install 'amphoreus-graph[ray]'"
WORKER_ENV = {"HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
MAX_RETRIES = 5


def import_ray() -> Any:
    """The `ray` module, or one clear error naming the extra to install."""
    try:
        import ray
    except ImportError:
        raise AmphoreusError(f"--engine ray: Ray is not installed ({RAY_HINT})") from None
    return ray


def run_batch(plan_json: str, names: list[str], share: int) -> list[dict[str, Any]]:
    """Inside a Ray worker: run these societies of the plan to their end, with `share` model calls in flight per
    endpoint at most; return their summaries."""
    for key, value in WORKER_ENV.items():
        os.environ.setdefault(key, value)
    share_endpoints(share)
    plan = ScepterConfig.model_validate_json(plan_json)
    node = _node_id()

    async def go() -> list[dict[str, Any]]:
        summaries = []
        async for event in LocalEngine(plan, only=names, node=node).stream():
            if event["type"] == "society_done":
                summaries.append(event["summary"])
        return summaries

    return asyncio.run(go())


def _node_id() -> str:
    """The Ray node this worker runs on ("" outside Ray: a test calls `run_batch` in process)."""
    ray = import_ray()
    return str(ray.get_runtime_context().get_node_id()) if ray.is_initialized() else ""


def _changed(path: Path, stamps: dict[str, int], key: str) -> bool:
    try:
        stamp = path.stat().st_mtime_ns
    except OSError:
        return False
    if stamps.get(key) == stamp:
        return False
    stamps[key] = stamp
    return True


def batches(names: list[str], workers: int) -> list[list[str]]:
    """Deal societies round-robin into at most `workers` batches (scenarios cycle, so batches stay alike)."""
    count = max(1, min(workers, len(names)))
    return [names[i::count] for i in range(count)]


def shares(limit: int, parts: int) -> list[int]:
    """`limit` split into `parts` shares that differ by at most one and add up to it; past `limit` parts, one each
    (a share is at least 1)."""
    if parts > limit:
        return [1] * parts
    return [limit // parts + (i < limit % parts) for i in range(parts)]


class RayEngine:
    """Runs a plan on Ray: started here (`ray_cpus`), joined (`address`), or the one this process already has.
    `asks_a_model`: whether the plan's agents ask a model (what the run's check resolved), so workers keep to shares
    of its `--max-concurrency`."""

    def __init__(self, plan: ScepterConfig, asks_a_model: bool, *, poll_s: float = 0.5) -> None:
        self.plan = plan
        self.asks_a_model = asks_a_model
        self.poll_s = poll_s

    def _connect(self, ray: Any) -> bool:
        """Start or join Ray unless it is up already; True if this engine should shut it down again."""
        if ray.is_initialized():
            return False
        kwargs: dict[str, Any] = {
            "include_dashboard": False,
            "log_to_driver": False,
            "logging_level": logging.ERROR,
            "runtime_env": {"env_vars": WORKER_ENV},
        }
        if self.plan.address:
            join(ray, self.plan.address, self.plan.connect_timeout_s, **kwargs)
            return True
        if self.plan.ray_cpus:
            kwargs["num_cpus"] = self.plan.ray_cpus
        try:
            ray.init(**kwargs)
        except Exception as exc:
            raise AmphoreusError(f"a local Ray: cannot start it ({type(exc).__name__}: {exc})") from None
        return True

    async def stream(self) -> AsyncGenerator[dict[str, Any], None]:
        ray = import_ray()
        owned = self._connect(ray)
        try:
            async with aclosing(self._run(ray)) as events:
                async for event in events:
                    yield event
        finally:
            if owned:
                ray.shutdown()

    async def _run(self, ray: Any) -> AsyncGenerator[dict[str, Any], None]:
        configs = {c.run_id: c for c in self.plan.society_configs()}
        # Workers share each endpoint's --max-concurrency: a run whose agents ask a model has at most one worker per
        # call of the limit, so that the shares add up to it; an offline run uses every CPU (a game master's
        # endpoint then gets at least one call per worker).
        t = self.plan.template
        cpus = int(ray.cluster_resources().get("CPU", 1))
        workers = min(cpus, t.max_concurrency) if self.asks_a_model else cpus
        task = ray.remote(run_batch).options(
            num_cpus=1, max_retries=MAX_RETRIES, retry_exceptions=False, runtime_env={"env_vars": WORKER_ENV}
        )
        plan_json = self.plan.model_dump_json()
        dealt = batches(list(configs), workers)
        pending = {
            task.remote(plan_json, batch, share): batch
            for batch, share in zip(dealt, shares(t.max_concurrency, len(dealt)), strict=True)
        }
        reported: set[str] = set()
        stamps: dict[str, int] = {}
        try:
            while pending:
                ready, _ = await asyncio.to_thread(ray.wait, list(pending), num_returns=1, timeout=self.poll_s)
                for name, cfg in configs.items():  # progress as the workers wrote it (read when it changed)
                    if name in reported or not _changed(cfg.files.progress, stamps, name):
                        continue
                    found = read_progress(cfg.out)
                    if found is None:
                        continue
                    yield SocietyUpdate(**found).payload()
                    if found.get("done"):
                        reported.add(name)
                        yield SocietyDone(society=name, summary=read_summary(cfg)).payload()
                for ref in ready:
                    batch = pending.pop(ref)
                    for summary in self._result(ray, ref, batch):
                        if summary["run"] not in reported:
                            reported.add(summary["run"])
                            yield SocietyDone(society=summary["run"], summary=summary).payload()
        finally:
            for ref in pending:  # an error or an interrupt: stop the rest (each society can resume)
                ray.cancel(ref)

    @staticmethod
    def _result(ray: Any, ref: Any, batch: list[str]) -> list[dict[str, Any]]:
        try:
            return list(ray.get(ref))
        except ray.exceptions.RayTaskError as exc:
            cause = getattr(exc, "cause", None)
            if isinstance(cause, AmphoreusError):
                raise AmphoreusError(str(cause)) from None
            raise
        except ray.exceptions.WorkerCrashedError:
            raise AmphoreusError(
                f"societies {batch[0]}…: a Ray worker died {MAX_RETRIES + 1} times running them; "
                "expected it to live (resume with --resume RUN)"
            ) from None
