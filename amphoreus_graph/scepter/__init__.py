"""The Scepter: run many independent societies at once, locally (asyncio) or on a Ray cluster.

plan.py        ScepterConfig: N societies from one template (seeds, scenarios, directories), RUN/scepter.json
society.py     one society driven to its end from wherever it stands on disk (new, resume, done)
local.py       the local engine: societies as asyncio tasks sharing the embedder and a model-call bound
ray_engine.py  the Ray engine: a task per society batch, retried when a worker dies (Ray imported lazily)
ray_connect.py joining a Ray cluster at an address in bounded time, or one error line
merge.py       finished societies' shards into RUN/samples/, checked: nothing lost, nothing twice
progress.py    progress on disk per society; societies done, samples/s and ETA for the whole run
runner.py      Scepter: plan → engine → merge → RUN/summary.json
"""

from amphoreus_graph.scepter.plan import ScepterConfig, is_scepter_run, load_plan
from amphoreus_graph.scepter.progress import ScepterTracker
from amphoreus_graph.scepter.runner import Scepter

__all__ = ["Scepter", "ScepterConfig", "ScepterTracker", "is_scepter_run", "load_plan"]
