"""The market town, the election and the Lindenfield Board: their own rules do what their cards say, and each runs
through simulate, judge, export, report, bench and interview without a word of the default world in anything it
writes or prints."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from amphoreus_graph.bench.prose import neutral, prose_file, prose_of
from amphoreus_graph.catalogs.scenario import load_scenario, scenario_of
from amphoreus_graph.worlds.kit import KitWorld
from tests.test_kit import d, resolve
from tests.test_kit_society import actions_of, opened

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import world_words  # noqa: E402

DEFAULT_WORDS = world_words.pattern(world_words.words())
NEW_WORLDS = ["markettown", "election", "chatter"]
GAUGES = {  # what each world's report shows of its own rules, round by round
    "markettown": ["price of grain", "price of cloth", "coin in the granary", "ayes for the tithe"],
    "election": ["votes for Ada Voss", "votes for Bram Holt", "votes for Cleo Marsh", "ballots cast"],
    "chatter": ["reach of rumour", "reach of truth"],
}


@pytest.fixture(scope="module")
def town() -> KitWorld:
    world = load_scenario("markettown").world
    assert isinstance(world, KitWorld)
    return world


@pytest.fixture(scope="module")
def race() -> KitWorld:
    world = load_scenario("election").world
    assert isinstance(world, KitWorld)
    return world


def after(world: KitWorld, state: dict[str, Any], decisions: dict[str, Any], limit: int = 10) -> dict[str, Any]:
    """The state once a round of these decisions has resolved, moved on to the next round."""
    return resolve(world, state, decisions, limit=limit).state | {"round": state["round"] + 1}


def stats(state: dict[str, Any], agent: str) -> dict[str, float]:
    return state["agents"][agent]["stats"]


# ------------------------------------------------------------------------------------------- the market town


def test_grain_bought_raises_the_price_and_grain_sold_lowers_it(town):
    buyers = {name: d("buy_grain") for name in ("Wenna Pryce", "Maud Tiller", "Crispin Dorr")}
    bought = after(town, opened(town), buyers)
    assert bought["pools"]["grain_price"] == 4 + 3 * 0.5 and bought["pools"]["grain_demand"] == 0
    assert stats(bought, "Crispin Dorr") == stats(opened(town), "Crispin Dorr") | {"coin": 41, "grain": 1}
    sold = after(town, bought, {"Maud Tiller": d("sell_grain"), "Jem Sallow": d("sell_grain")})
    assert sold["pools"]["grain_price"] == 5.5 - 2 * 0.5


def test_a_trader_is_offered_only_what_it_can_afford(town):
    poor = opened(town, stats={"Jem Sallow": {"coin": 3}})
    assert "buy_grain" not in actions_of(town, poor, "Jem Sallow")  # grain costs 4
    assert "buy_grain" in actions_of(town, opened(town), "Jem Sallow")


def test_a_loan_moves_coin_records_a_debt_that_grows_with_interest_and_is_repaid(town):
    state = opened(town)
    assert "Jem Sallow" in actions_of(town, state, "Aldous Brack")["lend"]  # owes 20
    deep = opened(town, relations={"debt": {"Jem Sallow": {"Aldous Brack": 40}}})
    assert "Jem Sallow" not in actions_of(town, deep, "Aldous Brack")["lend"]  # nobody lends past 40 owed in all
    lent = after(town, state, {"Orla Finch": d("lend", "Crispin Dorr")})
    debt = lent["relations"]["debt"]
    assert stats(lent, "Orla Finch")["coin"] == 25 and stats(lent, "Crispin Dorr")["coin"] == 55
    assert debt["Crispin Dorr"]["Orla Finch"] == pytest.approx(10.5)  # 5% for the round it was made
    assert debt["Jem Sallow"]["Aldous Brack"] == pytest.approx(21)
    repaid = after(town, lent, {"Crispin Dorr": d("repay", "Orla Finch")})
    assert "Orla Finch" not in repaid["relations"]["debt"].get("Crispin Dorr", {})
    assert stats(repaid, "Orla Finch")["coin"] == pytest.approx(35.5)


def test_each_traders_tally_is_its_net_worth_and_the_score_is_the_towns(town):
    state = after(town, opened(town), {})
    prices = state["pools"]
    jem = stats(state, "Jem Sallow")
    worth = jem["coin"] + jem["grain"] * prices["grain_price"] + jem["cloth"] * prices["cloth_price"] - 21
    assert state["agents"]["Jem Sallow"]["tally"] == pytest.approx(worth)
    assert state["agents"]["Aldous Brack"]["tally"] == pytest.approx(60 + 10 * 4 + 2 * 8 + 21 + 10.5)
    end = town.end(state)
    assert end.score == pytest.approx(sum(end.tally.values()))


def test_the_tithe_passes_at_midweek_on_more_ayes_and_then_fills_the_granary(town):
    hall = {"Gideon Hale": "Guild Hall", "Hester Lowe": "Guild Hall", "Jem Sallow": "Guild Hall"}
    state = opened(town, at=hall)
    voted = after(
        town, state, {"Gideon Hale": d("vote_aye"), "Hester Lowe": d("vote_aye"), "Jem Sallow": d("vote_nay")}
    )
    assert "vote_aye" not in actions_of(town, voted, "Gideon Hale")  # one stone each
    assert "vote_aye" not in actions_of(town, voted | {"round": 6}, "Maud Tiller")  # past the deadline
    decided = resolve(town, voted | {"round": 5}, {}).state
    assert decided["pools"]["tithe"] == 1
    taxed = resolve(town, decided | {"round": 6}, {"Crispin Dorr": d("buy_grain")}).state
    assert taxed["pools"]["granary"] == pytest.approx(0.4) and stats(taxed, "Crispin Dorr")["coin"] == pytest.approx(
        40.6
    )
    failed = resolve(town, opened(town) | {"round": 5}, {}).state
    assert failed["pools"]["tithe"] == 0


def test_grain_at_eighteen_ends_the_week_in_a_bread_riot(town):
    state = opened(town)
    state["pools"]["grain_price"] = 17.5
    ended = resolve(town, state, {"Crispin Dorr": d("buy_grain")}).state
    assert ended["outcome"] == "bread_riot"


# ---------------------------------------------------------------------------------------------- the election


def test_the_ballot_is_cast_only_in_the_booth_once_the_polls_open_and_only_for_a_candidate(race):
    booth = opened(race, at={"Rosa Lind": "Polling Station"})
    assert "vote_for" not in actions_of(race, booth, "Rosa Lind")  # the polls are not open yet
    open_ = booth | {"round": 6}
    options = actions_of(race, open_, "Rosa Lind")
    assert set(options) == {"vote_for", "spoil_ballot"}  # nobody leaves the booth without casting it
    assert options["vote_for"] == ["Ada Voss", "Bram Holt", "Cleo Marsh"]
    assert (
        "Ada Voss"
        in actions_of(race, opened(race, at={"Ada Voss": "Polling Station"}) | {"round": 6}, "Ada Voss")["vote_for"]
    )  # a candidate may vote for itself
    assert "go_to_the_polls" in actions_of(race, opened(race) | {"round": 6}, "Pim Osei")
    voted = after(race, open_, {"Rosa Lind": d("vote_for", "Bram Holt")})
    assert voted["pools"]["votes_holt"] == 1 and voted["pools"]["turnout"] == 1
    assert voted["agents"]["Bram Holt"]["tally"] == 1
    assert "vote_for" not in actions_of(race, voted, "Rosa Lind") and "go" in actions_of(race, voted, "Rosa Lind")


@pytest.mark.parametrize(
    ("ballots", "outcome"),
    [
        ({"votes_holt": 3, "votes_voss": 2, "turnout": 5}, "holt_wins"),
        ({"votes_marsh": 4, "votes_voss": 1, "turnout": 6}, "marsh_wins"),
        ({"votes_voss": 2, "votes_holt": 2, "votes_marsh": 1, "turnout": 5}, "tied"),
        ({"votes_voss": 3, "turnout": 3}, "void"),
    ],
)
def test_the_count_at_the_deadline_decides_the_ending(race, ballots, outcome):
    state = opened(race) | {"round": 10}
    state["pools"] = state["pools"] | ballots
    ended = resolve(race, state, {}).state
    assert ended["outcome"] == outcome
    assert not resolve(race, state | {"round": 9}, {}).state.get("outcome")  # not before the deadline


def test_a_voter_sees_the_campaign_posts_of_those_it_follows_only(race):
    state = after(race, opened(race), {"Cleo Marsh": d("attack", "Holt's friends paved his drive.")})
    una = " ".join(race.perceive(state, "Una Stroud").observations)  # follows Cleo Marsh
    pim = " ".join(race.perceive(state, "Pim Osei").observations)  # follows Bram Holt and Dov Reyes
    assert "paved his drive" in una and "paved his drive" not in pim
    assert "pledge" not in actions_of(race, state, "Una Stroud")  # a voter cannot pledge


# --------------------------------------------------------------------------------------- all three: shipped


@pytest.mark.parametrize("name", NEW_WORLDS)
def test_each_new_world_ships_its_card_seeds_and_prose_of_its_own(name):
    scenario = scenario_of(name)
    folder = ROOT / "amphoreus_graph" / "worlds" / name
    assert scenario.source == folder / f"{name}.yaml" and (folder / "README.md").is_file()
    assert prose_file(scenario) == folder / "bench" / "prose.yaml" and prose_of(scenario) != neutral()
    card = (folder / "README.md").read_text(encoding="utf-8")
    assert all(a.name in card and a.path in card for a in scenario.world.agents)


def _default_words_in(text: str) -> list[str]:
    return sorted(set(DEFAULT_WORDS.findall(text)))


@pytest.mark.slow
@pytest.mark.parametrize("name", NEW_WORLDS)
def test_each_new_world_runs_the_whole_pipeline_with_no_default_world_word(name, cli, tmp_path):
    run, agent = tmp_path / "run", scenario_of(name).agent_names[-1]
    commands = [
        ["simulate", "--scenario", name, "--cycles", "1", "--rounds", "3", "--out", str(run), "--quiet"],
        ["judge", str(run), "--max-turns", "6", "-k", "2"],
        ["export", "sft", str(run), "--out", str(tmp_path / "sft")],
        ["export", "dpo", str(run / "judged"), "--out", str(tmp_path / "dpo"), "--min-margin", "0"],
        ["report", str(run)],
        ["bench", "--model", "offline", "--scenario", name, "--tasks", "all", "--split", "heldout",
         "--out", str(tmp_path / "bench")],
        ["interview", str(run), "--agent", agent, "What happened this week, and what will you do next?"],
    ]  # fmt: skip
    printed = []
    for command in commands:
        code, out, err = cli(*command)
        assert code == 0, f"{command[0]}: {out}{err}"
        printed.append((command[0], out + err))
    report = (run / "report.html").read_text(encoding="utf-8")
    assert all(gauge in report for gauge in GAUGES[name]), name
    hits = [f"{step}: {w}" for step, text in printed for w in _default_words_in(text)]
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert {"report.html", "summary.json", "train.jsonl", "leaderboard.json"} <= {p.name for p in written}
    # Binary stores too (memory, checkpoints): any text they hold is scanned. Not Chroma's HNSW segment files
    # (`*.bin`): hnswlib writes its preallocated, uninitialised buffers to them, so they carry whatever bytes this
    # test process's heap last held (another test's default-world texts), and they hold no text of the run's.
    for path in (p for p in written if not (p.suffix == ".bin" and "memory" in p.parts)):
        text = path.read_bytes().decode("utf-8", errors="ignore")
        hits += [f"{path.relative_to(tmp_path)}: {w}" for w in _default_words_in(text)]
    assert hits == []
