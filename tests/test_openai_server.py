"""The OpenAI-compatible test server (tests/openai_server.py), through the real langchain-openai client: each
behaviour reaches the caller as a provider's would, structured output works both ways (and can be switched off),
and the request log counts what was sent. Also pins what the client does that the model gateway must handle."""

from __future__ import annotations

import asyncio
import json
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from contextlib import nullcontext
from importlib.util import find_spec
from typing import Any, Literal

import pytest
from pydantic import BaseModel, Field

from amphoreus_graph.catalogs.scenario import scenario_of
from amphoreus_graph.contracts.turn import Decision, TurnContext
from amphoreus_graph.data.judges.llm import PanelAnswer
from amphoreus_graph.models.fake import ScriptedChatModel
from amphoreus_graph.models.gateway import reply_text
from amphoreus_graph.policy.llm import parse_decision
from amphoreus_graph.policy.prompt import render_messages
from amphoreus_graph.society.perception import build_turn
from tests.openai_server import (
    CHAT_PATH,
    MODELS_PATH,
    ROLE_HEADER,
    Behaviour,
    ChatRequest,
    OpenAIServer,
    Queue,
    RandomMix,
    ToolCall,
    count_tokens,
    fill_schema,
)

if find_spec("langchain_openai") is not None:
    import openai

needs_client = pytest.mark.skipif(
    find_spec("langchain_openai") is None, reason="langchain-openai is not installed (pip install -e '.[openai]')"
)


def _turn() -> TurnContext:
    scenario = scenario_of("amphoreus")
    world = scenario.world.genesis(1) | {"round": 1}
    return build_turn("Phainon", world, scenario, situation="Storm clouds gather.", memories=[], seed=7, run_id="t")


def _messages(turn: TurnContext) -> list[tuple[str, str]]:
    return [(m["role"], m["content"]) for m in render_messages(turn)]


def _get(url: str) -> tuple[int, Any]:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as exc:
        return exc.code, json.load(exc)


# --- answering -------------------------------------------------------------------------------------------------


@needs_client
def test_a_plain_prompt_gets_a_short_reply_with_word_counted_usage(openai_server):
    reply = openai_server.chat().invoke("Say something kind about the Coreflame.")
    assert reply.content == "Understood."
    assert reply.usage_metadata is not None
    assert reply.usage_metadata["input_tokens"] == 6 and reply.usage_metadata["output_tokens"] == 1
    assert reply.usage_metadata["total_tokens"] == 7
    (entry,) = openai_server.log.entries()
    assert (entry.status, entry.behaviour, entry.model) == (200, Behaviour.ANSWER, "amphoreus-test")
    assert (entry.prompt_tokens, entry.completion_tokens) == (6, 1)


@needs_client
def test_an_agent_turn_gets_a_valid_decision_the_scripted_model_would_also_give(openai_server):
    turn = _turn()
    reply = openai_server.chat().invoke(_messages(turn))
    decision = parse_decision(reply_text(reply), turn)  # on offer, or this raises
    scripted = ScriptedChatModel().invoke(_messages(turn))
    assert decision == parse_decision(reply_text(scripted), turn)


@needs_client
def test_judging_and_importance_prompts_get_numbers(openai_server):
    chat = openai_server.chat()
    judged = chat.invoke("The decision to judge: {}\nDimensions: fidelity, consistency\nAnswer with one JSON object.")
    answer = PanelAnswer.model_validate_json(reply_text(judged))
    assert set(answer.scores) == {"fidelity", "consistency"}
    asked = 'How important is each event? Answer as JSON: {"ratings": [...]}.\n1. The Titan fell.\n2. Rain.'
    rated = chat.invoke(asked)
    ratings = json.loads(reply_text(rated))["ratings"]
    assert len(ratings) == 2 and all(1 <= r <= 10 for r in ratings)


@needs_client
def test_a_scripted_replier_sees_the_request(openai_server):
    openai_server.replier = lambda request: f"{request.role}:{request.last_user}"
    reply = openai_server.chat().invoke("echo me", extra_headers={ROLE_HEADER: "proposer"})
    assert reply.content == "proposer:echo me"


@needs_client
def test_a_replier_that_raises_is_a_500_saying_why(openai_server):
    openai_server.replier = lambda request: request.body["no such key"]
    with pytest.raises(openai.InternalServerError, match="KeyError"):
        openai_server.chat().invoke("hello")
    assert openai_server.log.by_behaviour() == Counter({Behaviour.SCRIPT_ERROR: 1})


