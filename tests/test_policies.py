from __future__ import annotations

import asyncio
import time
from collections import Counter

import pytest

from amphoreus_graph.catalogs.scenario import load_scenario, scenario_of
from amphoreus_graph.contracts.turn import RecalledMemory, TurnContext
from amphoreus_graph.models.fake import ScriptedChatModel
from amphoreus_graph.policy.llm import LLMPolicy, parse_decision
from amphoreus_graph.policy.offline import OfflinePathPolicy
from amphoreus_graph.policy.prompt import render_messages
from amphoreus_graph.society.perception import build_turn


def _turn(heir: str = "Phainon", *, round_: int = 1, seed: int = 7, memories=(), scenario="amphoreus") -> TurnContext:
    s = scenario_of(scenario)
    world = s.world.genesis(1) | {"round": round_}
    return build_turn(heir, world, s, situation="Storm clouds gather.", memories=list(memories), seed=seed, run_id="t")


def test_offline_policy_is_deterministic_for_a_seed():
    policy = OfflinePathPolicy()
    assert policy.decide(_turn(seed=3)) == policy.decide(_turn(seed=3))
    decisions = {policy.decide(_turn(seed=s, round_=r)).model_dump_json() for s in range(5) for r in range(1, 5)}
    assert len(decisions) > 1, "different seeds and rounds must not all give the same decision"


def test_offline_decisions_are_always_allowed():
    policy = OfflinePathPolicy()
    for heir in load_scenario("amphoreus").agent_names:
        for r in range(1, 20):
            turn = _turn(heir, round_=r)
            assert turn.problem_with(policy.decide(turn)) is None


def test_paths_act_measurably_differently():
    """Over many turns, the action mix of each Path differs from every other Path's."""
    policy = OfflinePathPolicy()
    scenario = load_scenario("amphoreus")
    mixes: dict[str, Counter[str]] = {}
    for heir in scenario.agents:
        counts: Counter[str] = Counter(
            policy.decide(_turn(heir.name, round_=r, seed=s)).action for r in range(1, 11) for s in range(10)
        )
        mixes[heir.path] = counts
    paths = list(mixes)
    for i, a in enumerate(paths):
        for b in paths[i + 1 :]:
            tv = 0.5 * sum(abs(mixes[a][x] - mixes[b][x]) for x in scenario.world.actions) / 100
            assert tv >= 0.3, f"{a} and {b} act too alike (total variation {tv:.2f})"
    assert mixes["Destruction"].most_common(1)[0][0] in ("attack", "fight_tide")
    assert mixes["Erudition"].most_common(1)[0][0] == "study"
    assert mixes["Remembrance"].most_common(1)[0][0] == "remember"


def test_offline_speech_uses_recalled_memories():
    memory = RecalledMemory(text="Mydeimos attacked Cyrene at Okhema.", cycle=1, round=2, score=0.9)
    decision = OfflinePathPolicy().decide(_turn("Cyrene", memories=[memory]))
    assert memory.text in decision.speech


def test_parse_decision_rejects_what_is_not_on_offer():
    turn = _turn()
    assert parse_decision('Sure! {"action": "study", "speech": "hm"}', turn).action == "study"
    for bad in ("no json here", '{"action": "fly"}', '{"action": "attack", "target": "Nobody"}'):
        with pytest.raises(ValueError):
            parse_decision(bad, turn)


async def test_llm_policy_repairs_then_falls_back():
    turn = _turn()
    always_malformed = LLMPolicy(ScriptedChatModel(malformed_rate=1.0), backoff_s=0.001)
    result = await always_malformed.adecide(turn)
    assert "fallback" in result.flags and result.model_calls == 2 and result.error
    assert turn.problem_with(result.decision) is None

    always_failing = LLMPolicy(ScriptedChatModel(fail_rate=1.0), attempts=3, backoff_s=0.001)
    result = await always_failing.adecide(turn)
    assert "fallback" in result.flags and result.failures == 3 and "ScriptedFailure" in (result.error or "")

    healthy = LLMPolicy(ScriptedChatModel())
    result = await healthy.adecide(turn)
    assert result.flags == [] and result.model_calls == 1 and result.tokens_in > 0


async def test_llm_policy_times_out_and_falls_back():
    slow = LLMPolicy(ScriptedChatModel(latency_s=1.0), timeout_s=0.05, attempts=2, backoff_s=0.001)
    started = time.perf_counter()
    result = await slow.adecide(_turn())
    assert "fallback" in result.flags and result.failures == 2 and "Timeout" in (result.error or "")
    assert time.perf_counter() - started < 0.8


async def test_max_concurrency_bounds_parallel_calls():
    policy = LLMPolicy(ScriptedChatModel(latency_s=0.2), max_concurrency=3)
    turns = [_turn(h) for h in load_scenario("amphoreus").agent_names[:6]]
    started = time.perf_counter()
    await asyncio.gather(*(policy.adecide(t) for t in turns))
    elapsed = time.perf_counter() - started
    assert 0.38 < elapsed < 0.9, f"6 calls through 3 slots should take two waves, took {elapsed:.2f}s"


def test_messages_show_the_options_and_memories():
    memory = RecalledMemory(text="The Vortex hummed.", cycle=1, round=1, score=0.5)
    system, user = render_messages(_turn("Cyrene", memories=[memory]))
    assert "Remembrance" in system["content"] and "Cyrene" in system["content"]
    assert "The Vortex hummed." in user["content"] and "- remember:" in user["content"]
