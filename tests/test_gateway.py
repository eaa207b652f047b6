"""The model gateway against a real OpenAI-compatible server (tests/openai_server.py) through the real
langchain-openai client: the response cache (a warm cache asks nothing and writes the same samples; a resumed run
does not ask again what was answered), rate limits (Retry-After waited for exactly; AIMD concurrency per endpoint)
and native structured output (asked where offered, detected where refused). The cache's file on its own is in
tests/test_cache.py."""

from __future__ import annotations

import asyncio
import itertools
import json
import sqlite3
import threading
import time
from pathlib import Path

import pytest
from langchain_core.messages import HumanMessage

from amphoreus_graph.contracts.turn import CallStats
from amphoreus_graph.layout import RunDir
from amphoreus_graph.models.cache import ResponseCache
from amphoreus_graph.models.gateway import ChatCaller, Role, metered
from amphoreus_graph.models.limits import forget_limiters
from amphoreus_graph.models.structured import CAPABILITIES, JSON_SCHEMA
from amphoreus_graph.society.samples import read_samples

pytest.importorskip("langchain_openai")

from tests.openai_server import Behaviour, ChatRequest, InFlight, OpenAIServer

TRIO = ["--scenario", "trio", "--cycles", "1", "--rounds", "3", "--quiet"]


@pytest.fixture(autouse=True)
def _fresh_process_records():
    """Limiters and capability records are per endpoint for the process; a later server may reuse a port."""
    forget_limiters()
    CAPABILITIES.forget()
    yield
    forget_limiters()
    CAPABILITIES.forget()


class Recorder:
    """Wraps a server's schedule: every chat request's body, with the behaviour it got, in arrival order."""

    def __init__(self, server: OpenAIServer) -> None:
        self.inner = server.schedule
        self.seen: list[tuple[ChatRequest, Behaviour]] = []
        self._lock = threading.Lock()
        server.schedule = self

    def __call__(self, request: ChatRequest) -> Behaviour:
        behaviour = self.inner(request)
        with self._lock:
            self.seen.append((request, behaviour))
        return behaviour

    def decide(self) -> list[ChatRequest]:
        return [r for r, _ in self.seen if r.role == Role.DECIDE.value]


def _simulate(cli, server: OpenAIServer, out: Path, *extra: str) -> dict:
    code, stdout, stderr = cli(
        "simulate", *TRIO, "--model", "served", "--base-url", server.url, "--out", str(out), *extra
    )
    assert code == 0, stdout + stderr
    return json.loads((out / "summary.json").read_text())


def _garbage_first(when: str):
    """A schedule: an agent's first reply in the round named is garbage (its repair is answered)."""

    def schedule(request: ChatRequest) -> Behaviour:
        first_try = "That answer cannot be used" not in request.prompt
        return (
            Behaviour.GARBAGE
            if request.role == "decide" and when in request.prompt and first_try
            else (Behaviour.ANSWER)
        )

    return schedule


def _shards(run: Path) -> bytes:
    return b"".join(path.read_bytes() for path in sorted((run / "samples").glob("*.jsonl")))


def _caller(server: OpenAIServer, **settings) -> ChatCaller:
    return ChatCaller(server.chat(), **{"backoff_s": 0.05, **settings})


# --- the response cache --------------------------------------------------------------------------------------