@needs_client
def test_streaming_carries_the_reply_and_its_usage(openai_server):
    chunks = list(openai_server.chat(stream_usage=True).stream("stream this"))
    whole = chunks[0]
    for chunk in chunks[1:]:
        whole += chunk
    assert whole.content == "Understood."
    assert whole.usage_metadata is not None and whole.usage_metadata["input_tokens"] == 2


def test_the_models_listing_answers_a_probe_and_unknown_paths_are_404(openai_server):
    status, listing = _get(openai_server.url + "/models")
    assert status == 200 and [m["id"] for m in listing["data"]] == ["amphoreus-test"]
    status, error = _get(openai_server.url + "/nowhere")
    assert status == 404 and "no route" in error["error"]["message"]
    assert [e.path for e in openai_server.log.entries(path=None)] == [MODELS_PATH, "/v1/nowhere"]
    assert len(openai_server.log) == 0  # the chat log is untouched by probes
    assert openai_server.url.startswith("http://127.0.0.1:")


def test_a_request_body_that_is_not_json_is_a_400(openai_server):
    request = urllib.request.Request(openai_server.url + "/chat/completions", data=b"{not json", method="POST")
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(request, timeout=5)
    assert caught.value.code == 400
    assert openai_server.log.by_behaviour() == Counter({Behaviour.BAD_REQUEST: 1})


# --- faults ----------------------------------------------------------------------------------------------------


@needs_client
def test_a_500_is_an_internal_server_error(openai_server):
    openai_server.queue(Behaviour.FAIL)
    with pytest.raises(openai.InternalServerError) as caught:
        openai_server.chat().invoke("hello")
    assert caught.value.status_code == 500
    assert openai_server.chat().invoke("hello").content == "Understood."  # the queue is spent: answers again
    assert openai_server.log.by_status() == Counter({500: 1, 200: 1})


@needs_client
def test_a_429_is_a_rate_limit_error_with_its_retry_after(openai_server):
    openai_server.retry_after_s = 2
    openai_server.queue(Behaviour.RATE_LIMIT)
    with pytest.raises(openai.RateLimitError) as caught:
        openai_server.chat().invoke("hello")
    assert caught.value.response.headers["retry-after"] == "2"


@needs_client
def test_a_hung_request_is_a_client_timeout(openai_server):
    openai_server.queue(Behaviour.TIMEOUT)
    started = time.monotonic()
    with pytest.raises(openai.APITimeoutError):
        openai_server.chat(timeout=0.3).invoke("hello")
    assert time.monotonic() - started < 2
    (entry,) = openai_server.log.entries()
    assert (entry.status, entry.behaviour) == (None, Behaviour.TIMEOUT)


@needs_client
def test_a_dropped_connection_is_a_connection_error_not_a_timeout(openai_server):
    openai_server.queue(Behaviour.DROP)
    with pytest.raises(openai.APIConnectionError) as caught:
        openai_server.chat().invoke("hello")
    assert not isinstance(caught.value, openai.APITimeoutError)


@needs_client
def test_garbage_arrives_as_text_and_breaks_structured_output_in_each_way(openai_server):
    """What the gateway must handle: garbage content is a normal reply; under json_schema the client itself raises
    pydantic's ValidationError (even with include_raw); under function calling the result is silently None."""
    chat = openai_server.chat()
    openai_server.queue(Behaviour.GARBAGE, Behaviour.GARBAGE, Behaviour.GARBAGE)
    assert "rather not answer in JSON" in reply_text(chat.invoke("hello"))
    with pytest.raises(ValueError, match="validation error for Decision"):
        chat.with_structured_output(Decision, method="json_schema", include_raw=True).invoke("hello")
    assert chat.with_structured_output(Decision, method="function_calling").invoke("hello") is None


@needs_client
def test_a_malformed_body_is_a_json_decode_error_from_the_client(openai_server):
    """Not an openai.APIError: the client's JSON decoding raises straight through (a ValueError)."""
    openai_server.queue(Behaviour.MALFORMED)
    with pytest.raises(json.JSONDecodeError):
        openai_server.chat().invoke("hello")
    assert openai_server.log.by_status() == Counter({200: 1})


@needs_client
def test_an_answer_is_not_held_back_for_the_clients_ack(openai_server):
    """Headers and body leave in two writes: with Nagle's algorithm on, the body waited ~40 ms for the client's
    delayed ACK on every call (no real server does: they set TCP_NODELAY)."""
    chat = openai_server.chat()
    chat.invoke("hello")  # the connection itself
    walls = []
    for _ in range(5):
        started = time.monotonic()
        chat.invoke("hello")
        walls.append(time.monotonic() - started)
    assert sorted(walls)[2] < 0.03


