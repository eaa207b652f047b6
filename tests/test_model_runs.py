"""Real models, honestly run: what a run with a model spends and how it stops (the gateway's own tests are in
tests/test_gateway.py; runs against the OpenAI-compatible test server in tests/test_openai_server.py)."""

from __future__ import annotations

import hashlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time

import pytest

from amphoreus_graph.society.samples import read_samples

TRIO = ["--scenario", "trio", "--cycles", "1", "--rounds", "3", "--quiet"]


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_an_unreachable_model_server_stops_before_anything_is_written(cli, tmp_path):
    pytest.importorskip("langchain_openai")
    run = tmp_path / "down"
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    code, out, err = cli("simulate", *TRIO, "--model", "some-model", "--base-url", url, "--out", str(run))
    assert code == 3, out + err
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "unreachable" in errors[0] and url in errors[0]
    assert not run.exists(), "no samples, no config: nothing under the model's name"


def test_a_model_that_keeps_failing_trips_the_breaker_and_says_who_decided(cli, tmp_path):
    run = tmp_path / "failing"
    code, out, err = cli("simulate", *TRIO, "--model", "scripted:fail=1", "--max-retries", "0", "--out", str(run))
    assert code == 3 and "the model is not deciding" in err, out + err
    summary = json.loads((run / "summary.json").read_text())
    assert summary["stopped"] and summary["turns"] == 3, "round 1 ran, round 2 was not begun"
    samples = read_samples(run / "samples")
    assert len(samples) == 3
    assert all(s.decided_by == "offline (fallback)" and s.error and "fallback" in s.flags for s in samples)
    assert all(s.model == "scripted:fail=1" for s in samples), "the run's model, and beside it who really decided"
    decide = summary["models"]["decide"]
    assert decide["calls"] == 3 and decide["failed"] == 3 and decide["fallbacks"] == 3


def test_a_budget_stops_at_a_round_boundary_and_a_higher_one_finishes_the_run(cli, tmp_path):
    whole, budgeted = tmp_path / "whole", tmp_path / "budget" / "whole"
    assert cli("simulate", *TRIO, "--model", "scripted:seed=4", "--out", str(whole))[0] == 0
    code, out, err = cli("simulate", *TRIO, "--model", "scripted:seed=4", "--max-calls", "4", "--out", str(budgeted))
    assert code == 3 and "budget spent" in err and "--max-calls 4" in err, out + err
    stopped = json.loads((budgeted / "summary.json").read_text())
    assert stopped["stopped"] and stopped["model_calls"] >= 4 and stopped["turns"] % 3 == 0, "whole rounds only"
    code, out, err = cli("simulate", "--resume", str(budgeted), "--max-calls", "1000", "--quiet")
    assert code == 0, out + err
    assert "stopped" not in json.loads((budgeted / "summary.json").read_text())
    assert [s.model_dump() for s in read_samples(budgeted / "samples")] == [
        s.model_dump() for s in read_samples(whole / "samples")
    ]


def test_a_budgeted_and_resumed_model_run_replays_exactly_from_its_cache(cli, tmp_path, openai_server):
    """Against the test server: a budget stops the run, a higher one finishes it, and an unbudgeted run over the
    same cache asks the server nothing and writes the same samples."""
    pytest.importorskip("langchain_openai")
    cache, budgeted, replay = tmp_path / "cache", tmp_path / "budgeted" / "run", tmp_path / "replay" / "run"
    served = ["--model", "served", "--base-url", openai_server.url, "--cache", str(cache)]
    code, out, err = cli("simulate", *TRIO, *served, "--max-calls", "6", "--out", str(budgeted))
    assert code == 3 and "budget spent" in err, out + err
    stopped = json.loads((budgeted / "summary.json").read_text())
    assert stopped["stopped"] and stopped["turns"] % 3 == 0 and stopped["turns"] < 9
    code, out, err = cli("simulate", "--resume", str(budgeted), "--max-calls", "1000", "--quiet")
    assert code == 0, out + err
    asked = len(openai_server.log)
    assert cli("simulate", *TRIO, *served, "--out", str(replay))[0] == 0
    assert len(openai_server.log) == asked, "the replay sent nothing"
    assert json.loads((replay / "summary.json").read_text())["model_calls"] == 0
    assert [s.model_dump() for s in read_samples(replay / "samples")] == [
        s.model_dump() for s in read_samples(budgeted / "samples")
    ]