def test_a_repeated_run_over_a_warm_cache_asks_nothing_and_writes_the_same_samples(cli, tmp_path, openai_server):
    """The first run's answers (a garbage reply and its repair among them) are all the second needs: no chat
    request reaches the server, the samples are byte for byte the same, and the summary says what the hits
    would have cost."""
    openai_server.schedule = _garbage_first("round 2.")
    cache = tmp_path / "shared-cache"
    first = _simulate(cli, openai_server, tmp_path / "one" / "run", "--cache", str(cache))
    asked = len(openai_server.log)
    assert first["repaired"] == 3 and first["fallbacks"] == 0, "each round-2 turn was repaired"
    assert first["model_calls"] == asked

    second = _simulate(cli, openai_server, tmp_path / "two" / "run", "--cache", str(cache))
    assert len(openai_server.log) == asked, "not one chat request more"
    assert second["model_calls"] == 0 and second["tokens_in"] == 0 and second["repaired"] == 3
    assert _shards(tmp_path / "two" / "run") == _shards(tmp_path / "one" / "run")
    hits = second["cache"]
    assert hits["hits"] == first["model_calls"] + first["cache"]["hits"], "every answer the first run used"
    assert hits["would_have_cost"] == {
        "tokens_in": first["tokens_in"] + first["cache"]["would_have_cost"]["tokens_in"],
        "tokens_out": first["tokens_out"] + first["cache"]["would_have_cost"]["tokens_out"],
    }
    assert sum(use["cache_hits"] for use in second["models"].values()) == hits["hits"]
    assert not RunDir(tmp_path / "one" / "run").cache.exists(), "--cache DIR: the run's own directory keeps none"


def test_by_default_a_run_keeps_its_cache_and_no_cache_keeps_none(cli, tmp_path, openai_server):
    _simulate(cli, openai_server, tmp_path / "cached")
    with ResponseCache(RunDir(tmp_path / "cached").cache) as cache:
        assert len(cache) == len(openai_server.log), "one entry per answered request (none failed here)"
    asked = len(openai_server.log)
    summary = _simulate(cli, openai_server, tmp_path / "uncached", "--no-cache")
    assert not RunDir(tmp_path / "uncached").cache.exists()
    assert summary["model_calls"] == len(openai_server.log) - asked > 0 and summary["cache"]["hits"] == 0
    assert summary["cache"]["file"] is None


def test_offline_runs_write_no_cache(cli, tmp_path):
    assert cli("simulate", *TRIO, "--out", str(tmp_path / "offline"))[0] == 0
    assert not RunDir(tmp_path / "offline").cache.exists()


def test_a_cache_it_cannot_use_is_one_line_before_anything_is_run(cli, tmp_path, openai_server):
    junk = tmp_path / "junk"
    junk.mkdir()
    RunDir(junk).cache.write_bytes(b"not a database " * 500)
    run = tmp_path / "refused"
    code, out, err = cli(
        "simulate", *TRIO, "--model", "served", "--base-url", openai_server.url, "--out", str(run), "--cache", str(junk)
    )
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert code == 2 and len(errors) == 1 and str(RunDir(junk).cache) in errors[0], out + err
    assert len(openai_server.log) == 0 and not (run / "config.json").exists()


def test_failures_are_not_kept_and_garbage_is(tmp_path, openai_server):
    """A 500 says nothing about the model: the retry's answer is what is kept. A reply that does not parse is what
    the model said: kept, so a replay repairs it the same way."""
    openai_server.queue(Behaviour.FAIL, Behaviour.GARBAGE)
    ask = [HumanMessage("Say something.")]
    with ResponseCache(RunDir(tmp_path).cache) as cache:
        caller = _caller(openai_server, cache=cache)
        first = asyncio.run(caller(ask, CallStats()))
        garbage = asyncio.run(caller([HumanMessage("Something else.")], CallStats()))
        assert len(cache) == 2 and len(openai_server.log) == 3
        with metered() as meter:
            again = asyncio.run(caller(ask, CallStats()))
            garbage_again = asyncio.run(caller([HumanMessage("Something else.")], CallStats()))
    assert (again.content, garbage_again.content) == (first.content, garbage.content)
    assert len(openai_server.log) == 3 and meter.use["decide"].cache_hits == 2 and meter.use["decide"].calls == 0