@needs_client
def test_latency_delays_every_answer_and_slow_one(openai_server):
    chat = openai_server.chat()
    openai_server.latency_s = 0.2
    started = time.monotonic()
    chat.invoke("hello")
    assert 0.2 <= time.monotonic() - started < 1.5
    openai_server.latency_s, openai_server.slow_s = 0.0, 0.3
    openai_server.queue(Behaviour.SLOW)
    started = time.monotonic()
    chat.invoke("hello")
    assert 0.3 <= time.monotonic() - started < 1.5


def test_stopping_wakes_a_hung_request_at_once():
    server = OpenAIServer(hang_s=30).start()
    server.queue(Behaviour.TIMEOUT)
    request = urllib.request.Request(server.url + "/chat/completions", data=b"{}", method="POST")
    errors: list[Exception] = []

    def call() -> None:
        try:
            urllib.request.urlopen(request, timeout=30)
        except Exception as exc:
            errors.append(exc)

    caller = threading.Thread(target=call)
    caller.start()
    while not server.log.entries():
        time.sleep(0.01)
    started = time.monotonic()
    server.stop()
    caller.join(timeout=5)
    assert time.monotonic() - started < 2 and not caller.is_alive() and errors


# --- structured output and capabilities ------------------------------------------------------------------------


@needs_client
@pytest.mark.parametrize("method", ["json_schema", "function_calling"])
def test_structured_output_gives_a_decision_on_offer(openai_server, method):
    turn = _turn()
    decision = openai_server.chat().with_structured_output(Decision, method=method).invoke(_messages(turn))
    assert isinstance(decision, Decision) and turn.problem_with(decision) is None
    (entry,) = openai_server.log.entries()
    if method == "json_schema":
        assert entry.response_format == "json_schema" and not entry.tools
    else:
        assert entry.tools and entry.response_format is None


@needs_client
def test_a_judge_schema_is_filled_from_the_prompt(openai_server):
    prompt = "Dimensions: fidelity, voice\nScore the decision."
    answer = openai_server.chat().with_structured_output(PanelAnswer, method="function_calling").invoke(prompt)
    assert isinstance(answer, PanelAnswer) and set(answer.scores) == {"fidelity", "voice"}


@needs_client
@pytest.mark.parametrize(("switch", "method"), [("json_schema", "json_schema"), ("tools", "function_calling")])
def test_a_capability_switched_off_is_a_400(openai_server, switch, method):
    setattr(openai_server, switch, False)
    openai_server.queue(Behaviour.FAIL)  # a refusal comes first and does not spend the schedule
    structured = openai_server.chat().with_structured_output(Decision, method=method)
    # langchain-openai recognises OpenAI's wording for json_schema and warns to use function calling instead
    warned = pytest.warns(UserWarning, match="does not support") if switch == "json_schema" else nullcontext()
    with pytest.raises(openai.BadRequestError) as caught, warned:
        structured.invoke("hello")
    assert caught.value.status_code == 400 and "not supported" in caught.value.message
    assert openai_server.log.by_behaviour() == Counter({Behaviour.UNSUPPORTED: 1})
    with pytest.raises(openai.InternalServerError):
        openai_server.chat().invoke("hello")


class _Flat(BaseModel):
    mood: Literal["calm", "wrathful"]
    score: int = Field(ge=3, le=4)
    weight: float
    ready: bool
    tags: list[str] = Field(min_length=2)
    note: str | None


class _Nested(BaseModel):
    decision: Decision
    alternatives: list[Decision]
    kind: Literal["turn"] = "turn"


@pytest.mark.parametrize("model", [_Flat, _Nested, Decision, PanelAnswer])
def test_fill_schema_makes_a_valid_value_for_flat_and_nested_schemas(model):
    schema = model.model_json_schema()
    hint = {"action": "rest", "reasoning": "why", "scores": {"a": 7}}
    model.model_validate(fill_schema(schema, hint, schema.get("$defs", {})))


def test_a_replier_may_call_a_tool_itself(openai_server):
    openai_server.replier = lambda request: ToolCall("lookup", '{"q": "Okhema"}')
    request = urllib.request.Request(openai_server.url + "/chat/completions", data=b"{}", method="POST")
    with urllib.request.urlopen(request, timeout=5) as response:
        message = json.load(response)["choices"][0]["message"]
    assert message["tool_calls"][0]["function"] == {"name": "lookup", "arguments": '{"q": "Okhema"}'}


# --- schedules and the log -------------------------------------------------------------------------------------


def _draws(schedule: RandomMix, n: int) -> Counter[Behaviour]:
    request = ChatRequest(body={}, headers={})
    return Counter(schedule(request) for _ in range(n))