def test_the_report_shows_every_model_call_by_role(cli, tmp_path):
    run = tmp_path / "scripted"
    garbled = ["--model", "scripted:seed=2,malformed=0.3", "--max-fallback-rate", "1"]  # not a breaker test
    assert cli("simulate", *TRIO, *garbled, "--out", str(run))[0] == 0
    summary = json.loads((run / "summary.json").read_text())
    assert {"decide", "importance"} <= set(summary["models"])
    assert summary["model_calls"] == sum(use["calls"] for use in summary["models"].values())
    assert summary["models"]["decide"]["repairs"] > 0 and summary["models"]["decide"]["failures"]["garbage"] > 0
    assert cli("report", str(run), "--no-alignment")[0] == 0
    page = (run / "report.html").read_text()
    assert "Model calls by role" in page and "importance" in page


def _served(cli, server, run, *extra: str) -> dict:
    """A trio run against the test server; its summary.json."""
    code, out, err = cli(
        "simulate", *TRIO, "--model", "served-model", "--base-url", server.url, "--out", str(run), *extra
    )
    assert code == 0, out + err
    return json.loads((run / "summary.json").read_text())


def test_what_the_run_says_it_spent_is_what_the_server_received(cli, tmp_path, openai_server):
    """Per role, the calls and failures in summary.json equal the server's own log, failures and retries
    included: nothing the gateway did is hidden, nothing is counted that did not happen."""
    pytest.importorskip("langchain_openai")
    from tests.openai_server import Behaviour, RandomMix

    openai_server.schedule = RandomMix({Behaviour.FAIL: 0.3, Behaviour.GARBAGE: 0.1}, seed=7)
    summary = _served(cli, openai_server, tmp_path / "mixed", "--max-fallback-rate", "1.0")
    received = openai_server.log.by_role()
    assert None not in received, "every request names its role"
    assert {role: use["calls"] for role, use in summary["models"].items()} == dict(received)
    failed = sum(n for status, n in openai_server.log.by_status().items() if status != 200)
    assert sum(use["failures"].get("http_status", 0) for use in summary["models"].values()) == failed > 0
    garbage = sum(use["failures"].get("garbage", 0) for use in summary["models"].values())
    assert garbage == openai_server.log.by_behaviour()[Behaviour.GARBAGE], "every unusable reply, and only those"
    assert not any("other" in use["failures"] for use in summary["models"].values()), "each failure has its kind"
    assert summary["model_calls"] == len(openai_server.log.entries())
    assert sum(use["retries"] for use in summary["models"].values()) > 0


def test_rate_limits_are_waited_out_not_failed(cli, tmp_path, openai_server):
    """A 429 with Retry-After is waited for (longer than the gateway's own backoff) and retried: every turn is
    still the model's own."""
    pytest.importorskip("langchain_openai")
    from tests.openai_server import Behaviour

    refused: list[int] = []

    def schedule(request):  # the first round's three decisions are each refused once
        if request.role == "decide" and len(refused) < 3:
            refused.append(1)
            return Behaviour.RATE_LIMIT
        return Behaviour.ANSWER

    openai_server.schedule, openai_server.retry_after_s = schedule, 1.5
    run = tmp_path / "limited"
    summary = _served(cli, openai_server, run)
    assert summary["models"]["decide"]["failures"] == {"rate_limit": 3} and summary["models"]["decide"]["retries"] == 3
    decisions = sorted(e.at for e in openai_server.log.entries() if e.role == "decide")
    assert min(decisions[3:6]) - max(decisions[:3]) >= 1.4, "the retries waited for Retry-After"
    samples = read_samples(run / "samples")
    assert samples and all(s.decided_by == "served-model" and not s.error for s in samples)
    assert summary["fallbacks"] == 0