def test_identical_requests_in_flight_at_once_are_sent_once(tmp_path, openai_server):
    openai_server.latency_s = 0.2
    ask = [HumanMessage("The same question, five times at once.")]
    with ResponseCache(RunDir(tmp_path).cache) as cache:
        caller = _caller(openai_server, cache=cache)

        async def five():
            with metered() as meter:
                replies = await asyncio.gather(*(caller(ask, CallStats()) for _ in range(5)))
            return replies, meter.use["decide"]

        replies, use = asyncio.run(five())
    assert len(openai_server.log) == 1 and use.calls == 1 and use.cache_hits == 4
    assert len({r.content for r in replies}) == 1


def test_a_resumed_run_does_not_ask_again_what_was_answered(tmp_path, openai_server):
    """Killed mid-round (here: the run's task cancelled while one agent's request hangs): on resume, the turns the
    server had already answered cost nothing, and the run ends with the samples an unbroken run writes."""
    from amphoreus_graph.society.runner import RunConfig, Simulation

    def config(out: Path) -> RunConfig:
        return RunConfig(scenario="trio", cycles=1, rounds=3, model="served", base_url=openai_server.url, out=out)

    asyncio.run(Simulation(config(tmp_path / "unbroken" / "run")).run())
    stuck = "You are Phainon"  # in round 2, this agent's request hangs until the run is cancelled
    recorder = Recorder(openai_server)
    recorder.inner = lambda r: Behaviour.TIMEOUT if "round 2." in r.prompt and stuck in r.prompt else Behaviour.ANSWER
    openai_server.hang_s = 30
    run = tmp_path / "broken" / "run"

    async def until_stuck() -> None:
        task = asyncio.create_task(Simulation(config(run)).run())
        while not any(b is Behaviour.TIMEOUT for _, b in recorder.seen):
            await asyncio.sleep(0.02)
        while sum(1 for r in recorder.decide() if "round 2." in r.prompt) < 3:
            await asyncio.sleep(0.02)
        await asyncio.sleep(0.3)  # the other two answers reach the gateway and the cache
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(until_stuck())
    answered = {r.key for r, b in recorder.seen if b is Behaviour.ANSWER}
    recorder.seen.clear()
    recorder.inner = lambda r: Behaviour.ANSWER
    summary = asyncio.run(Simulation.resume(run).run(resume=True))
    asked_again = {r.key for r, _ in recorder.seen}
    assert not answered & asked_again, "nothing the server answered before is asked again"
    assert any(stuck in r.prompt and "round 2." in r.prompt for r, _ in recorder.seen), "the hung one is"
    assert summary.fallbacks == 0
    unbroken = [s.model_dump() for s in read_samples(tmp_path / "unbroken" / "run" / "samples")]
    assert [s.model_dump() for s in read_samples(run / "samples")] == unbroken


# --- rate limits ---------------------------------------------------------------------------------------------


def test_a_429s_retry_after_is_waited_for_exactly(openai_server):
    openai_server.retry_after_s = 0.25
    openai_server.queue(Behaviour.RATE_LIMIT, Behaviour.RATE_LIMIT)
    caller = _caller(openai_server, backoff_s=2.0)  # a backoff this long would show: Retry-After is what counts
    stats = CallStats()
    with metered() as meter:
        reply = asyncio.run(caller([HumanMessage("Hello.")], stats))
    times = [entry.at for entry in openai_server.log.entries()]
    assert reply.content and [e.status for e in openai_server.log.entries()] == [429, 429, 200]
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert all(0.25 <= gap < 1.0 for gap in gaps), gaps
    use = meter.use["decide"]
    assert use.failures == {"rate_limit": 2} and use.retries == 2 and use.calls == 3
    assert 500 <= use.retry_wait_ms < 1500 and stats.flags == ["retried"]


def test_a_retry_after_longer_than_allowed_fails_the_call_at_once(openai_server):
    openai_server.retry_after_s = 3600
    openai_server.queue(Behaviour.RATE_LIMIT)
    caller = _caller(openai_server, max_retry_wait_s=5)
    started = time.perf_counter()
    with pytest.raises(Exception, match="429"):
        asyncio.run(caller([HumanMessage("Hello.")], CallStats()))
    assert time.perf_counter() - started < 2 and len(openai_server.log) == 1


