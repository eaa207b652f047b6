"""The graphs as LangGraph Studio runs them: the real `langgraph dev` server, driven through langgraph-sdk.

One server is started per module (its first graph import loads torch, so it takes a while); the tests
stream runs through the HTTP API exactly as Studio would, offline, with memory and samples in tmp dirs.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from amphoreus_graph.contracts.events import parse_event

langgraph_sdk = pytest.importorskip("langgraph_sdk")

ROOT = Path(__file__).resolve().parents[1]
LANGGRAPH = Path(sys.executable).with_name("langgraph")
READY_TIMEOUT_S = 120.0
RUN_TIMEOUT_S = 90.0

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not LANGGRAPH.exists(), reason="langgraph-cli[inmem] is not installed (pip install -e .[dev])"),
]


@dataclass
class Server:
    url: str
    runs_dir: Path
    memory_dir: Path
    log: Path


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def server_env(memory_dir: Path, runs_dir: Path) -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("AMPHOREUS_", "LANGSMITH_", "LANGCHAIN_", "LANGGRAPH_"))
    }
    env.update(
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        TOKENIZERS_PARALLELISM="false",
        ANONYMIZED_TELEMETRY="False",
        DO_NOT_TRACK="1",
        LANGSMITH_TRACING="false",
        LANGCHAIN_TRACING_V2="false",
        LANGGRAPH_CLI_NO_ANALYTICS="1",
        LANGGRAPH_NO_VERSION_CHECK="true",
        AMPHOREUS_MEMORY_DIR=str(memory_dir),
        AMPHOREUS_RUNS_DIR=str(runs_dir),
        AMPHOREUS_STORE_DIR=str(memory_dir.parent / "store"),
        PYTHONUNBUFFERED="1",
    )
    return env


def wait_ready(url: str, process: subprocess.Popen[bytes], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"langgraph dev exited with {process.returncode} before it was ready")
        try:
            with urllib.request.urlopen(f"{url}/ok", timeout=2) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.5)
    raise TimeoutError(f"langgraph dev not ready at {url} after {timeout:.0f}s")


def stop(process: subprocess.Popen[bytes]) -> None:
    """Terminate the server's whole process group (uvicorn may have children), then kill what is left."""
    if process.poll() is None:
        try:
            os.killpg(process.pid, signal.SIGTERM)
        except ProcessLookupError:
            return
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)
    with contextlib.suppress(ProcessLookupError, PermissionError):  # children that outlived the leader
        os.killpg(process.pid, signal.SIGKILL)