def test_one_model_serves_every_event_loop_and_thread(openai_server):
    """A run's graph, memory's raters (a worker thread) and a benchmark each bring their own event loop; the
    real client's connections stay bound to the loop they first ran on, so the gateway sends every request
    from its own: none fails for it."""
    pytest.importorskip("langchain_openai")
    import asyncio
    import contextvars
    import threading

    from langchain_core.messages import HumanMessage

    from amphoreus_graph.contracts.turn import CallStats
    from amphoreus_graph.models.gateway import ChatCaller, metered

    caller = ChatCaller(openai_server.chat(), attempts=1)
    question = [HumanMessage("Say something.")]
    with metered() as meter:
        for _ in range(3):
            asyncio.run(caller(question, CallStats()))
        context = contextvars.copy_context()  # a worker thread counts on the run's meter as memory's raters do
        worker = threading.Thread(target=context.run, args=(caller.call_sync, question, CallStats()))
        worker.start()
        worker.join()
        caller.call_sync(question, CallStats())
    assert meter.use["decide"].calls == 5 and not meter.use["decide"].failures
    assert openai_server.log.by_status() == {200: 5}


def test_societies_run_with_the_same_model_settings_as_one(cli, tmp_path, openai_server):
    """--societies N: each society's model takes the run's temperature, and every request goes to one endpoint."""
    pytest.importorskip("langchain_openai")
    from tests.openai_server import Behaviour

    bodies: list[dict] = []

    def schedule(request):
        bodies.append(request.body)
        return Behaviour.ANSWER

    openai_server.schedule = schedule
    run = tmp_path / "many"
    code, out, err = cli(
        "simulate", "--scenario", "trio", "--cycles", "1", "--rounds", "1", "--quiet", "--societies", "2",
        "--model", "served", "--base-url", openai_server.url, "--temperature", "0.25", "--out", str(run),
    )  # fmt: skip
    assert code == 0, out + err
    assert bodies and all(body.get("temperature") == 0.25 for body in bodies)


def test_an_api_key_is_refused_where_societies_could_not_be_given_it(cli, tmp_path):
    code, out, err = cli("simulate", *TRIO, "--societies", "2", "--api-key", "sk-x", "--out", str(tmp_path / "r"))
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert code == 2 and len(errors) == 1 and "OPENAI_API_KEY" in errors[0], out + err
    assert not (tmp_path / "r").exists()


def _simulate_process(*args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "amphoreus_graph.cli", "simulate", *args],
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )


@pytest.mark.slow
def test_what_a_killed_and_resumed_run_says_it_spent_is_what_the_server_received(tmp_path, openai_server):
    """Killed (`kill -9`) three times while requests are out, resumed each time (once with a budget already spent,
    whose message counts every request sent so far): summary.json's calls, failures, retries and tokens by role
    equal the server's log exactly. The requests of steps no checkpoint kept come back from the cache on resume
    (hits, not calls again), and the requests out at a kill count as `interrupted`."""
    pytest.importorskip("langchain_openai")
    from tests.openai_server import Behaviour

    slow_s, failed_bodies, retried = 0.4, set(), []
    openai_server.slow_s = slow_s

    def schedule(request):  # an eighth of the requests fail once (HTTP 500, answered at once); the rest take slow_s
        body = json.dumps(request.body, sort_keys=True)
        if body in failed_bodies:
            retried.append(body)
        elif int(hashlib.sha256(body.encode()).hexdigest(), 16) % 8 == 0:
            failed_bodies.add(body)
            return Behaviour.FAIL
        return Behaviour.SLOW

    openai_server.schedule = schedule
    run = tmp_path / "run"
    args = ["--scenario", "trio", "--cycles", "1", "--rounds", "6", "--quiet", "--model", "served"]
    process = _simulate_process(*args, "--base-url", openai_server.url, "--out", str(run))
    in_flight_at_kills = []
    for kill in range(3):  # each once this process has sent 3 requests and some are out, none half-answered
        started_at, deadline = len(openai_server.log.entries()), time.monotonic() + 120
        while process.poll() is None and time.monotonic() < deadline:
            now, log = time.time(), openai_server.log.entries()
            ages = [now - e.at for e in log]
            quiet = len(log) >= started_at + 3 and 0.05 <= ages[-1] <= 0.3 and log[-1].behaviour is Behaviour.SLOW
            clear = not any(slow_s - 0.06 <= age <= slow_s + 0.06 for age in ages)  # none about to be answered
            no_retry_due = not any(e.status == 500 and now - e.at < 0.8 for e in log)  # backoff 0.5 s, then retry
            if quiet and clear and no_retry_due:
                os.kill(process.pid, signal.SIGKILL)
                in_flight_at_kills.append([id(e) for e, age in zip(log, ages, strict=True) if age < slow_s])
                break
            time.sleep(0.005)
        process.wait()
        process = _simulate_process("--resume", str(run), "--quiet", *(["--max-calls", "1"] if kill == 2 else []))
    assert len(in_flight_at_kills) == 3, "each kill landed while requests were out"
    sent_before = len(openai_server.log.entries())
    out, _ = process.communicate(timeout=300)
    spent = re.search(r"budget spent: (\d+) model calls of --max-calls 1", out.decode())
    assert process.returncode == 3 and spent, out.decode()
    assert sent_before <= int(spent[1]) <= len(openai_server.log.entries()), "the budget counts every request sent"
    process = _simulate_process("--resume", str(run), "--quiet", "--max-calls", "100000")
    out, _ = process.communicate(timeout=300)
    assert process.returncode == 0, out.decode()

    summary = json.loads((run / "summary.json").read_text())
    log = openai_server.log.entries()
    models = summary["models"]
    assert {role: use["calls"] for role, use in models.items()} == dict(openai_server.log.by_role())
    assert summary["model_calls"] == len(log)
    for role, use in models.items():
        mine = [e for e in log if e.role == role]
        assert use["failures"].get("http_status", 0) == sum(e.status == 500 for e in mine), role
    assert sum(use["retries"] for use in models.values()) == len(retried) > 0
    cut = {entry for entries in in_flight_at_kills for entry in entries}
    interrupted = sum(use["failures"].get("interrupted", 0) for use in models.values())
    assert interrupted == len(cut) >= 3
    answered = [e for e in log if e.status == 200 and id(e) not in cut]
    assert summary["tokens_in"] == sum(e.prompt_tokens for e in answered)
    assert summary["tokens_out"] == sum(e.completion_tokens for e in answered)


def _files(run) -> dict[str, bytes]:
    return {str(p.relative_to(run)): p.read_bytes() for p in sorted(run.rglob("*")) if p.is_file()}


def test_the_call_log_is_read_on_resume_a_cut_last_line_dropped_a_damaged_one_refused(cli, tmp_path):
    """RUN/calls.jsonl holds every request the run sent: a last line cut short (what a power cut leaves) is cut
    off and the run goes on; a line damaged in the middle is one error naming it, and nothing is changed."""
    run = tmp_path / "run"
    code, out, err = cli("simulate", *TRIO, "--model", "scripted:seed=4", "--max-calls", "4", "--out", str(run))
    assert code == 3 and "budget spent" in err, out + err
    log = run / "calls.jsonl"
    lines = log.read_bytes().splitlines(keepends=True)
    assert len(lines) >= 8, "a line as each request went out and one as it came back"

    log.write_bytes(b"".join([lines[0], b'{"n": "seven"}\n', *lines[2:]]))
    before = _files(run)
    code, out, err = cli("simulate", "--resume", str(run), "--quiet")
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert code == 2 and len(errors) == 1 and f"{log}: line 2: not a call record" in errors[0], out + err
    assert _files(run) == before, "nothing changed"

    log.write_bytes(b"".join([*lines, b'{"n": 99, "ro']))
    code, out, err = cli("simulate", "--resume", str(run), "--max-calls", "1000", "--quiet")
    assert code == 0, out + err
    records = [json.loads(line) for line in log.read_bytes().splitlines()]
    summary = json.loads((run / "summary.json").read_text())
    assert summary["model_calls"] == sum("role" in r for r in records) > 4
    assert summary["model_calls"] == sum(use["calls"] for use in summary["models"].values())