def test_429s_halve_the_endpoints_concurrency_and_calm_brings_it_back(openai_server):
    counter = InFlight(0.03)
    openai_server.replier = counter
    openai_server.retry_after_s = 0.05
    refused: set[str] = set()
    # The burst's 429s go back only once all eight have arrived: one episode is the requests sent before the client
    # heard of a 429 (a request sent after the halving that is refused again rightly halves again), and on a busy
    # machine the client could otherwise hear the first 429 before it has sent the eighth request.
    burst = threading.Barrier(8, timeout=30)

    def first_of_the_burst_refused(request: ChatRequest) -> Behaviour:  # by question, not arrival: load-proof
        if request.prompt in refused or not request.prompt.startswith("Burst"):
            return Behaviour.ANSWER
        refused.add(request.prompt)
        burst.wait()
        return Behaviour.RATE_LIMIT

    openai_server.schedule = first_of_the_burst_refused
    caller = _caller(openai_server, max_concurrency=8, attempts=5)

    async def many(n: int, word: str):
        with metered() as meter:
            await asyncio.gather(*(caller([HumanMessage(f"{word} {i}.")], CallStats()) for i in range(n)))
        return meter.use["decide"]

    use = asyncio.run(many(8, "Burst"))
    stats = caller.limiter.stats()
    assert use.failures == {"rate_limit": 8} and use.halvings == 1, "a burst of 429s is one episode: one halving"
    assert stats.halvings == 1 and [limit for _, limit in stats.history[:2]] == [8, 4]
    assert stats.limit == 5 and stats.regrowths == 1, "the 8 retries answered: 4 calm answers at 4 grow it by one"
    assert counter.peak <= 5, "the retries went out four (then five) at a time"
    more = asyncio.run(many(120, "Calm"))
    stats = caller.limiter.stats()
    assert stats.limit == 8 and stats.regrowths == 4 and more.waits > 0 and more.wait_ms > 0
    assert counter.peak <= 8 and stats.peak_in_flight <= 8


def test_callers_of_one_endpoint_share_its_limiter_and_others_do_not(openai_server):
    from amphoreus_graph.policy.registry import resolve_model

    one = resolve_model("served", base_url=openai_server.url, max_concurrency=8)
    two = resolve_model("served", base_url=openai_server.url + "/", max_concurrency=8)
    with OpenAIServer() as elsewhere:
        other = resolve_model("served", base_url=elsewhere.url, max_concurrency=8)
        limiters = [getattr(p, "caller").limiter for p in (one, two, other)]  # noqa: B009
    assert limiters[0] is limiters[1] and limiters[0] is not limiters[2]
    assert getattr(one, "caller").for_role(Role.IMPORTANCE).limiter is limiters[0]  # noqa: B009


# --- native structured output --------------------------------------------------------------------------------


def test_native_structured_output_asks_for_the_turns_own_actions_and_needs_no_repair(cli, tmp_path, openai_server):
    recorder = Recorder(openai_server)
    summary = _simulate(cli, openai_server, tmp_path / "structured")
    decide = recorder.decide()
    assert decide and all(r.response_format == JSON_SCHEMA for r in decide)
    samples = {(s.round, s.agent): s for s in read_samples(tmp_path / "structured" / "samples")}
    for request in decide:
        schema = request.schema or {}
        offered = schema["properties"]["action"]["enum"]
        agent = request.prompt.split("You are ", 1)[1].split(",")[0].split(".")[0]
        round_ = int(request.prompt.split("round ", 1)[1].split(".")[0])
        turn = samples[(round_, agent)].context
        assert turn is not None and offered == turn.offered, "the enum is this turn's offered actions"
        assert schema["additionalProperties"] is False and set(schema["required"]) == set(schema["properties"])
    assert summary["models"]["decide"]["repairs"] == 0 and summary["fallbacks"] == 0
    assert summary["models"]["decide"]["failures"] == {}
    assert all(s.decided_by == "served" for s in samples.values())


