"""The kit's expressions and society state on a market world written in YAML only (tests/worlds/market):
affordability, loans between traders with interest, prices that follow supply and demand, a vote decided by a
deadline, the director's draws, a tide-like clock and a net-worth score; and one error line per new field."""

from __future__ import annotations

import copy
import random
from pathlib import Path
from typing import Any

import pytest
import yaml

from amphoreus_graph.errors import ScenarioError
from amphoreus_graph.worlds.kit import KitWorld, load_kit_file
from amphoreus_graph.worlds.kit.expr import Expr, ExprError, Names
from tests.test_kit import build, d, play, random_choice, resolve, texts_of

MARKET = Path(__file__).parent / "worlds" / "market" / "market.yaml"


@pytest.fixture(scope="module")
def market() -> KitWorld:
    return load_kit_file(MARKET)


def market_raw() -> dict[str, Any]:
    return yaml.safe_load(MARKET.read_text(encoding="utf-8"))


def opened(world: KitWorld, **changes: Any) -> dict[str, Any]:
    """Genesis at round 1 with top-level keys replaced and stats per agent changed."""
    state = copy.deepcopy(world.genesis(1))
    state["round"] = 1
    for agent, stats in changes.pop("stats", {}).items():
        state["agents"][agent]["stats"].update(stats)
    for agent, place in changes.pop("at", {}).items():
        state["agents"][agent]["at"] = place
    state.update(changes)
    return state


def actions_of(world: KitWorld, state: dict[str, Any], agent: str) -> dict[str, list[str]]:
    return {o.action: o.targets for o in world.perceive(state, agent).options}


# ------------------------------------------------------------------------------------------- expressions


class Env:
    """A hand-made state: three agents, stats, one relation."""

    def __init__(self) -> None:
        self.stats = {"a": {"coin": 5.0}, "b": {"coin": 0.0}, "c": {"coin": 12.0}}
        self.debt = {("a", "b"): 3.0, ("a", "c"): 4.0}

    def scalar(self, name: str) -> float:
        return {"round": 4.0, "rounds": 10.0, "standing": 3.0, "fallen": 0.0}[name]

    def agent(self, role: str) -> str:
        return {"actor": "a", "target": "c"}[role]

    def standing(self) -> list[str]:
        return ["a", "b", "c"]

    def field(self, agent: str, name: str) -> float:
        return self.stats[agent][name]

    def pool(self, name: str) -> float:
        return {"price": 4.0}[name]

    def clock(self, name: str) -> float:
        return 2.0

    def relation(self, name: str, holder: str, other: str) -> float:
        return self.debt.get((holder, other), 0.0)

    def objectives(self, status: str) -> float:
        return 1.0

    def here(self, name: str) -> float:
        return 0.0

    def reach(self, topic: str) -> float:
        return 2.0

    def posts(self, topic: str) -> float:
        return 1.0


