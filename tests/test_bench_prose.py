"""Benchmark prose belongs to a world: a world that ships none is posed world-neutral items, one that ships its own
(a plug-in's `bench_prose`, or bench/prose.yaml beside the scenario) is posed its own, and a broken prose file is
one error line. The default world's words stay in its folder (tools/world_words.py)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml

from amphoreus_graph.bench import generate
from amphoreus_graph.bench.prose import load_prose, neutral, prose_file, prose_of
from amphoreus_graph.catalogs.scenario import scenario_of
from amphoreus_graph.errors import AmphoreusError

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import world_words  # noqa: E402

DEFAULT_WORDS = world_words.pattern(world_words.words())
ISLES = str(ROOT / "tests/worlds/isles/isles.yaml")
OTHER_WORLDS = [
    "fair",
    "fishery",
    ISLES,
    "tests/worlds/toy/toy.yaml",
]


def _default_words(data: object) -> list[str]:
    return DEFAULT_WORDS.findall(json.dumps(data, ensure_ascii=False))


@pytest.mark.parametrize("scenario", OTHER_WORLDS)
def test_a_world_without_prose_of_its_own_is_posed_items_without_a_default_world_word(scenario):
    assert prose_of(scenario_of(scenario)) == neutral()
    for task in generate.GENERATORS:
        made = generate.generated(task, scenario)
        assert made.items, task
        assert _default_words(made.items) == [], task


def test_the_default_world_ships_its_own_prose_and_its_items_name_its_world():
    scenario = scenario_of("amphoreus")
    assert prose_file(scenario) == ROOT / "amphoreus_graph/worlds/amphoreus/bench/prose.yaml"
    assert prose_of(scenario) != neutral()
    assert _default_words(generate.generated("path_voice").items), "the default world's situations are its own"


def test_bench_for_another_world_writes_no_default_world_word(cli, tmp_path):
    code, _, stderr = cli(
        "bench", "--model", "offline", "--scenario", "fair", "--tasks", "all", "--split", "heldout",
        "--out", str(tmp_path),
    )  # fmt: skip
    assert code == 0, stderr
    written = sorted(p for p in tmp_path.rglob("*") if p.is_file() and p.suffix != ".png")
    assert written
    hits = [f"{p.name}: {w}" for p in written for w in DEFAULT_WORDS.findall(p.read_text(encoding="utf-8"))]
    assert hits == []


def _variant(tmp_path: Path, prose: object) -> str:
    """A variant of the isles world in its own folder, with a bench/prose.yaml beside it."""
    (tmp_path / "bench").mkdir()
    (tmp_path / "bench" / "prose.yaml").write_text(yaml.safe_dump(prose), encoding="utf-8")
    variant = tmp_path / "isles_variant.yaml"
    variant.write_text(yaml.safe_dump({"extends": ISLES, "title": "Isles, again"}), encoding="utf-8")
    return str(variant)


def test_a_world_poses_its_own_situations_and_takes_the_sections_it_leaves_out_from_the_neutral_prose(tmp_path):
    situations = ["The fog horn sounds twice; tell the keepers what it means.", "A gull steals your oil rag."]
    scenario = _variant(tmp_path, {"voice_situations": situations})
    assert [i["situation"] for i in generate.generated("path_voice", scenario).items] == situations
    assert prose_of(scenario_of(scenario)).fact_moulds == neutral().fact_moulds


def test_a_variant_elsewhere_finds_the_prose_beside_the_scenario_it_extends(tmp_path):
    base = tmp_path / "isles"
    (base / "bench").mkdir(parents=True)
    (base / "isles.yaml").write_text(Path(ISLES).read_text(encoding="utf-8"), encoding="utf-8")
    (base / "bench" / "prose.yaml").write_text("voice_situations: [Only this.]\n", encoding="utf-8")
    elsewhere = tmp_path / "runs" / "variant.yaml"
    elsewhere.parent.mkdir()
    elsewhere.write_text(yaml.safe_dump({"extends": str(base / "isles.yaml")}), encoding="utf-8")
    assert prose_file(scenario_of(str(elsewhere))) == base / "bench" / "prose.yaml"
    assert [i["situation"] for i in generate.generated("path_voice", str(elsewhere)).items] == ["Only this."]


def test_a_plug_in_world_names_its_prose_by_an_attribute(tmp_path, monkeypatch):
    world = scenario_of("tests/worlds/toy/toy.yaml").world
    own = tmp_path / "toy_prose.yaml"
    own.write_text(yaml.safe_dump({"adversary": "a stranger who walks {tempter}"}), encoding="utf-8")
    monkeypatch.setattr(world, "bench_prose", own, raising=False)
    assert prose_file(scenario_of("tests/worlds/toy/toy.yaml")) == own
    assert load_prose(own).adversary == "a stranger who walks {tempter}"
    monkeypatch.setattr(world, "bench_prose", tmp_path / "missing.yaml", raising=False)
    with pytest.raises(AmphoreusError, match=r"bench_prose: no such file .*missing\.yaml"):
        prose_file(scenario_of("tests/worlds/toy/toy.yaml"))


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("voice_situation: [a]\n", "voice_situation"),
        ("- a list\n", "(top level): expected a mapping of prose sections"),
        ("voice_situations: [a\n", "not valid YAML"),
        ("fact_details: [[a, b, c, d]]\n", "fact_details has 1 lists for 6 fact_moulds"),
        ("voice_situations: []\n", "voice_situations"),
    ],
)
def test_a_broken_prose_file_is_one_error_line(tmp_path, text, says):
    path = tmp_path / "prose.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(AmphoreusError) as caught:
        load_prose(path)
    message = str(caught.value)
    assert message.startswith(str(path)) and says in message and "\n" not in message


def test_bench_on_a_world_with_a_broken_prose_file_says_so_in_one_line(cli, tmp_path):
    scenario = _variant(tmp_path, {"pressures": "not a list"})
    code, _, stderr = cli("bench", "--model", "offline", "--scenario", scenario, "--tasks", "path_voice")
    assert code == 2 and "prose.yaml: pressures" in stderr and "Traceback" not in stderr


def test_the_lint_scans_every_shipped_file_and_exempts_only_the_default_world_folder(tmp_path):
    files = {
        "amphoreus_graph/bench/data/items.yaml": "- Lycurgus frames the round\n",
        "amphoreus_graph/report/templates/page.j2": "<h1>the Chrysos Heirs</h1>\n",
        "amphoreus_graph/worlds/amphoreus/bench/prose.yaml": "- Lycurgus asks each heir\n",
        "amphoreus_graph/errors.py": "class AmphoreusError(Exception): ...  # amphoreus_graph, Amphoreus-Graph\n",
        "langgraph.json": '{"description": "the Genius Society scores"}\n',
        "graphs/society.py": "# a heirloom, the Vortexes, Titanic\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    assert world_words.hits(tmp_path) == [
        "amphoreus_graph/bench/data/items.yaml:1: Lycurgus",
        "amphoreus_graph/report/templates/page.j2:1: Chrysos",
        "amphoreus_graph/report/templates/page.j2:1: Heirs",
        "langgraph.json:1: Genius Society",
    ]