def test_a_seeded_mix_draws_its_rates_and_the_same_totals_every_time():
    rates = {Behaviour.FAIL: 0.3, Behaviour.GARBAGE: 0.2}
    first, again = _draws(RandomMix(rates, seed=1), 1000), _draws(RandomMix(rates, seed=1), 1000)
    assert first == again != _draws(RandomMix(rates, seed=2), 1000)
    assert 250 < first[Behaviour.FAIL] < 350 and 150 < first[Behaviour.GARBAGE] < 250
    with pytest.raises(ValueError, match="more than 1"):
        RandomMix({Behaviour.FAIL: 0.7, Behaviour.DROP: 0.4})


def test_a_queue_hands_out_its_behaviours_in_order_then_the_default():
    queue = Queue([Behaviour.FAIL, Behaviour.DROP], then=Behaviour.GARBAGE)
    request = ChatRequest(body={}, headers={})
    assert [queue(request) for _ in range(4)] == [Behaviour.FAIL, Behaviour.DROP, Behaviour.GARBAGE, Behaviour.GARBAGE]


@needs_client
def test_the_log_counts_what_was_sent_by_status_behaviour_and_role(openai_server):
    openai_server.schedule = lambda r: Behaviour.FAIL if r.role == "judge" else Behaviour.ANSWER
    chat = openai_server.chat()
    sent: Counter[str] = Counter()
    for role in ["agent", "agent", "judge", "importance", "agent", "judge"]:
        sent[role] += 1
        try:
            chat.invoke(f"a call as {role}", extra_headers={ROLE_HEADER: role})
        except openai.InternalServerError:
            assert role == "judge"
    log = openai_server.log
    assert log.by_role() == sent
    assert log.by_status() == Counter({200: 4, 500: 2})
    assert log.by_behaviour() == Counter({Behaviour.ANSWER: 4, Behaviour.FAIL: 2})
    answered = [r for r in sent.elements() if r != "judge"]  # tokens are counted for what was answered
    assert sum(e.prompt_tokens for e in log.entries()) == sum(count_tokens(f"a call as {r}") for r in answered)


@needs_client
def test_the_role_header_arrives_each_way_it_can_be_attached(openai_server):
    """How a caller tags a request with its role (see the module docstring of tests/openai_server.py)."""
    chat = openai_server.chat()
    turn_messages = _messages(_turn())

    def role_of_last() -> str | None:
        return openai_server.log.entries()[-1].role

    chat.invoke("x", extra_headers={ROLE_HEADER: "per-call"})
    assert role_of_last() == "per-call"
    asyncio.run(chat.ainvoke("x", extra_headers={ROLE_HEADER: "async"}))
    assert role_of_last() == "async"
    chat.batch(["x", "y"], extra_headers={ROLE_HEADER: "batch"})
    for method in ("json_schema", "function_calling"):
        chat.with_structured_output(Decision, method=method).invoke(turn_messages, extra_headers={ROLE_HEADER: method})
        assert role_of_last() == method
    openai_server.chat(default_headers={ROLE_HEADER: "instance"}).invoke("x")
    assert role_of_last() == "instance"
    chat.bind(extra_headers={ROLE_HEADER: "bound"}).invoke("x")
    assert role_of_last() == "bound"
    chat.bind(extra_headers={ROLE_HEADER: "lost"}).with_structured_output(Decision).invoke(turn_messages)
    assert role_of_last() is None  # the binding's kwargs do not survive with_structured_output
    assert openai_server.log.by_role()["batch"] == 2


@needs_client
def test_the_clients_hidden_retries_show_in_the_log(openai_server):
    """With its default retries the client quietly sends the request again (the log sees three, the caller one
    call); with max_retries=0 every request is the client's first attempt."""
    openai_server.queue(Behaviour.RATE_LIMIT, Behaviour.RATE_LIMIT)
    assert openai_server.chat(max_retries=2).invoke("hello").content == "Understood."
    assert [e.client_retry for e in openai_server.log.entries()] == [0, 1, 2]
    openai_server.log.clear()
    openai_server.queue(Behaviour.RATE_LIMIT)
    with pytest.raises(openai.RateLimitError):
        openai_server.chat().invoke("hello")
    assert [e.client_retry for e in openai_server.log.entries()] == [0]


def test_the_log_lists_every_request_path_when_asked(openai_server):
    _get(openai_server.url + "/models")
    request = urllib.request.Request(openai_server.url + "/chat/completions", data=b"{}", method="POST")
    urllib.request.urlopen(request, timeout=5).read()
    assert [e.path for e in openai_server.log.entries(path=None)] == [MODELS_PATH, CHAT_PATH]
    assert openai_server.log.by_status(path=None) == Counter({200: 2})