NAMES = Names(
    stats=frozenset({"coin"}),
    pools=frozenset({"price"}),
    clocks=frozenset({""}),
    relations=frozenset({"debt"}),
    statuses=frozenset({"lit"}),
    topics=frozenset({"rumour"}),
    agents=frozenset({"a", "b", "c"}),
    roles=frozenset({"actor", "target"}),
)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("actor.coin >= pool.price", 1.0),
        ("target.coin + actor.coin * 2", 22.0),
        ("sum(debt[actor, agents])", 7.0),
        ("sum(debt[agents, target])", 4.0),
        ("count(agents.coin < 5)", 1.0),
        ("count(agents)", 3.0),
        ("max(agents.coin) - min(agents.coin)", 12.0),
        ("mean(agents.coin) > 5 and not round < 4", 1.0),
        ("min(actor.coin, pool.price, 9)", 4.0),
        ("1 if round % 4 < 2 else -1", 1.0),
        ("3 / (target.coin - 12)", 0.0),
        ("0 < actor.coin <= 5 < target.coin", 1.0),
        ("abs(-clock) + objectives.lit", 3.0),
        ("actor.coin > 9 or debt[actor, target] == 4", 1.0),
        ("reach.rumour / count(agents) + posts.rumour", 2 / 3 + 1),
        ("prod(agents.coin + 1)", 6 * 1 * 13),
        ('agent["c"].coin - agent["b"].coin', 12.0),
        ('debt["a", "c"] + debt[actor, "b"] + debt["c", "c"]', 7.0),
    ],
)
def test_an_expression_computes_what_it_says(text, value):
    expr = Expr.parse(text)
    expr.check(NAMES)
    assert expr.number(Env()) == value


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("actor.coins > 1", "unknown stat 'coins' of actor"),
        ("pool.prise", "unknown pool 'prise'"),
        ("loan[actor, target]", "unknown relation 'loan'"),
        ("agents.coin", "gives one value per agent"),
        ("debt[agents, agents]", "a table, not a number"),
        ("__import__('os')", "unknown function '__import__'"),
        ("actor.coin.real", "not part of the expression language"),
        ("actor.coin >", "does not parse"),
        ("agents.coin > 3 and round", "not a list of agents' values"),
        ('agent["zed"].coin', "unknown agent 'zed'"),
        ("debt[actor, 3]", "'3' is no agent"),
        ("actors[0].coin", "not part of the expression language"),
        ("here.agents", "no here to name here"),
        ("lambda: 1", "not part of the expression language"),
        ("'text'", "not part of the expression language"),
    ],
)
def test_an_expression_the_world_cannot_use_is_one_line(text, error):
    with pytest.raises(ExprError, match=error.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")) as caught:
        Expr.parse(text).check(NAMES)
    assert "\n" not in str(caught.value)


def test_an_unbound_role_is_refused_where_nobody_acts():
    with pytest.raises(ExprError, match="no actor here"):
        Expr.parse("actor.coin > 1").check(Names(stats=frozenset({"coin"})))


# ------------------------------------------------------------------------------------------------ market


def test_buying_is_offered_only_to_a_trader_who_can_afford_todays_price(market):
    state = opened(market, stats={"Pell Marrow": {"coin": 3}})
    assert "buy_grain" not in actions_of(market, state, "Pell Marrow")
    assert "buy_grain" in actions_of(market, state, "Hadrin Cole")
    state = copy.deepcopy(state)  # a state is a value: a changed world is a new dict
    state["pools"]["price"] = 2.5
    assert "buy_grain" in actions_of(market, state, "Pell Marrow")
    assert market.problem(opened(market, stats={"Pell Marrow": {"coin": 3}}), "Pell Marrow", d("buy_grain"))


def test_a_loan_moves_coin_and_leaves_a_debt_that_grows_with_interest(market):
    state = opened(market)
    result = resolve(market, state, {"Osric Vale": d("lend", "Mirela Tosk")})
    after = result.state
    assert after["agents"]["Osric Vale"]["stats"]["coin"] == 35
    assert after["agents"]["Mirela Tosk"]["stats"]["coin"] == 25
    # The new debt of 5 and the declared one of 10 both grew by a tenth at the round's end.
    assert after["relations"]["debt"] == {"Mirela Tosk": {"Osric Vale": 5.5}, "Osric Vale": {"Mirela Tosk": 11.0}}
    texts = [e.text for e in result.events]
    assert "At Market Square, Osric Vale lent Mirela Tosk 5 coin." in texts
    assert any("Mirela Tosk's debt to Osric Vale grew with interest" in t for t in texts)
    owes = market.perceive(after, "Mirela Tosk").status["owes"]
    assert owes == "Osric Vale 5.5"


def test_lending_is_offered_only_to_traders_who_owe_less_than_the_limit_and_repaying_only_to_creditors(market):
    state = opened(market)
    state["relations"] = {"debt": {"Mirela Tosk": {"Hadrin Cole": 20}}}
    state["agents"]["Pell Marrow"]["at"] = "Market Square"
    options = actions_of(market, state, "Osric Vale")
    assert "Mirela Tosk" not in options["lend"] and "Pell Marrow" in options["lend"]
    assert "repay" not in actions_of(market, state, "Mirela Tosk")  # her creditor is elsewhere
    state = copy.deepcopy(state)
    state["agents"]["Hadrin Cole"]["at"] = "Market Square"
    assert actions_of(market, state, "Mirela Tosk")["repay"] == ["Hadrin Cole"]


def test_repaying_clears_the_debt_as_far_as_the_coin_goes(market):
    state = opened(market, stats={"Mirela Tosk": {"coin": 4}})
    state["relations"] = {"debt": {"Mirela Tosk": {"Osric Vale": 10}}}
    after = resolve(market, state, {"Mirela Tosk": d("repay", "Osric Vale")}).state
    assert after["agents"]["Mirela Tosk"]["stats"]["coin"] == 0
    assert after["agents"]["Osric Vale"]["stats"]["coin"] == 44
    assert after["relations"]["debt"]["Mirela Tosk"] == {"Osric Vale": 6.6}  # 6 left, then a tenth of interest
    state["relations"] = {"debt": {"Mirela Tosk": {"Osric Vale": 3}}}
    state["agents"]["Mirela Tosk"]["stats"]["coin"] = 10
    after = resolve(market, state, {"Mirela Tosk": d("repay", "Osric Vale")}).state
    assert after["agents"]["Mirela Tosk"]["stats"]["coin"] == 7 and "relations" not in after  # nothing owed


def test_the_price_follows_supply_and_demand_and_its_counters_reset(market):
    state = opened(market)
    both = {"Osric Vale": d("buy_grain"), "Mirela Tosk": d("buy_grain"), "Hadrin Cole": d("wait")}
    after = resolve(market, state, both).state
    assert after["pools"]["price"] == 5 and after["pools"].get("bought", 0) == 0
    sold = resolve(market, opened(market), {"Osric Vale": d("sell_grain")}).state
    assert sold["pools"]["price"] == 3.5


def test_the_tithe_passes_by_a_majority_at_the_deadline_once_and_then_taxes_every_sale(market):
    state = opened(market, round=4)
    state["pools"].update(ayes=1)
    after = resolve(market, state, {"Hadrin Cole": d("vote_aye"), "Pell Marrow": d("vote_nay")}).state
    assert after["pools"]["tithe"] == 1 and after["fired"] == ["tithe_passes"]
    assert "vote_aye" not in actions_of(market, after, "Hadrin Cole")  # one ballot each
    again = resolve(market, after | {"round": 5}, {}).state
    assert again["pools"]["tithe"] == 1 and again["fired"] == ["tithe_passes"]  # fired once a cycle
    taxed = resolve(market, after | {"round": 5}, {"Osric Vale": d("buy_grain")}).state
    assert taxed["agents"]["Osric Vale"]["stats"]["coin"] == 40 - 4 * 1.1


def test_a_tied_vote_fails_at_the_deadline_and_nothing_is_decided_before_it(market):
    early = resolve(market, opened(market, round=3), {"Hadrin Cole": d("vote_aye")}).state
    assert "fired" not in early
    tied = opened(market, round=4)
    tied["pools"].update(ayes=1, nays=1)
    result = resolve(market, tied, {})
    assert result.state["fired"] == ["tithe_fails"] and result.state["pools"]["tithe"] == 0
    assert any(e.text == "The tithe failed." and e.public for e in result.events)


def test_a_named_clock_rises_and_falls_by_its_expression(market):
    run = play(market, random_choice, seed=1)
    seasons = [s["clocks"]["season"] for s in run[0]]
    assert seasons == [0, 1, 0, 0, 1, 2, 1][: len(seasons)]
    assert market.view(run[0][-1]).gauges[0].name == "harvest swell"


def test_the_directors_draws_follow_the_seed_their_conditions_and_their_places(market):
    state = opened(market)
    state["round"] = 0
    seen = {market.frame(state, random.Random(seed))[1]["Osric Vale"] for seed in range(40)}
    assert any("caravan" in s for s in seen) and any("blight" in s for s in seen)
    assert any("caravan" not in s and "blight" not in s for s in seen)  # a draw of chance 0.5
    cheap = copy.deepcopy(state)
    cheap["pools"]["price"] = 2
    assert not any("caravan" in market.frame(cheap, random.Random(s))[1]["Osric Vale"] for s in range(40))
    crowded = copy.deepcopy(state)
    for agent in crowded["agents"].values():
        agent["at"] = "Market Square"
    situations = market.frame(crowded, random.Random(0))[1]
    assert all("crowded" in s for s in situations.values())
    assert not any("crowded" in s for s in market.frame(state, random.Random(0))[1].values())
    same = [market.frame(state, random.Random(7)) for _ in range(2)]
    assert same[0] == same[1]
    blight = next(
        market.frame(state, random.Random(s))
        for s in range(40)
        if "blight" in market.frame(state, random.Random(s))[1]["Osric Vale"]
    )
    assert blight[0]["pools"]["price"] == 5


def test_the_net_worth_score_counts_coin_grain_at_todays_price_less_debts(market):
    state = opened(market)
    state["relations"] = {"debt": {"Mirela Tosk": {"Osric Vale": 7}}}
    worth = market.end(state).score
    assert worth == (40 + 5 * 4) + (20 + 5 * 4 - 7) + (20 + 5 * 4) + (6 + 0)


def test_an_ending_may_be_an_expression_over_every_agent(market):
    state = opened(market, round=2, stats={"Pell Marrow": {"coin": 0}})
    assert resolve(market, state, {}).state.get("outcome") is None  # round 3 is its earliest
    assert resolve(market, state | {"round": 3}, {}).state["outcome"] == "bankrupt"


def test_the_market_plays_to_its_end_the_same_way_twice(market):
    first = play(market, random_choice, seed=5)
    again = play(market, random_choice, seed=5)
    assert first[0] == again[0]
    assert texts_of(market, first) == texts_of(market, again)


# ------------------------------------------------------------------------------------------ error lines


def _edit(path: str, value: Any) -> Any:
    def apply(raw: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        node: Any = raw
        for key in parents:
            node = node[int(key)] if isinstance(node, list) else node[key]
        if isinstance(node, list):
            node[int(last)] = value
        else:
            node[last] = value

    return apply


CASES = [
    (
        "a when test naming an unknown stat",
        _edit("actions.0.when", "actor.coins >= pool.price"),
        "actions[0].when.test: unknown stat 'coins' of actor",
    ),
    (
        "a when test that does not parse",
        _edit("actions.0.when", "actor.coin >="),
        "actions[0].when.test: Value error, 'actor.coin >=' does not parse",
    ),
    (
        "a nested condition naming an unknown pool",
        _edit("actions.1.when", {"all": [{"not": "pool.prise < 2"}]}),
        "actions[1].when.all[0].not.test: unknown pool 'prise'",
    ),
    (
        "an amount giving a value per agent",
        _edit("actions.0.effects.0", {"stat": {"name": "coin", "delta": "agents.coin"}}),
        "actions[0].effects[0].stat.delta: 'agents.coin' gives one value per agent",
    ),
    (
        "an amount naming the target of an action without one",
        _edit("actions.0.effects.0", {"stat": {"name": "coin", "delta": "target.coin"}}),
        "actions[0].effects[0].stat.delta: no target here",
    ),
    (
        "a relation effect naming an unknown relation",
        _edit("actions.2.effects.1", {"relation": {"name": "loan", "delta": 1}}),
        "actions[2].effects[1].relation.name: unknown relation 'loan'",
    ),
    (
        "a relation between an agent and itself",
        _edit("actions.2.effects.1", {"relation": {"name": "debt", "delta": 1, "between": ["actor", "actor"]}}),
        "actions[2].effects[1].relation.between: an agent's relation to itself",
    ),
    (
        "a transfer in an action without a target agent",
        _edit("actions.0.effects.0", {"transfer": {"stat": "coin", "amount": 1}}),
        "actions[0].effects[0].transfer: needs an agent target",
    ),
    (
        "a transfer of an unknown stat",
        _edit("actions.2.effects.0", {"transfer": {"stat": "gold", "amount": 1}}),
        "actions[2].effects[0].transfer.stat: unknown stat 'gold'",
    ),
    (
        "a target test on an action aimed at no agent",
        _edit("actions.0.targets", {"test": "target.coin > 0"}),
        "actions[0].targets.test: tests an agent target",
    ),
    (
        "a target test naming an unknown stat",
        _edit("actions.2.targets", {"test": "target.gold > 0"}),
        "actions[2].targets.test: unknown stat 'gold' of target",
    ),
    (
        "a relation whose range leaves out 0",
        _edit("relations.debt", {"min": 1, "max": 10}),
        "relations.debt: Value error, start (0.0) must lie in [min, max]",
    ),
    (
        "a relation called trust",
        _edit("relations.trust", {"max": 1}),
        "relations.trust: trust is every world's own relation",
    ),
    (
        "an agent's relation of an unknown kind",
        _edit("agents.0.relations", {"loan": {"Mirela Tosk": 1}}),
        "agents[0].relations.loan: unknown relation 'loan'",
    ),
    (
        "an agent's relation to nobody",
        _edit("agents.0.relations", {"debt": {"Mirela": 1}}),
        "agents[0].relations.debt.Mirela: unknown agent 'Mirela'",
    ),
    (
        "an agent's relation outside its range",
        _edit("agents.0.relations", {"debt": {"Mirela Tosk": -1}}),
        "agents[0].relations.debt.Mirela Tosk: -1 is outside [0, 1000]",
    ),
    ("a clock named like a pool", _edit("clocks.price", {"max": 3}), "clocks.price: the name 'price' is taken"),
    (
        "a clock rising by an unknown name",
        _edit("clocks.season.rise_per_round", "tide + 1"),
        "clocks.season.rise_per_round: Value error, unknown name 'tide'",
    ),
    (
        "a clock rising by the actor's stat",
        _edit("clocks.season.rise_per_round", "actor.coin"),
        "clocks.season.rise_per_round: no actor here",
    ),
    (
        "a clock effect on an unknown clock",
        _edit("actions.0.effects.2", {"clock": {"name": "tide", "delta": 1}}),
        "actions[0].effects[2].clock.name: unknown clock 'tide'",
    ),
    (
        "an every_round rule of pairs without a relation",
        _edit("every_round.0", {"each": "pair", "effects": [{"pool": {"name": "price", "delta": 1}}]}),
        "every_round[0]: Value error, each: pair needs relation:",
    ),
    (
        "an every_round rule of the world naming an actor",
        _edit("every_round.1.effects.0", {"pool": {"name": "price", "delta": "actor.coin"}}),
        "every_round[1].effects[0].pool.delta: no actor here",
    ),
    (
        "an every_round rule with an empty effect list",
        _edit("every_round.1.effects", []),
        "every_round[1].effects: List should have at least 1 item",
    ),
    (
        "an every_round rule of each agent harming a target",
        _edit("every_round.1", {"each": "agent", "effects": [{"stat": {"name": "coin", "delta": 1, "who": "target"}}]}),
        "every_round[1].effects[0].stat.who: 'target'; there is no target here",
    ),
    (
        "an every_round relation naming no relation",
        _edit("every_round.0.relation", "loan"),
        "every_round[0].relation: unknown relation 'loan'",
    ),
    (
        "a trigger testing where the actor stands",
        _edit("triggers.0.when", {"at": ["Town Hall"]}),
        "triggers[0].when.at: nobody acts here",
    ),
    (
        "a trigger ending in an unknown ending",
        _edit("triggers.0.end", "ruin"),
        "triggers[0].end: unknown ending 'ruin'",
    ),
    (
        "two triggers of one id",
        _edit("triggers.1.id", "tithe_passes"),
        "triggers: duplicate trigger names ['tithe_passes']",
    ),
    (
        "a trigger's text with an unknown placeholder",
        _edit("triggers.0.text", "{ballots} cast"),
        "triggers[0].text: unknown placeholder {ballots}",
    ),
    (
        "a director's event placed in a draw per round",
        _edit("director.0.events.0.at", ["Town Hall"]),
        "director[0].events[0].at: places are for per: place draws",
    ),
    (
        "a director's event at an unknown place",
        _edit("director.1.events.0.at", ["Harbour"]),
        "director[1].events[0].at[0]: unknown location 'Harbour'",
    ),
    (
        "a director's event of a round naming here",
        _edit("director.0.events.0.when", "here.agents > 1"),
        "director[0].events[0].when.test: unknown here 'agents'",
    ),
    (
        "a director's event of weight 0",
        _edit("director.0.events.0.weight", 0),
        "director[0].events[0].weight: Input should be greater than 0",
    ),
    (
        "a director's draw of chance above 1",
        _edit("director.0.chance", 2),
        "director[0].chance: Input should be less than or equal to 1",
    ),
    (
        "a score per agent naming an unknown stat",
        _edit("score.per_agent", "actor.gold"),
        "score.per_agent: unknown stat 'gold' of actor",
    ),
    ("a score expression naming the actor", _edit("score", {"expr": "actor.coin"}), "score.expr: no actor here"),
    (
        "an ending's test naming the target",
        _edit("endings.0.when", {"test": "target.coin > 1"}),
        "endings[0].when.test: no target here",
    ),
    (
        "an amount of the wrong type",
        _edit("actions.0.effects.1", {"stat": {"name": "grain", "delta": [1]}}),
        "actions[0].effects[1].stat.delta: Value error, expected a number or an expression, got list",
    ),
    (
        "an every_round rule for an unknown kind",
        _edit("every_round.0.each", "household"),
        "every_round[0].each: Input should be 'world', 'agent' or 'pair'",
    ),
    (
        "a trigger repeating 'often'",
        _edit("triggers.0.repeat", "often"),
        "triggers[0].repeat: Input should be a valid boolean",
    ),
    (
        "a director's draw per week",
        _edit("director.0.per", "week"),
        "director[0].per: Input should be 'round' or 'place'",
    ),
    (
        "a named clock's threshold outside its range",
        _edit("clocks.season.thresholds", [{"at": 5}]),
        "clocks.season.thresholds[0].at: 5 is outside the range [0, 3]",
    ),
    (
        "a vote deadline of round 0",
        _edit("votes.deadline", 0),
        "votes.deadline: Input should be greater than or equal to 1",
    ),
    (
        "a trade window below 0",
        _edit("trade.open_for", -1),
        "trade.open_for: Input should be greater than or equal to 0",
    ),
    (
        "a misspelt key in a nested condition",
        _edit("actions.1.when", {"all": [{"tset": "round > 1"}]}),
        "tset: Extra inputs are not permitted",
    ),
    (
        "a relation declared with an unknown key",
        _edit("relations.debt", {"max": 10, "symmetric": True}),
        "relations.debt.symmetric: Extra inputs are not permitted",
    ),
    (
        "a place offering an unknown action",
        _edit("locations.1.actions", ["vote"]),
        "locations[1].actions[0]: unknown action 'vote'",
    ),
    (
        "a secret public action",
        lambda raw: raw["actions"][4].update(secret=True, public=True),
        "actions[4].secret: a secret action cannot be public",
    ),
    (
        "a tally credited to the target of an action without one",
        _edit("actions.0.effects.2", {"tally": {"delta": 1, "who": "target"}}),
        "actions[0].effects[2].tally.who: needs an agent target",
    ),
    (
        "an expression naming an agent the world lacks",
        _edit("score.per_agent", 'agent["Osric"].coin'),
        "score.per_agent: unknown agent 'Osric'",
    ),
    (
        "a harm amount of 0",
        _edit("actions.0.effects.1", {"harm": {"amount": 0, "stat": "coin", "who": "actor"}}),
        "actions[0].effects[1].harm.amount: Value error, 0 is not above 0",
    ),
]


def refused(raw: dict[str, Any], source: Path) -> str:
    """The one line a world's YAML is refused with (naming its file first)."""
    with pytest.raises(ScenarioError) as caught:
        build(raw, source)
    message = str(caught.value)
    assert "\n" not in message and message.startswith(str(source)), message
    return message


@pytest.mark.parametrize(("case", "edit", "expected"), CASES, ids=[c[0] for c in CASES])
def test_every_new_kit_field_has_a_one_line_error_naming_file_and_field(case, edit, expected):
    raw = market_raw()
    edit(raw)
    assert expected in (message := refused(raw, MARKET)), message


def test_a_resolver_moves_agents_changes_relations_and_named_clocks(tmp_path):
    raw = market_raw()
    raw["actions"][7]["resolver"] = "resolvers.py:stir"  # wait: a resolver that stirs the market
    (tmp_path / "resolvers.py").write_text(
        "def stir(act):\n"
        "    act.move('Pell Marrow', 'Market Square')\n"
        "    act.change_relation('debt', 'Pell Marrow', act.actor, 3)\n"
        "    act.change_clock(2, 'season')\n"
        "    act.say(f\"{act.actor} stirred; Pell owes {act.relation('debt', 'Pell Marrow', act.actor):g}.\")\n",
        encoding="utf-8",
    )
    world = build(raw, tmp_path / "market.yaml")
    state = opened(world)
    result = resolve(world, state, {"Osric Vale": d("wait")})
    assert result.state["agents"]["Pell Marrow"]["at"] == "Market Square"
    assert result.state["relations"]["debt"]["Pell Marrow"] == {"Osric Vale": 3.3}  # then a tenth of interest
    assert result.state["clocks"]["season"] == 3  # 2 from the resolver, then the clock's own rise
    assert any("Pell owes 3." in e.text for e in result.events)


def test_a_secret_action_is_witnessed_by_its_actor_alone():
    raw = market_raw()
    raw["actions"][4]["secret"] = True  # vote_aye: a ballot in a booth
    world = build(raw, MARKET)
    result = resolve(world, opened(world), {"Hadrin Cole": d("vote_aye"), "Pell Marrow": d("vote_nay")})
    ballots = {e.action: e.witnesses for e in result.events if e.action in ("vote_aye", "vote_nay")}
    assert ballots == {"vote_aye": ["Hadrin Cole"], "vote_nay": ["Pell Marrow", "Hadrin Cole"]}


def test_a_place_may_offer_only_its_own_actions():
    raw = market_raw()
    raw["locations"][1]["actions"] = ["vote_aye", "vote_nay", "go"]  # the Town Hall is a polling booth
    world = build(raw, MARKET)
    state = opened(world)
    assert sorted(actions_of(world, state, "Hadrin Cole")) == ["go", "vote_aye", "vote_nay"]
    assert "buy_grain" in actions_of(world, state, "Osric Vale")  # the square offers everything


def test_a_tally_effect_may_credit_the_target():
    raw = market_raw()
    raw["actions"][2]["effects"].append({"tally": {"delta": "5", "who": "target"}})
    world = build(raw, MARKET)
    after = resolve(world, opened(world), {"Osric Vale": d("lend", "Mirela Tosk")}).state
    assert after["agents"]["Mirela Tosk"]["tally"] == 5 and "tally" not in after["agents"]["Osric Vale"]