@contextlib.contextmanager
def studio_server(argv: list[str], cwd: Path, env: dict[str, str], log: Path) -> Iterator[str]:
    """`argv` (a Studio server command) on a free loopback port in its own process group, its output in `log`;
    yields its URL once it answers, and stops it and its children afterwards."""
    port = free_port()
    with open(log, "wb") as sink:
        process = subprocess.Popen(
            [*argv, "--port", str(port), "--no-browser"],
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        wait_ready(f"http://127.0.0.1:{port}", process, 120)
        yield f"http://127.0.0.1:{port}"
    finally:
        stop(process)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Iterator[Server]:
    base = tmp_path_factory.mktemp("studio")
    runs_dir, memory_dir, log = base / "runs", base / "memory", base / "langgraph-dev.log"
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    failed_before = request.session.testsfailed
    with open(log, "wb") as sink:
        process = subprocess.Popen(
            [str(LANGGRAPH), "dev", "--port", str(port), "--host", "127.0.0.1", "--no-browser", "--no-reload"],
            cwd=ROOT,
            env=server_env(memory_dir, runs_dir),
            stdin=subprocess.DEVNULL,
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            try:
                wait_ready(url, process, READY_TIMEOUT_S)
            except Exception:
                failed_before = -1
                raise
            yield Server(url=url, runs_dir=runs_dir, memory_dir=memory_dir, log=log)
        finally:
            stop(process)
            if request.session.testsfailed != failed_before:
                sys.stderr.write(f"\n----- langgraph dev log ({log}) -----\n")
                sys.stderr.write(log.read_text(encoding="utf-8", errors="replace")[-20000:])
                sys.stderr.write("\n----- end of langgraph dev log -----\n")


def log_tail(server: Server, chars: int = 6000) -> str:
    return server.log.read_text(encoding="utf-8", errors="replace")[-chars:]


async def stream_run(
    client: Any,
    thread_id: str,
    payload: dict[str, Any] | None,
    stop_after: str | None = None,
    graph: str = "society",
    command: dict[str, Any] | None = None,
    context: dict[str, Any] | None = None,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[Any], str | None]:
    """Stream a run of `graph` (or resume one with `command`); return its custom events, values snapshots,
    errors, and run id."""
    custom: list[dict[str, Any]] = []
    values: list[dict[str, Any]] = []
    errors: list[Any] = []
    run_id: str | None = None
    stream = client.runs.stream(
        thread_id,
        graph,
        input=payload,
        command=command,
        context=context,
        stream_mode=["custom", "values"],
        on_disconnect="cancel",
    )
    async with contextlib.aclosing(stream):  # leaving early disconnects, and the server cancels the run
        async for part in stream:
            if part.event == "metadata":
                run_id = part.data.get("run_id")
            elif part.event == "custom":
                parse_event(part.data)  # every event a graph streams is one of the typed progress events
                custom.append(part.data)
                if stop_after is not None and part.data.get("type") == stop_after:
                    break
            elif part.event == "values":
                values.append(part.data)
            elif part.event == "error":
                errors.append(part.data)
    return custom, values, errors, run_id


async def wait_settled(client: Any, thread_id: str, run_id: str, timeout: float = 30.0) -> str:
    """Wait until a run is no longer pending or running (a cancelled one must not hold the worker)."""
    deadline = time.monotonic() + timeout
    while True:
        run = await client.runs.get(thread_id, run_id)
        if run["status"] not in ("pending", "running") or time.monotonic() > deadline:
            return str(run["status"])
        await asyncio.sleep(0.2)


async def test_every_graph_is_described_and_runs_on_defaults(server: Server) -> None:
    """What Studio shows before a run: each graph's description, and input and context forms in which every
    field is explained and has a default (so Submit with nothing filled in is a valid run)."""
    client = langgraph_sdk.get_client(url=server.url)
    declared = json.loads((ROOT / "langgraph.json").read_text(encoding="utf-8"))["graphs"]
    assistants = {a["graph_id"]: a for a in await client.assistants.search(limit=50)}
    assert set(assistants) == set(declared), log_tail(server)
    for graph_id, assistant in assistants.items():
        assert len((assistant["description"] or "").strip()) > 40, (graph_id, assistant["description"])
        schemas = await client.assistants.get_schemas(assistant["assistant_id"])
        forms = {"input": schemas["input_schema"], "context": schemas["context_schema"]}
        assert forms["input"] is not None, f"{graph_id}: no input schema\n{log_tail(server)}"
        for form, schema in forms.items():
            if schema is None:  # no runtime context: nothing to fill in
                continue
            fields = schema["properties"]
            assert fields and not schema.get("required"), (graph_id, form, schema.get("required"))
            assert [f for f, spec in fields.items() if "default" not in spec] == [], (graph_id, form)
            assert [f for f, spec in fields.items() if not spec.get("description")] == [], (graph_id, form)


async def test_society_trio_streams_progress_and_writes_samples(server: Server) -> None:
    client = langgraph_sdk.get_client(url=server.url)
    thread = await client.threads.create()
    thread_id = thread["thread_id"]

    custom, values, errors, _ = await asyncio.wait_for(
        stream_run(client, thread_id, {"scenario": "trio", "rounds": 2, "seed": 3}), RUN_TIMEOUT_S
    )
    assert not errors, f"run failed: {errors}\n{log_tail(server)}"

    types = [event.get("type") for event in custom]
    assert types.count("round_started") == 2, types
    assert types.count("round_done") == 2, types
    assert types.count("turn_done") == 6, types
    heirs = {e["agent"] for e in custom if e.get("type") == "turn_done"}
    assert len(heirs) == 3, heirs
    assert [e["round"] for e in custom if e.get("type") == "round_done"] == [1, 2]
    assert values, "no values were streamed"

    state = await client.threads.get_state(thread_id)
    final = state["values"]
    assert not state["next"], state["next"]
    assert final["world"]["round"] == 2
    assert final["world"]["outcome"]
    assert final["run_id"] == thread_id
    assert final["stats"]["turns"] == 6
    assert final["stats"]["samples_written"] == 6
    assert values[-1]["world"]["round"] == 2

    samples_dir = server.runs_dir / thread_id / "samples"
    shards = sorted(samples_dir.glob("cycle-*.jsonl"))
    assert shards, f"no samples under {samples_dir}"
    rows = [json.loads(line) for shard in shards for line in shard.read_text(encoding="utf-8").splitlines() if line]
    assert len(rows) == 6
    assert {row["run"] for row in rows} == {thread_id}
    assert sorted((row["round"], row["agent"]) for row in rows) == sorted((r, h) for r in (1, 2) for h in heirs)
    assert any(server.memory_dir.iterdir()), "memory was not written under AMPHOREUS_MEMORY_DIR"

    from amphoreus_graph.report import load_run  # a Studio thread's directory makes a report too

    report = load_run(server.runs_dir / thread_id, judge_alignment=False)
    assert report.scenario == "trio" and [(c.rounds, len(c.turns)) for c in report.cycles] == [(2, 6)]


async def test_a_thread_rerun_with_another_model_runs_with_that_model(server: Server) -> None:
    """Run dependencies travel in each run's context, not in a registry keyed by the thread: the second run of a
    thread, asked for another model, decides with that model."""
    client = langgraph_sdk.get_client(url=server.url)
    thread_id = (await client.threads.create())["thread_id"]
    for cycle, model in ((1, "offline"), (2, "random")):
        payload = {"scenario": "trio", "rounds": 1, "seed": 3, "cycle": cycle}
        _, _, errors, _ = await asyncio.wait_for(
            stream_run(client, thread_id, payload, context={"model": model}), RUN_TIMEOUT_S
        )
        assert not errors, f"run with {model} failed: {errors}\n{log_tail(server)}"
    samples = server.runs_dir / thread_id / "samples"
    models = {
        cycle: {json.loads(line)["model"] for line in (samples / f"cycle-000{cycle}.jsonl").read_text().splitlines()}
        for cycle in (1, 2)
    }
    assert models == {1: {"offline"}, 2: {"random"}}


async def test_society_runs_from_empty_input(server: Server) -> None:
    """Studio's Submit with nothing filled in: the input schema has defaults and a run starts from {}.

    The default scenario runs a full 12-round cycle, too long here: the run is cancelled after its first
    round completes, which is enough to show genesis, a full round, and sample writing work on defaults.
    """
    client = langgraph_sdk.get_client(url=server.url)

    assistants = await client.assistants.search(graph_id="society")
    assert assistants, "langgraph dev registered no assistant for the society graph"
    schemas = await client.assistants.get_schemas(assistants[0]["assistant_id"])
    properties = schemas["input_schema"]["properties"]
    assert properties["scenario"]["default"] == "amphoreus"
    assert properties["seed"]["default"] == 7
    assert schemas["input_schema"].get("required", []) == []
    # Studio draws the state and output panels from these; None means langgraph-api failed to build them
    assert schemas["state_schema"] is not None, f"no state schema\n{log_tail(server)}"
    assert schemas["output_schema"] is not None, f"no output schema\n{log_tail(server)}"
    assert schemas["context_schema"]["properties"]["memory_dir"]["default"] == "memory/chroma"

    thread = await client.threads.create()
    thread_id = thread["thread_id"]
    custom, _, errors, run_id = await asyncio.wait_for(
        stream_run(client, thread_id, {}, stop_after="round_done"), RUN_TIMEOUT_S
    )
    assert not errors, f"run failed: {errors}\n{log_tail(server)}"
    types = [event.get("type") for event in custom]
    assert types[0] == "cycle_started", types
    assert custom[0]["agents"] == 12
    assert types.count("turn_done") == 12, types
    assert types[-1] == "round_done", types
    assert run_id is not None
    assert await wait_settled(client, thread_id, run_id) in ("interrupted", "success"), log_tail(server)
    samples_dir = server.runs_dir / thread_id / "samples"
    assert sorted(samples_dir.glob("cycle-*.jsonl")), f"no samples under {samples_dir}"


async def test_recurrence_carries_memories_across_cycles(server: Server) -> None:
    """The second exported graph: two short trio cycles, each ended by `end_cycle`."""
    client = langgraph_sdk.get_client(url=server.url)
    thread = await client.threads.create()
    thread_id = thread["thread_id"]
    custom, _, errors, _ = await asyncio.wait_for(
        stream_run(client, thread_id, {"scenario": "trio", "rounds": 1, "cycles": 2, "seed": 5}, graph="recurrence"),
        RUN_TIMEOUT_S,
    )
    assert not errors, f"run failed: {errors}\n{log_tail(server)}"
    types = [event.get("type") for event in custom]
    assert types.count("cycle_started") == 2, types
    assert types.count("cycle_done") == 2, types
    assert types.count("turn_done") == 6, types

    state = await client.threads.get_state(thread_id)
    final = state["values"]
    assert not state["next"], state["next"]
    assert [s["rounds"] for s in final["cycle_summaries"]] == [1, 1]
    assert final["stats"]["turns"] == 6
    shards = sorted((server.runs_dir / thread_id / "samples").glob("cycle-*.jsonl"))
    assert len(shards) == 2, shards

    # The thread wrote its run's config, so its agents can be interviewed from Studio as a CLI run's can.
    asked = {"run": str(server.runs_dir / thread_id), "agent": "Cyrene", "question": "What do you remember?"}
    interview_thread = (await client.threads.create())["thread_id"]
    _, values, errors, _ = await asyncio.wait_for(
        stream_run(client, interview_thread, asked, graph="interview"), RUN_TIMEOUT_S
    )
    assert not errors, f"interview failed: {errors}\n{log_tail(server)}"
    answered = values[-1]
    assert answered["agent"] == "Cyrene" and answered["answer"] and answered["decided_by"] == "offline"
    lived = {(m["cycle"], m["kind"]) for m in answered["memories"]}
    assert {(1, "cycle_echo"), (2, "cycle_echo")} <= lived, "Cyrene keeps all: both cycles' ends, through the reset"
    assert all("sky of Amphoreus" not in m["text"] for m in answered["memories"]), "never Anaxagoras' own seed"


async def test_human_expert_judges_through_an_interrupt(server: Server, tmp_path: Path) -> None:
    """The experts graph pauses with two candidates side by side; resuming with a choice lands the pair."""
    client = langgraph_sdk.get_client(url=server.url)
    society = await client.threads.create()
    _, _, errors, _ = await asyncio.wait_for(
        stream_run(client, society["thread_id"], {"scenario": "trio", "rounds": 1, "seed": 9}), RUN_TIMEOUT_S
    )
    assert not errors, f"society run failed: {errors}\n{log_tail(server)}"

    thread = await client.threads.create()
    request = {
        "run_dir": str(server.runs_dir / society["thread_id"]),
        "out_dir": str(tmp_path),
        "max_turns": 1,
        "human": True,
    }
    await asyncio.wait_for(client.runs.wait(thread["thread_id"], "experts", input=request), RUN_TIMEOUT_S)
    state = await client.threads.get_state(thread["thread_id"])
    assert state["next"] == ["human_review"], f"{state['next']}\n{log_tail(server)}"
    shown = state["tasks"][0]["interrupts"][0]["value"]
    assert {"A", "B", "question", "answer_schema"} <= set(shown)
    assert shown["A"]["decision"]["action"] and shown["B"]["decision"]["action"]
    assert set(shown["A"]["panels"]) == {"genius_society", "nameless"}

    verdict = {"resume": {"choice": "A", "reason": "truer"}}
    custom, _, errors, _ = await asyncio.wait_for(
        stream_run(client, thread["thread_id"], None, graph="experts", command=verdict), RUN_TIMEOUT_S
    )
    assert not errors, f"resumed run failed: {errors}\n{log_tail(server)}"
    assert [e["type"] for e in custom] == ["turn_reviewed", "pairs_written"], custom
    assert custom[0]["choice"] == "A" and (custom[0]["index"], custom[0]["of"]) == (1, 1)
    state = await client.threads.get_state(thread["thread_id"])
    assert not state["next"], f"{state['next']}\n{log_tail(server)}"
    assert state["values"]["report"]["decided_by_human"] == 1
    rows = [json.loads(line) for line in (tmp_path / "dpo.jsonl").read_text().splitlines()]
    assert len(rows) == 1 and rows[0]["decided_by"] == "human"
    assert rows[0]["chosen"][0]["content"] == json.dumps(shown["A"]["decision"], ensure_ascii=False, sort_keys=True)


async def test_experts_from_empty_input_judge_the_newest_run(server: Server) -> None:
    """Submit on `experts` with nothing filled in judges the run just made, reporting each step as it goes."""
    client = langgraph_sdk.get_client(url=server.url)
    society = await client.threads.create()
    _, _, errors, _ = await asyncio.wait_for(
        stream_run(client, society["thread_id"], {"scenario": "trio", "rounds": 1, "seed": 11}), RUN_TIMEOUT_S
    )
    assert not errors, f"society run failed: {errors}\n{log_tail(server)}"
    run_dir = server.runs_dir / society["thread_id"]

    thread = await client.threads.create()
    custom, _, errors, _ = await asyncio.wait_for(
        stream_run(client, thread["thread_id"], {}, graph="experts"), RUN_TIMEOUT_S
    )
    assert not errors, f"experts run failed: {errors}\n{log_tail(server)}"
    events = {e["type"]: e for e in custom}
    assert list(events) == ["turns_selected", "candidates_proposed", "candidates_scored", "pairs_written"], custom
    assert len(custom) == len(events), custom
    assert events["turns_selected"]["run_dir"] == str(run_dir)
    assert events["turns_selected"]["turns"] == events["turns_selected"]["of"] == 3  # trio: 3 heirs, 1 round
    assert events["candidates_proposed"]["candidates"] == events["candidates_scored"]["candidates"] == 3 * (1 + 4)
    assert events["pairs_written"]["out_dir"] == str(run_dir / "judged")
    pairs = (run_dir / "judged" / "dpo.jsonl").read_text(encoding="utf-8").splitlines()
    written = events["pairs_written"]
    assert (
        len(pairs) == written["pairs"]
        and written["pairs"] + written["ties_dropped"] + written["dropped_for_balance"] == 3
    ), "every judged turn is a pair, a tie, or left out to keep the acts in balance"


async def test_benchmark_graph_streams_progress_and_writes_a_leaderboard(server: Server, tmp_path: Path) -> None:
    client = langgraph_sdk.get_client(url=server.url)
    thread = await client.threads.create()
    tasks = ["path_choice", "erudition"]
    payload = {"models": ["offline", "random"], "tasks": tasks, "out_dir": str(tmp_path)}
    custom, _, errors, _ = await asyncio.wait_for(
        stream_run(client, thread["thread_id"], payload, graph="benchmark"), RUN_TIMEOUT_S
    )
    assert not errors, f"run failed: {errors}\n{log_tail(server)}"
    board = json.loads((tmp_path / "leaderboard.json").read_text())
    assert [r["model"] for r in board["models"]] == ["offline", "random"]
    for row in board["models"]:  # models run in parallel: each one's events are in order among themselves
        mine = [(e["type"], e.get("task")) for e in custom if e.get("model") == row["model"]]
        assert mine == [
            ("task_started", "path_choice"),
            ("task_done", "path_choice"),
            ("task_started", "erudition"),
            ("task_done", "erudition"),
            ("model_done", None),
        ], mine
        done = {e["task"]: e["score"] for e in custom if e["type"] == "task_done" and e["model"] == row["model"]}
        assert done == {t: row["tasks"][t]["score"] for t in tasks}
    assert custom[-1] == {
        "type": "leaderboard_written",
        "out_dir": str(tmp_path),
        "ranking": [{"model": r["model"], "pes_score": r["pes_score"]} for r in board["models"]],
    }


async def test_a_recurrence_thread_is_branched_by_the_fork_graph(server: Server) -> None:
    """A thread run in Studio writes its run directory's config, so the fork graph can replay it to a round and
    go on with another seed: the same past (samples byte for byte), its own future, the thread's files untouched."""
    client = langgraph_sdk.get_client(url=server.url)
    thread_id = (await client.threads.create())["thread_id"]
    lived = {"scenario": "trio", "rounds": 3, "cycles": 2, "seed": 3}
    _, _, errors, _ = await asyncio.wait_for(stream_run(client, thread_id, lived, graph="recurrence"), RUN_TIMEOUT_S)
    assert not errors, f"run failed: {errors}\n{log_tail(server)}"
    parent = server.runs_dir / thread_id
    before = {p: p.read_bytes() for p in parent.rglob("*") if p.is_file()}
    out = server.runs_dir / "what-if"
    fork_thread = (await client.threads.create())["thread_id"]
    asked = {"run_dir": str(parent), "at": "1/2", "seed": 99, "out_dir": str(out)}
    custom, values, errors, _ = await asyncio.wait_for(
        stream_run(client, fork_thread, asked, graph="fork"), RUN_TIMEOUT_S
    )
    assert not errors, f"fork failed: {errors}\n{log_tail(server)}"
    types = [event["type"] for event in custom]
    assert types[0] == "forked" and types[-1] == "done" and "round_done" in types, types
    assert values[-1]["summary"]["samples_written"] == 3 * 3 * 2
    ours, theirs = (out / "samples" / "cycle-0001.jsonl").read_text(), (parent / "samples" / "cycle-0001.jsonl")
    shared = [json.loads(row)["round"] <= 2 for row in theirs.read_text().splitlines()]
    pairs = zip(theirs.read_text().splitlines(), ours.splitlines(), strict=True)
    assert [a == b for a, b in pairs] == shared, "the same past up to 1/2, then the branch's own seed"
    assert {p: p.read_bytes() for p in parent.rglob("*") if p.is_file()} == before


async def test_a_fork_that_cannot_be_faithful_is_one_line_in_studio(server: Server, tmp_path: Path) -> None:
    client = langgraph_sdk.get_client(url=server.url)
    thread_id = (await client.threads.create())["thread_id"]
    asked = {"run_dir": str(tmp_path / "no-run"), "at": "1/1", "out_dir": str(tmp_path / "branch")}
    _, _, errors, _ = await asyncio.wait_for(stream_run(client, thread_id, asked, graph="fork"), RUN_TIMEOUT_S)
    assert len(errors) == 1 and "config.json: no such file" in errors[0]["message"], errors
    assert not (tmp_path / "branch").exists()


async def test_a_scenario_naming_code_is_refused_and_never_runs(server: Server, tmp_path: Path) -> None:
    """The server takes data only (langgraph.json sets AMPHOREUS_DATA_ONLY): a scenario whose world is a Python file
    beside it is refused in one line before the file is imported (docs/trust.md)."""
    folder = tmp_path / "garden"
    shutil.copytree(ROOT / "tests" / "worlds" / "toy", folder)
    plugin = folder / "garden.py"
    plant = "from pathlib import Path as _P\n_P(__file__).with_name('ran.txt').write_text('ran')\n"
    plugin.write_text(plugin.read_text(encoding="utf-8") + "\n" + plant, encoding="utf-8")
    client = langgraph_sdk.get_client(url=server.url)
    thread_id = (await client.threads.create())["thread_id"]
    asked = {"scenario": str(folder / "toy.yaml"), "rounds": 1}
    _, _, errors, _ = await asyncio.wait_for(stream_run(client, thread_id, asked), RUN_TIMEOUT_S)
    assert len(errors) == 1 and "world: 'garden.py:load' names code" in errors[0]["message"], errors
    assert "\n" not in errors[0]["message"] and "AMPHOREUS_TRUST_CODE=1" in errors[0]["message"]
    assert not (folder / "ran.txt").exists()


async def test_the_store_api_runs_on_chroma_store(server: Server) -> None:
    """ChromaStore behind the server's store API (what Studio and langgraph-sdk's `client.store` call): langgraph.json's
    `"store"` is the factory in graphs/store.py. On this module's server rather than one of its own: a second
    `langgraph dev` would load torch again only to serve four store calls."""
    store = langgraph_sdk.get_client(url=server.url).store
    await store.put_item(["notes", "u1"], "dish", {"text": "Their favourite dish is mushroom risotto"})
    await store.put_item(["notes", "u1"], "home", {"text": "They live in a flat by the sea"})
    await store.put_item(["notes", "u2"], "brief", {"text": "Gone in a minute"}, ttl=1)
    assert (await store.get_item(["notes", "u1"], "dish"))["value"]["text"].endswith("risotto")
    found = (await store.search_items(["notes", "u1"], query="what food do they like?", limit=1))["items"]
    assert [item["key"] for item in found] == ["dish"] and found[0]["score"] is not None
    listed = (await store.list_namespaces(prefix=["notes"]))["namespaces"]
    assert [tuple(ns) for ns in listed] == [("notes", "u1"), ("notes", "u2")]
    await store.delete_item(["notes", "u1"], "home")
    assert [i["key"] for i in (await store.search_items(["notes"], limit=10))["items"]] == ["brief", "dish"]
    assert (server.memory_dir.parent / "store" / "amphoreus.lock").exists()
