"""Interviews after a run: answers in character from the agent's own memories, offline or with a model, through
the CLI and the Studio graph, without changing the run."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from amphoreus_graph.catalogs.scenario import load_scenario
from amphoreus_graph.contracts.memory import Moment, gist
from amphoreus_graph.contracts.turn import RecalledMemory
from amphoreus_graph.memory.records import PUBLIC
from amphoreus_graph.society.inspect import run_memory
from amphoreus_graph.society.interview import offline_answer, persona_turn
from tests.openai_server import Behaviour, ChatRequest, always

PROMISE = "What did you promise Phainon?"
SKY = "What is the sky, really?"


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One finished trio run for the module (offline: the same memories every time)."""
    from amphoreus_graph.cli import app

    out = tmp_path_factory.mktemp("interview") / "trio"
    args = ["simulate", "--scenario", "trio", "--cycles", "1", "--rounds", "3", "--quiet", "--out", str(out)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.stdout + result.stderr
    return out


def ask(cli: Any, run: Path, agent: str, question: str, *more: str) -> dict[str, Any]:
    code, out, err = cli("interview", str(run), "--agent", agent, question, "--json", *more)
    assert code == 0, out + err
    answer: dict[str, Any] = json.loads(out)
    return answer


def held(run: Path) -> tuple[dict[str, set[str]], set[str], dict[str, Any]]:
    """Each agent's private record ids, the public ids, and every record (with its last access) as stored."""
    with run_memory(run) as (scenario, memory):
        private = {agent: {r.id for r in memory.records(agent)} for agent in scenario.agent_names}
        return private, {r.id for r in memory.public_records()}, memory.dump()


def one_error_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    return lines[0]


def test_an_offline_answer_quotes_what_the_agent_recalled(cli, run):
    answer = ask(cli, run, "Cyrene", PROMISE)
    assert answer["agent"] == "Cyrene" and answer["question"] == PROMISE
    assert answer["decided_by"] == "offline" and answer["model_use"] == {}
    memories = [RecalledMemory.model_validate(m) for m in answer["memories"]]
    assert 0 < len(memories) <= 8 and memories[0].text.startswith("Cyrene once promised Phainon")
    assert gist(memories[0].text) in answer["answer"], "the best memory is quoted, as recall gave it"
    assert "Remembrance" in answer["answer"] and answer["answer"].startswith("I am Cyrene")
    code, out, err = cli("interview", str(run), "--agent", "Cyrene", PROMISE)
    assert code == 0 and not err, err
    assert "Cyrene" in out and "offline" in out and "promised Phainon" in out


def test_an_agent_recalls_its_own_and_public_memories_never_another_agents(cli, run):
    private, public, _ = held(run)
    secrets = {"Cyrene": "Cyrene once promised Phainon", "Anaxagoras": "suspects the sky"}
    for asker, other, question in (("Anaxagoras", "Cyrene", PROMISE), ("Cyrene", "Anaxagoras", SKY)):
        answer = ask(cli, run, asker, question)
        ids = {m["id"] for m in answer["memories"]}
        assert ids and ids <= private[asker] | public, "only the asker's own records and public ones"
        assert not ids & private[other], f"{asker} was given {other}'s private memories"
        with run_memory(run) as (_, memory):
            heard = " ".join(r.text for r in memory.records(asker))
        assert secrets[other] not in heard, "precondition: the asker never heard the other's seed"
        assert secrets[other] not in answer["answer"]
        assert all(m["text"].find(secrets[other]) < 0 for m in answer["memories"])
    assert any(i.endswith(f"@{PUBLIC}") for i in public), "public records are there to be recalled"


def test_unknown_agent_missing_run_no_memories_and_unknown_model_are_one_line(cli, run, tmp_path):
    code, _, err = cli("interview", str(run), "--agent", "Nobody", PROMISE)
    assert code == 2
    line = one_error_line(err)
    assert "'Nobody'" in line and all(name in line for name in ("Cyrene", "Phainon", "Anaxagoras"))

    code, _, err = cli("interview", str(tmp_path / "nowhere"), "--agent", "Cyrene", PROMISE)
    assert code == 2 and "config.json: no such file" in one_error_line(err)

    bare = tmp_path / "bare"
    bare.mkdir()
    shutil.copy(run / "config.json", bare / "config.json")
    code, _, err = cli("interview", str(bare), "--agent", "Cyrene", PROMISE)
    assert code == 2 and "memory: no such directory" in one_error_line(err)
    assert not (bare / "memory").exists(), "no empty store was created in its place"
    (bare / "memory").mkdir()
    code, _, err = cli("interview", str(bare), "--agent", "Cyrene", PROMISE)
    assert code == 2 and "holds no memories" in one_error_line(err)

    code, _, err = cli("interview", str(run), "--agent", "Cyrene", PROMISE, "--model", "no-such-model")
    assert code == 2 and "--model 'no-such-model'" in one_error_line(err)


def test_a_model_answers_through_the_gateway_from_the_recalled_memories(cli, run, openai_server):
    pytest.importorskip("langchain_openai")
    prompts: list[str] = []

    def reply(request: ChatRequest) -> str:
        prompts.append(request.prompt)
        return "I promised to remember him, and I have."

    openai_server.replier = reply
    answer = ask(cli, run, "Cyrene", PROMISE, "--model", "served", "--base-url", openai_server.url, "-k", "4")
    assert answer["answer"] == "I promised to remember him, and I have."
    assert answer["decided_by"] == "served"
    assert openai_server.log.by_role() == {"interview": 1}
    assert answer["model_use"]["interview"]["calls"] == 1 and answer["model_use"]["interview"]["failed"] == 0
    assert len(prompts) == 1 and PROMISE in prompts[0] and "Keeper of the Long Song" in prompts[0]
    assert len(answer["memories"]) == 4
    assert all(m["text"] in prompts[0] for m in answer["memories"]), "every recalled memory is in the prompt"


def test_a_model_that_keeps_failing_is_one_line_and_no_stand_in_answers(cli, run, openai_server):
    pytest.importorskip("langchain_openai")
    openai_server.schedule = always(Behaviour.FAIL)
    served = ["--model", "served", "--base-url", openai_server.url, "--json"]
    code, out, err = cli("interview", str(run), "--agent", "Cyrene", PROMISE, *served)
    assert code == 3 and not out.strip(), out
    line = one_error_line(err)
    assert "http_status" in line and "3 attempt(s)" in line and "nothing was answered in Cyrene's place" in line
    assert openai_server.log.by_role() == {"interview": 3} and openai_server.log.by_status() == {500: 3}


def test_an_interview_changes_neither_memory_nor_samples(cli, run, openai_server):
    pytest.importorskip("langchain_openai")
    files = sorted(p for p in run.rglob("*") if p.is_file() and "memory" not in p.relative_to(run).parts)
    before_bytes = {p: p.read_bytes() for p in files}
    _, _, before = held(run)
    for agent in ("Cyrene", "Phainon", "Anaxagoras"):
        ask(cli, run, agent, PROMISE)
    ask(cli, run, "Cyrene", SKY, "--model", "served", "--base-url", openai_server.url)
    _, _, after = held(run)
    assert after == before, "records and their last access are as the run left them"
    now = sorted(p for p in run.rglob("*") if p.is_file() and "memory" not in p.relative_to(run).parts)
    assert now == files and {p: p.read_bytes() for p in now} == before_bytes, "samples and the rest untouched"
    assert any(p.parent.name == "samples" for p in files)


def test_the_studio_graph_gives_the_cli_answer_and_runs_on_defaults(cli, run, monkeypatch):
    from graphs.interview import graph

    schema = graph.get_input_jsonschema()
    assert not schema.get("required") and schema["properties"]
    assert all("default" in spec and spec.get("description") for spec in schema["properties"].values())

    out = graph.invoke({"run": str(run), "agent": "Cyrene", "question": PROMISE})
    answer = ask(cli, run, "Cyrene", PROMISE)
    assert out["answer"] == answer["answer"] and out["decided_by"] == "offline"
    assert [m["id"] for m in out["memories"]] == [m["id"] for m in answer["memories"]]

    monkeypatch.setenv("AMPHOREUS_RUNS_DIR", str(run.parent))
    out = graph.invoke({})
    assert out["run"] == str(run) and out["agent"] == "Cyrene", "the newest run, its scenario's first agent"
    assert out["answer"].startswith("I am Cyrene") and out["memories"]


def test_offline_answers_keep_secrets_and_say_when_nothing_is_remembered():
    scenario = load_scenario("trio")
    secret = RecalledMemory(text="The gate code is 4471.", cycle=1, round=2, score=1.0, secret=True)
    spoken = RecalledMemory(text="The tide rose at dawn. Everyone ran.", cycle=1, round=3, score=0.9)
    now = Moment(cycle=1, round=3, tick=3)
    turn = persona_turn(scenario, "Phainon", [secret, spoken], now, seed=7, run_id="r")
    text = offline_answer(turn, "What do you know?")
    assert "4471" not in text and "keep to myself" in text and "The tide rose at dawn (cycle 1, round 3)" in text
    assert text == offline_answer(turn, "What do you know?"), "deterministic"
    alone = offline_answer(persona_turn(scenario, "Phainon", [], now, seed=7, run_id="r"), "What do you know?")
    assert "I remember nothing" in alone
    tenets = scenario.catalog[scenario.agent("Phainon").path].tenets
    assert any(alone.endswith(t) for t in tenets)


def test_the_library_call_works_inside_a_running_event_loop(run, openai_server):
    """A notebook's cell runs in an event loop: asking a model from there must not try to start another on it."""
    from amphoreus_graph.society.interview import interview

    async def in_a_notebook():
        return interview(run, "Cyrene", PROMISE, model="served", base_url=openai_server.url, k=4)

    answer = asyncio.run(in_a_notebook())
    assert answer.decided_by == "served" and answer.answer and answer.model_use["interview"]["calls"] == 1