def test_an_endpoint_without_structured_output_is_asked_plainly_and_repaired_as_before(cli, tmp_path, openai_server):
    openai_server.json_schema = False
    recorder = Recorder(openai_server)
    recorder.inner = _garbage_first("round 3.")
    summary = _simulate(cli, openai_server, tmp_path / "plain")
    decide = [e for e in openai_server.log.entries() if e.role == "decide"]
    refused = [e for e in decide if e.response_format == JSON_SCHEMA]
    assert 1 <= len(refused) <= 3, "the first round's requests found out; none after"
    assert all(e.status == 400 for e in refused) and openai_server.log.by_status()[400] == len(refused)
    # Round 1: the trio's three requests, and a plain retry of each refused one (in whatever order they arrived:
    # a request built before the first refusal came back may reach the server after a retry).
    round_one = 3 + len(refused)
    assert [e for e in decide[:round_one] if e.response_format == JSON_SCHEMA] == refused
    assert all(e.response_format is None for e in decide[round_one:])
    assert all(r.response_format is None for r in recorder.decide()), "what was answered was asked plainly"
    use = summary["models"]["decide"]
    assert use["failures"] == {"http_status": len(refused), "garbage": 3} and use["repairs"] == 3
    assert summary["fallbacks"] == 0 and summary["repaired"] == 3
    assert not CAPABILITIES.offers(openai_server.url, JSON_SCHEMA)


def test_a_replay_does_not_ask_again_for_what_the_endpoint_refused(cli, tmp_path, openai_server):
    openai_server.json_schema = False
    cache = tmp_path / "cache"
    _simulate(cli, openai_server, tmp_path / "one" / "run", "--cache", str(cache))
    asked = len(openai_server.log)
    CAPABILITIES.forget()  # a new process knows only what the cache remembers
    _simulate(cli, openai_server, tmp_path / "two" / "run", "--cache", str(cache))
    assert len(openai_server.log) == asked
    with sqlite3.connect(RunDir(cache).cache) as conn:
        assert conn.execute("SELECT endpoint, feature, supported FROM capabilities").fetchall() == [
            (openai_server.url, JSON_SCHEMA, 0)
        ]


def test_a_cancelled_call_is_not_retried(openai_server):
    """A run being stopped cancels its calls: the cancellation goes through, it is not a failure to retry."""
    openai_server.hang_s = 5
    openai_server.queue(Behaviour.TIMEOUT)
    caller = _caller(openai_server)

    async def cancelled() -> None:
        task = asyncio.create_task(caller([HumanMessage("Hello.")], CallStats()))
        while not len(openai_server.log):
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    with metered() as meter:
        asyncio.run(cancelled())
    assert len(openai_server.log) == 1 and meter.use["decide"].retries == 0


def test_a_forced_tool_call_asks_for_the_turns_own_actions_and_needs_no_repair(cli, tmp_path, openai_server):
    recorder = Recorder(openai_server)
    summary = _simulate(cli, openai_server, tmp_path / "tools", "--structured", "tools")
    decide = recorder.decide()
    samples = {(s.round, s.agent): s for s in read_samples(tmp_path / "tools" / "samples")}
    for request in decide:
        (tool,) = request.tools
        assert request.response_format is None
        assert request.body["tool_choice"] == {"type": "function", "function": {"name": tool["function"]["name"]}}
        agent = request.prompt.split("You are ", 1)[1].split(",")[0].split(".")[0]
        round_ = int(request.prompt.split("round ", 1)[1].split(".")[0])
        offered = tool["function"]["parameters"]["properties"]["action"]["enum"]
        assert offered == samples[(round_, agent)].context.offered
    assert decide and summary["models"]["decide"]["repairs"] == 0 and summary["fallbacks"] == 0
    assert summary["models"]["decide"]["failures"] == {}
    assert all(s.decided_by == "served" for s in samples.values())


