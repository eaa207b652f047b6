"""One owner per store: a run claims its society's memories when it starts and checks them when it resumes.

A new run over memories it does not own, or a resumed run whose checkpoint is missing or behind its memories,
would replay rounds on top of memories already filed (a different run from a clean one, without a word). Each
of these is one error line naming the way out: `--resume` the run that owns them, another run name, or
`--fresh-memory` to wipe the society's memories first.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from amphoreus_graph.contracts.memory import Moment
from amphoreus_graph.errors import AmphoreusError
from amphoreus_graph.layout import RunDir
from amphoreus_graph.memory.ownership import StoreOwner, forget_owner, latest_tick, read_owner, write_owner
from amphoreus_graph.memory.remembrance import Remembrance
from amphoreus_graph.memory.tally import Tally, not_as_left
from amphoreus_graph.society.ledger import FILING_NODES


def checkpoint_tick(values: dict[str, object], rounds_per_cycle: int) -> int:
    """How far the checkpoint went, as a memory tick: its world's round (0 before the first round)."""
    world = values.get("world")
    if not isinstance(world, dict):
        return 0
    return Moment.of(int(world["cycle"]), int(world["round"]), rounds_per_cycle).tick


def claim_store(
    store: Remembrance,
    owner: StoreOwner,
    *,
    resume: bool,
    checkpoint: int,
    where: str,
    fresh: bool = False,
    filed: int = 0,
    own_store: bool = False,
) -> None:
    """Check that `owner` may write the society's memories in `store`, wiping them first if `fresh`; then claim.

    `checkpoint` is how far the run's checkpoint went (a tick); the memories may not be further on than that.
    `filed`: how many records the checkpoint says the store held after its last filing (a resumed run);
    `own_store`: the store lives inside the run's directory (a copy of the run has its own copy of it)."""
    society = store.society
    if fresh:
        store.drop()
        forget_owner(store.index)
    current = read_owner(store.index)
    latest = latest_tick(store)
    way_out = "--fresh-memory to wipe them first"
    if current is not None and current.token != owner.token and never_began(current, owner, latest):
        current = None  # this run's own first start, killed before its config.json: it filed nothing
    if current is not None and current.token == owner.token and current.run_dir != owner.run_dir:
        moved_from = Path(current.run_dir)
        if not own_store and is_run_with_token(moved_from, owner.token):
            raise AmphoreusError(
                f"{where}: society {society!r}'s memories belong to the run in {moved_from}, of which "
                f"{owner.run_dir} is a copy: two runs cannot go on over one store; expected --resume {moved_from}, "
                f"or a new run from the copy with --fork {moved_from} --out NEW"
            )
        write_owner(store.index, owner)  # the run moved, or its copy brought its own store: it goes on as itself
        current = owner
    if current is not None and current.token != owner.token:
        raise AmphoreusError(
            f"{where}: society {society!r} has memories written by the run in {current.run_dir}; expected "
            f"--resume {current.run_dir}, another run name (--out), or {way_out}"
        )
    if resume and not fresh and current is None and latest is None and filed:
        raise AmphoreusError(
            f"{where}: holds none of society {society!r}'s memories, but the run's checkpoint says it filed {filed} "
            "records there (the store was deleted, emptied, or is another one); expected the run's own store back, "
            f"or --resume {owner.run_dir} --fresh-memory to rebuild it from the run's beginning"
        )
    if current is None and latest is not None:
        raise AmphoreusError(
            f"{where}: society {society!r} already has memories that no run owns; expected another run name (--out) "
            f"or {way_out}"
        )
    if current is not None and current.fingerprint != owner.fingerprint:
        raise AmphoreusError(
            f"{where}: society {society!r} was remembered with other settings than {owner.run_dir}/config.json now "
            f"says; expected that config.json as the run wrote it, or {way_out}"
        )
    if resume and latest is not None and latest > checkpoint:
        checkpoint_file = RunDir(Path(owner.run_dir)).checkpoint
        raise AmphoreusError(
            f"{checkpoint_file}: missing, empty or behind the memories in {where} (they reach tick "
            f"{latest}, the checkpoint tick {checkpoint}), so resuming would file rounds twice; expected the run's "
            f"own checkpoint back, or --resume {owner.run_dir} --fresh-memory to restart it from its beginning"
        )
    if current is None:
        write_owner(store.index, owner)


def is_run_with_token(run_dir: Path, token: str) -> bool:
    """Whether `run_dir` holds a run whose config says it is the run `token` names."""
    try:
        return bool(json.loads(RunDir(run_dir).config.read_text(encoding="utf-8")).get("run_token") == token)
    except (OSError, ValueError, AttributeError):
        return False


def never_began(current: StoreOwner, claimant: StoreOwner, latest: int | None) -> bool:
    """The claim of an earlier start of the same run directory that filed no memory and wrote no config.json:
    killed as it started, it can never be resumed, and starting the run again is the way on."""
    return current.run_dir == claimant.run_dir and latest is None and not RunDir(Path(current.run_dir)).config.exists()


def check_store_tally(store: Remembrance, values: dict[str, Any], upcoming: tuple[str, ...], where: str) -> None:
    """A resumed run's store must hold what its checkpoint says the last filing left (memory/tally.py), unless the
    step the run resumes with is a filing (the store may already hold it: it was written, then the run was killed
    before its checkpoint; that step checks it exactly before it writes). One line otherwise, before anything runs."""
    if not values.get("memory_tally") or FILING_NODES & set(upcoming):
        return
    expected, held = Tally.of_json(values["memory_tally"]), store.tally()
    if held != expected:
        raise AmphoreusError(not_as_left(where, store.society, held, expected))
