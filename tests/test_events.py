"""Progress events: one typed union (amphoreus_graph/contracts/events.py) that every producer builds its events from,
and the docs' table of them generated from it."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from amphoreus_graph.contracts.events import (
    EVENTS,
    Done,
    ProgressEvent,
    RoundDone,
    SocietyDone,
    TurnDone,
    markdown_table,
    parse_event,
)
from amphoreus_graph.society.runner import RunConfig, Simulation
from tests.conftest import REPO


def test_the_docs_table_is_the_generated_one() -> None:
    done = subprocess.run([sys.executable, "tools/event_table.py", "--check"], cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert all(f"`{event.model_fields['type'].default}`" in markdown_table() for event in EVENTS)


def test_every_type_is_one_event_and_an_unknown_one_is_refused() -> None:
    kinds = [event.model_fields["type"].default for event in EVENTS]
    assert len(kinds) == len(set(kinds))
    with pytest.raises(ValidationError):
        parse_event({"type": "turn_finished", "agent": "Bo"})
    with pytest.raises(ValidationError):  # a known type with a field missing
        parse_event({"type": "turn_done", "agent": "Bo", "action": "wait", "flags": []})
    turn = parse_event({"type": "turn_done", "agent": "Bo", "action": "wait", "target": None, "flags": []})
    assert isinstance(turn, TurnDone) and turn.payload()["type"] == "turn_done"


def test_a_runs_stream_is_typed_events_from_start_to_done(tmp_path: Path) -> None:
    async def collect() -> list[ProgressEvent]:
        config = RunConfig(scenario="trio", cycles=2, rounds=2, out=tmp_path / "run")
        return [event async for event in Simulation(config).stream()]

    events = asyncio.run(collect())
    kinds = [e.type for e in events]
    assert kinds[0] == "cycle_started" and kinds[-1] == "done"
    assert {"round_started", "turn_done", "round_done", "cycle_done"} <= set(kinds)
    assert all(parse_event(json.loads(json.dumps(e.payload()))) == e for e in events), "JSON and back, unchanged"
    rounds = [e for e in events if isinstance(e, RoundDone)]
    assert [(r.cycle, r.round) for r in rounds] == [(1, 1), (1, 2), (2, 1), (2, 2)]


@pytest.mark.parametrize("societies", [1, 2])
def test_simulate_events_prints_the_runs_stream_as_json_lines(tmp_path: Path, cli, societies: int) -> None:
    """`--events`: one JSON event a line on stdout (no bars, no table), for one society or a Scepter run."""
    args = ["--scenario", "trio", "--cycles", "1", "--rounds", "2", "--societies", str(societies)]
    code, printed, err = cli("simulate", *args, "--out", str(tmp_path / "run"), "--events")
    assert code == 0, err
    events = [parse_event(json.loads(line)) for line in printed.splitlines()]
    assert isinstance(events[-1], Done) and sum(isinstance(e, Done) for e in events) == 1
    kinds = {type(e) for e in events}
    assert (RoundDone in kinds) if societies == 1 else (SocietyDone in kinds)