def test_an_endpoint_without_tools_is_asked_plainly(cli, tmp_path, openai_server):
    openai_server.tools = False
    summary = _simulate(cli, openai_server, tmp_path / "plain", "--structured", "tools")
    decide = [e for e in openai_server.log.entries() if e.role == "decide"]
    refused = [e for e in decide if e.tools]
    assert 1 <= len(refused) <= 3 and all(e.status == 400 for e in refused)
    # Round 1, as for the JSON schema above: the trio's three requests and a plain retry of each refused one, in
    # whatever order they arrived; found out once, plain from then on.
    round_one = 3 + len(refused)
    assert [e for e in decide[:round_one] if e.tools] == refused
    assert not any(e.tools for e in decide[round_one:]), "found out once; plain from then on"
    assert summary["fallbacks"] == 0 and summary["models"]["decide"]["failures"] == {"http_status": len(refused)}
    assert not CAPABILITIES.offers(openai_server.url, "tools")


def test_the_mode_is_chosen_by_what_the_client_can_send():
    from langchain_core.language_models.fake_chat_models import FakeListChatModel

    from amphoreus_graph.models.fake import ScriptedChatModel
    from amphoreus_graph.models.structured import structured_mode

    class Tooled(FakeListChatModel):
        def bind_tools(self, tools, **kwargs):  # a client that takes tools, as Anthropic's does
            return self.bind(tools=tools, **kwargs)

    served = OpenAIServer().start()
    try:
        chat = served.chat()
        assert structured_mode(chat) == JSON_SCHEMA and structured_mode(chat, "tools") == "tools"
        assert structured_mode(chat, "off") is None
    finally:
        served.stop()
    tooled = Tooled(responses=["x"])
    assert structured_mode(tooled) == "tools" == structured_mode(tooled, "json_schema"), "json_schema: not sendable"
    assert structured_mode(ScriptedChatModel()) is None, "in the prompt alone, as before"
    with pytest.raises(ValueError, match="expected one of"):
        structured_mode(ScriptedChatModel(), "grammar")


def test_an_unknown_structured_mode_is_one_line(cli, tmp_path):
    code, out, err = cli("simulate", *TRIO, "--structured", "grammar", "--out", str(tmp_path / "r"))
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert code == 2 and len(errors) == 1 and "json_schema" in errors[0], out + err


def test_a_tool_call_that_cannot_be_used_is_answered_with_a_tool_message():
    """The repair pass after a tool call replies to that call (OpenAI refuses a tool call left unanswered)."""
    from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
    from langchain_core.messages import AIMessage, ToolMessage

    from amphoreus_graph.models.gateway import MalformedOutput, ask

    seen: list[list] = []

    class Recording(FakeMessagesListChatModel):
        def _generate(self, messages, *args, **kwargs):
            seen.append(list(messages))
            return super()._generate(messages, *args, **kwargs)

    bad = AIMessage("", tool_calls=[{"name": "decision", "args": {"action": "fly"}, "id": "call-1"}])
    good = AIMessage("", tool_calls=[{"name": "decision", "args": {"action": "rest"}, "id": "call-2"}])
    caller = ChatCaller(Recording(responses=[bad, good]), role=Role.DECIDE, backoff_s=0.01)

    def parse(text: str) -> str:
        action = json.loads(text)["action"]
        if action != "rest":
            raise MalformedOutput(f"{action!r} is not on offer")
        return action

    stats = CallStats()
    parsed, _ = asyncio.run(ask(caller, [HumanMessage("Choose.")], parse, stats))
    assert parsed == "rest" and stats.flags == ["repaired"]
    told = seen[1][-1]
    assert isinstance(told, ToolMessage) and told.tool_call_id == "call-1" and "'fly' is not on offer" in told.text
