"""The kit's social building blocks: feeds (the shipped Lindenfield Board, and a clone of it with 100 agents),
trade offers accepted in a later round, and motions proposed in an agent's own words and voted on."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any

import pytest
import yaml

from amphoreus_graph.catalogs.scenario import load_scenario
from amphoreus_graph.worlds.kit import KitWorld, load_kit_file
from tests.test_kit import d, play, random_choice, resolve
from tests.test_kit_society import MARKET, _edit, actions_of, market_raw, opened, refused

CHATTER = Path(__file__).parents[1] / "amphoreus_graph" / "worlds" / "chatter" / "chatter.yaml"


@pytest.fixture(scope="module")
def board() -> KitWorld:
    return load_kit_file(CHATTER)


@pytest.fixture(scope="module")
def market() -> KitWorld:
    return load_kit_file(MARKET)


def started(world: KitWorld) -> dict[str, Any]:
    state = copy.deepcopy(world.genesis(1))
    state["round"] = 1
    return state


def posted(world: KitWorld, state: dict[str, Any], agent: str, words: str) -> dict[str, Any]:
    return resolve(world, state, {agent: d("post", words)}).state | {"round": state["round"] + 1}


# ------------------------------------------------------------------------------------------------- feeds


def test_an_agent_perceives_only_the_posts_of_those_it_follows(board):
    state = posted(board, started(board), "Lise Omar", "Sunflowers at the market today")
    lise = " ".join(board.perceive(state, "Ruth Alder").observations)  # Ruth follows Lise? no: Dara, Nell, Tobin
    assert "Sunflowers" not in lise
    state = copy.deepcopy(state)  # a state is a value: a changed world is a new dict
    state["relations"]["follows"].setdefault("Ruth Alder", {})["Lise Omar"] = 1
    seen = board.perceive(state, "Ruth Alder").observations
    assert any('Lise Omar (last round): "Sunflowers at the market today"' in line for line in seen)
    assert not any(line.startswith("Present at") for line in seen)  # a private place: nobody is seen there


def test_the_feed_is_ranked_cut_to_its_size_and_forgets_old_posts(board):
    state = started(board)
    first = {name: d("post", f"{name} says one") for name in ("Dara Fenn", "Nell Varga", "Tobin Hask")}
    state = resolve(board, state, first).state | {"round": 2}
    second = {name: d("post", f"{name} says two") for name in ("Dara Fenn", "Nell Varga")}
    state = resolve(board, state, second).state | {"round": 3}
    feed = [line for line in board.perceive(state, "Ruth Alder").observations if line.startswith("#")]
    assert len(feed) == 4  # the feed's size
    assert "Nell Varga (last round)" in feed[0] and "Dara Fenn (last round)" in feed[1]  # newest first
    assert "Dara Fenn (2 rounds ago)" not in " ".join(feed)  # the oldest, cut
    for _ in range(4):
        state = resolve(board, state, {}).state | {"round": state["round"] + 1}
    assert board.perceive(state, "Ruth Alder").observations[0] == "Your feed is quiet."
    assert len(state.get("posts", [])) == 0  # posts no feed can show leave the state


def test_a_repost_carries_a_rumour_to_the_reposters_followers_and_the_reach_is_counted(board):
    state = started(board)
    state = board.frame(state | {"round": 0}, random.Random(0))[0]
    assert set(state["reached"]["rumour"]) == {
        "Dara Fenn",
        "Marta Quill",
        "Ruth Alder",
        "Sol Keane",
        "Tobin Hask",
        "Owen Pratt",
    }
    jory = "Jory Teal"
    state["relations"]["follows"][jory] = {"Tobin Hask": 1}
    rumour = state["posts"][0]["id"]
    after = resolve(board, state, {"Tobin Hask": d("repost", rumour)}).state
    framed = board.frame(after, random.Random(0))[0]
    assert jory in framed["reached"]["rumour"]
    gauge = next(g for g in board.view(framed).gauges if g.name == "reach of rumour")
    assert gauge.value == 7 and gauge.high == 12
    assert board.end(framed).facts["reach of rumour"] == 7


def test_replies_reach_the_author_and_likes_and_reposts_are_counted(board):
    state = board.frame(started(board) | {"round": 0}, random.Random(0))[0]
    rumour = state["posts"][0]["id"]
    result = resolve(
        board,
        state,
        {
            "Marta Quill": d("reply", rumour, speech="That is not true: the mill has orders for a year."),
            "Ruth Alder": d("like", rumour),
            "Owen Pratt": d("repost", rumour),
        },
    )
    after = result.state | {"round": 2}
    original = after["posts"][0]
    assert original["likes"] == ["Ruth Alder"] and original["reposts"] == 1
    dara = board.perceive(after, "Dara Fenn").observations
    assert any("replying to " + rumour in line and "orders for a year" in line for line in dara)
    reply_event = next(e for e in result.events if "replied" in e.text)
    assert reply_event.witnesses == ["Marta Quill", "Dara Fenn"]  # the author hears of it; nobody else sees it
    assert board.problem(state, "Ivo Brand", d("like", rumour))  # not in Ivo's feed: he does not follow Dara


def test_a_correction_counts_as_its_own_topic_and_the_score_is_the_truths_lead(board):
    state = started(board)
    state = resolve(board, state, {"Marta Quill": d("debunk", "The mill has a year of orders.")}).state
    state = board.frame(state, random.Random(0))[0]
    assert state["reached"]["truth"] == ["Marta Quill", "Ivo Brand", "Nell Varga", "Cass Merrow", "Brin Soll"]
    assert board.end(state).score == 5 - len(state["reached"]["rumour"])
    assert "debunk" not in actions_of(board, state, "Dara Fenn")  # only the informed


def test_the_board_plays_offline_to_its_end_the_same_way_twice(board):
    first, again = play(board, random_choice, seed=2), play(board, random_choice, seed=2)
    assert first[0] == again[0]


def _crowd(n: int) -> dict[str, Any]:
    """The board with n neighbours: each follows the three before it (a ring), the rumour seeded by the first."""
    raw = yaml.safe_load(CHATTER.read_text(encoding="utf-8"))
    base = raw["agents"]
    names = [f"Neighbour {i:03d}" for i in range(n)]
    raw["agents"] = [
        base[i % len(base)] | {"name": name, "relations": {"follows": {names[(i - k) % n]: 1 for k in (1, 2, 3)}}}
        for i, name in enumerate(names)
    ]
    raw["feed"]["seeds"][0]["author"] = names[0]
    return raw


@pytest.mark.slow
def test_a_feed_world_of_100_agents_runs_offline_and_its_report_shows_the_rumours_spread(cli, tmp_path):
    world = tmp_path / "crowd"
    world.mkdir()
    (world / "crowd.yaml").write_text(yaml.safe_dump(_crowd(100)), encoding="utf-8")
    run = tmp_path / "run"
    scenario = str(world / "crowd.yaml")
    code, out, err = cli(
        "simulate", "--scenario", scenario, "--cycles", "1", "--rounds", "5", "--out", str(run), "--quiet"
    )  # fmt: skip
    assert code == 0, out + err
    lines = [json.loads(line) for path in sorted(run.glob("chronicle/*.jsonl")) for line in path.open()]
    reach = [
        next(g["value"] for g in line["world"]["gauges"] if g["name"] == "reach of rumour")
        for line in lines
        if "world" in line
    ]
    assert reach == sorted(reach) and reach[-1] > reach[0] >= 4  # it spreads along the ring, never shrinks
    samples = [json.loads(line) for path in run.glob("samples/*.jsonl") for line in path.open()]
    assert len(samples) == 500
    for sample in samples[:50]:  # every prompt shows the agent's feed and no crowd
        text = json.dumps(sample)
        assert "Present at" not in text and ("Your feed" in text)
    code, out, err = cli("report", str(run))
    assert code == 0, out + err
    assert "reach of rumour" in (run / "report.html").read_text(encoding="utf-8")


def test_the_clone_of_100_keeps_each_feed_to_its_followees(tmp_path):
    source = tmp_path / "crowd.yaml"
    source.write_text(yaml.safe_dump(_crowd(100)), encoding="utf-8")
    world = load_scenario(str(source)).world
    state = world.frame(world.genesis(1), random.Random(0))[0]
    assert sorted(state["reached"]["rumour"]) == ["Neighbour 000", "Neighbour 001", "Neighbour 002", "Neighbour 003"]
    assert world.perceive(state, "Neighbour 050").observations[0] == "Your feed is quiet."


# ------------------------------------------------------------------------------------------------- trade


def test_an_offer_is_accepted_in_a_later_round_and_the_goods_change_hands(market):
    state = opened(market)
    made = resolve(market, state, {"Osric Vale": d("offer_grain", "Mirela Tosk")}).state
    offer = made["offers"][0]
    assert offer["give"] == {"grain": 1} and offer["get"] == {"coin": 4} and offer["to"] == "Mirela Tosk"
    assert "accept_offer" not in actions_of(market, state, "Mirela Tosk")
    later = made | {"round": 2}
    assert actions_of(market, later, "Mirela Tosk")["accept_offer"] == [offer["id"]]
    done = resolve(market, later, {"Mirela Tosk": d("accept_offer", offer["id"])})
    agents = done.state["agents"]
    assert agents["Osric Vale"]["stats"]["grain"] == 4 and agents["Osric Vale"]["stats"]["coin"] == 44
    assert agents["Mirela Tosk"]["stats"]["grain"] == 6 and agents["Mirela Tosk"]["stats"]["coin"] == 16
    assert "offers" not in done.state  # settled offers leave the state
    assert any("traded" in e.text and set(e.involved) == {"Mirela Tosk", "Osric Vale"} for e in done.events)


def test_matching_offers_in_one_round_settle_at_once(market):
    state = opened(market)
    both = {"Osric Vale": d("offer_grain", "Mirela Tosk"), "Mirela Tosk": d("offer_coin", "Osric Vale")}
    after = resolve(market, state, both).state
    assert after["agents"]["Mirela Tosk"]["stats"]["grain"] == 6 and "offers" not in after


def test_an_offer_that_cannot_be_paid_falls_through_and_one_not_taken_expires(market):
    state = opened(market, stats={"Pell Marrow": {"coin": 6}}, at={"Pell Marrow": "Market Square"})
    made = resolve(market, state, {"Osric Vale": d("offer_grain", "Pell Marrow")}).state | {"round": 2}
    made["agents"]["Pell Marrow"]["stats"]["coin"] = 1
    offer = made["offers"][0]["id"]
    result = resolve(market, made, {"Pell Marrow": d("accept_offer", offer)})
    assert any("fell through: Pell Marrow had not 4 coin" in e.text for e in result.events)
    assert result.state["agents"]["Osric Vale"]["stats"]["grain"] == 5
    kept = resolve(market, made, {}).state
    assert kept["offers"][0]["id"] == offer  # still open the round after it was made
    gone = resolve(market, kept | {"round": 3}, {}).state
    assert "offers" not in gone


def test_a_declined_offer_is_gone_and_the_offerer_hears_of_it(market):
    made = resolve(market, opened(market), {"Osric Vale": d("offer_grain", "Mirela Tosk")}).state | {"round": 2}
    offer = made["offers"][0]["id"]
    result = resolve(market, made, {"Mirela Tosk": d("decline_offer", offer)})
    assert "offers" not in result.state
    assert any("declined" in e.text and "Osric Vale" in e.witnesses for e in result.events)


# ------------------------------------------------------------------------------------------------- votes


def test_a_motion_in_the_proposers_words_passes_by_majority_at_its_deadline(market):
    state = opened(market)
    proposed = resolve(market, state, {"Hadrin Cole": d("propose", "Open the granary to every household.")})
    motion = proposed.state["motions"][0]
    assert motion["text"] == "Open the granary to every household." and motion["closes"] == 3
    assert any(e.public and "proposed motion" in e.text for e in proposed.events)
    state = proposed.state | {"round": 2}
    assert actions_of(market, state, "Pell Marrow")["support"] == [motion["id"]]
    voted = resolve(
        market, state, {"Hadrin Cole": d("support", motion["id"]), "Pell Marrow": d("support", motion["id"])}
    )
    assert "support" not in actions_of(market, voted.state | {"round": 3}, "Hadrin Cole")  # one ballot each
    decided = resolve(market, voted.state | {"round": 3}, {})
    assert decided.state["motions"][0]["outcome"] == "passed" and decided.state["pools"]["granary"] == 1
    assert any(e.public and e.text.startswith(f"Motion {motion['id']} passed, 2 to 0") for e in decided.events)
    assert market.end(decided.state).facts["motions passed"] == 1


def test_a_motion_without_its_quorum_fails_and_changes_nothing(market):
    state = resolve(market, opened(market), {"Hadrin Cole": d("propose", "Close the market on feast days.")}).state
    motion = state["motions"][0]["id"]
    state = resolve(market, state | {"round": 2}, {"Pell Marrow": d("support", motion)}).state
    decided = resolve(market, state | {"round": 3}, {})
    assert decided.state["motions"][0]["outcome"] == "failed" and decided.state["pools"].get("granary", 0) == 0
    assert any(e.text == f"Motion {motion} failed, 1 to 0." for e in decided.events)


CASES = [
    (
        "an offer of an unknown stat",
        _edit("actions.11.effects.0", {"offer": {"give": {"gold": 1}, "get": {"coin": 1}}}),
        "actions[11].effects[0].offer.give.gold: unknown stat 'gold'",
    ),
    (
        "an offer asking nothing",
        _edit("actions.11.effects.0", {"offer": {"give": {"grain": 1}, "get": {}}}),
        "actions[11].effects[0].offer.get: Dictionary should have at least 1 item",
    ),
    (
        "an offer of an amount below 0",
        _edit("actions.11.effects.0", {"offer": {"give": {"grain": -1}, "get": {"coin": 1}}}),
        "actions[11].effects[0].offer.give.grain: -1.0; expected an amount above 0",
    ),
    (
        "an offer aimed at no agent",
        _edit("actions.7.effects", [{"offer": {"give": {"grain": 1}, "get": {"coin": 1}}}]),
        "actions[7].effects[0].offer: offers to the decision's target; expected target: agent",
    ),
    (
        "a vote in an action aimed at an agent",
        _edit("actions.9.target", "agent"),
        "actions[9].effects[0].vote: acts on a motion the decision names; expected target: item",
    ),
    (
        "an item action acting on no item",
        _edit("actions.9.effects", [{"pool": {"name": "price", "delta": 1}}]),
        "actions[9].target: an item action needs an effect acting on one",
    ),
    (
        "an item action acting on two kinds",
        _edit("actions.9.effects", [{"vote": "aye"}, "accept"]),
        "actions[9].effects: acts on ['motion', 'offer'] at once",
    ),
    (
        "a vote of an unknown side",
        _edit("actions.9.effects", [{"vote": "maybe"}]),
        "actions[9].effects[0].vote.side: Input should be 'aye' or 'nay'",
    ),
    (
        "a motion outcome text with an unknown placeholder",
        _edit("votes.passed.text", "{motto}"),
        "votes.passed.text: unknown placeholder {motto}",
    ),
    (
        "a motion outcome naming the actor",
        _edit("votes.failed.effects", [{"stat": {"name": "coin", "delta": 1, "who": "actor"}}]),
        "votes.failed.effects[0].stat.who: 'actor'; a rule of the whole world has no actor",
    ),
    ("a majority of 1", _edit("votes.majority", 1), "votes.majority: Input should be less than 1"),
    ("a quorum of 0", _edit("votes.quorum", 0), "votes.quorum: Input should be greater than or equal to 1"),
    (
        "a trade effect without a trade section",
        lambda raw: raw.pop("trade"),
        "actions[11].effects[0].offer: needs a trade: section",
    ),
    (
        "a vote without a votes section",
        lambda raw: raw.pop("votes"),
        "actions[8].effects[0].propose: needs a votes: section",
    ),
    (
        "a post without a feed",
        _edit("actions.11.effects", [{"post": {}}]),
        "actions[11].effects[0].post: needs a feed: section",
    ),
]


@pytest.mark.parametrize(("case", "edit", "expected"), CASES, ids=[c[0] for c in CASES])
def test_every_trade_and_vote_field_has_a_one_line_error(case, edit, expected):
    raw = market_raw()
    edit(raw)
    assert expected in (message := refused(raw, MARKET)), message


def _board_raw() -> dict[str, Any]:
    return yaml.safe_load(CHATTER.read_text(encoding="utf-8"))


FEED_CASES = [
    (
        "a feed following an unknown relation",
        _edit("feed.follows", "friends"),
        "feed.follows: unknown relation 'friends'",
    ),
    ("a feed of size 0", _edit("feed.size", 0), "feed.size: Input should be greater than or equal to 1"),
    ("a feed window of 0", _edit("feed.window", 0), "feed.window: Input should be greater than or equal to 1"),
    ("a feed's own posts 'maybe'", _edit("feed.own", "maybe"), "feed.own: Input should be a valid boolean"),
    (
        "a feed ranked by an unknown order",
        _edit("feed.rank", "random"),
        "feed.rank: Input should be 'recent' or 'popular'",
    ),
    (
        "a topic named twice",
        _edit("feed.topics", ["rumour", "rumour"]),
        "feed.topics: ['rumour', 'rumour'] names a topic twice",
    ),
    ("a seed post by nobody", _edit("feed.seeds.0.author", "Dara"), "feed.seeds[0].author: unknown agent 'Dara'"),
    (
        "a seed post of an unknown topic",
        _edit("feed.seeds.0.topic", "gossip"),
        "feed.seeds[0].topic: unknown topic 'gossip'",
    ),
    (
        "a post of an unknown topic",
        _edit("actions.1.effects", [{"post": {"topic": "gossip"}}]),
        "actions[1].effects[0].post.topic: unknown topic 'gossip'",
    ),
    (
        "a repost aimed at an agent",
        _edit("actions.3.target", "agent"),
        "actions[3].effects[0].repost: acts on a post the decision names; expected target: item",
    ),
    ("a reach of an unknown topic", _edit("score.expr", "reach.gossip"), "score.expr: unknown reach 'gossip'"),
    (
        "a like in a trigger",
        _edit("triggers.0.effects", ["like"]),
        "triggers[0].effects[0]: 'like' cannot happen in a world",
    ),
    (
        "a private flag that is not a flag",
        _edit("locations.0.private", "maybe"),
        "locations[0].private: Input should be a valid boolean",
    ),
]


@pytest.mark.parametrize(("case", "edit", "expected"), FEED_CASES, ids=[c[0] for c in FEED_CASES])
def test_every_feed_field_has_a_one_line_error(case, edit, expected):
    raw = _board_raw()
    edit(raw)
    assert expected in (message := refused(raw, CHATTER)), message
