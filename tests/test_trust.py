"""The trust boundary (docs/trust.md): code a scenario names runs only where the user chose it (the CLI, the
library, a server started with AMPHOREUS_TRUST_CODE=1); a server's inputs are data; a scenario reads files in its
own folder only; YAML alias bombs, `world: os:system` and a seed file that is not UTF-8 are one line; trained
checkpoints and run checkpoints are read as data, so a pickled or msgpacked callable never runs."""

from __future__ import annotations

import asyncio
import json
import os
import resource
import shutil
import sqlite3
import subprocess
import sys
import time
import zlib
from pathlib import Path
from typing import Any

import pytest
import yaml

from amphoreus_graph.catalogs.scenario import load_scenario
from amphoreus_graph.catalogs.scenario_files import packaged_scenarios
from amphoreus_graph.catalogs.trust import DATA_ONLY, OUTSIDE_FILES, TRUST_CODE
from amphoreus_graph.errors import AmphoreusError, ScenarioError

ROOT = Path(__file__).resolve().parents[1]
TOY = ROOT / "tests" / "worlds" / "toy"
MARKER = "ran.txt"  # what code a test plants writes when it runs: its absence proves it never ran
PLANT = f"from pathlib import Path as _P\n_P(__file__).with_name({MARKER!r}).write_text('ran')\n"
# ten levels of ten aliases: 10**10 values once expanded, a few hundred bytes as written
BOMB = "\n".join(
    [
        "a0: &a0 {x0: 1, x1: 1, x2: 1, x3: 1, x4: 1, x5: 1, x6: 1, x7: 1, x8: 1, x9: 1}",
        *(f"a{n}: &a{n} {{" + ", ".join(f"k{i}: *a{n - 1}" for i in range(10)) + "}" for n in range(1, 10)),
    ]
)


def one_line(code: int, out: str, err: str, *needles: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2 and len(lines) == 1, err
    assert "Traceback" not in out + err and all(needle in lines[0] for needle in needles), lines[0]
    return lines[0]


def simulate(cli, scenario: Path | str, out: Path, *more: str) -> tuple[int, str, str]:
    command = ("simulate", "--scenario", str(scenario), "--cycles", "1", "--rounds", "1", "--out", str(out), "--quiet")
    return cli(*command, *more)


def garden(folder: Path, **changes: Any) -> Path:
    """The toy garden world (a plug-in file beside its scenario) copied into `folder`, its plug-in leaving a
    marker when it runs."""
    shutil.copytree(TOY, folder)
    plugin = folder / "garden.py"
    plugin.write_text(plugin.read_text(encoding="utf-8") + "\n" + PLANT, encoding="utf-8")
    scenario = folder / "toy.yaml"
    scenario.write_text(yaml.safe_dump(yaml.safe_load(scenario.read_text()) | changes), encoding="utf-8")
    return scenario


def ran(folder: Path) -> bool:
    return (folder / MARKER).exists()


# ------------------------------------------------------------------------------------------ code a scenario names


def test_a_plug_in_file_runs_from_the_cli_and_is_refused_by_a_data_only_server(cli, tmp_path, monkeypatch):
    mine, theirs = garden(tmp_path / "mine"), garden(tmp_path / "theirs")
    code, _, err = simulate(cli, mine, tmp_path / "run")
    assert code == 0 and ran(mine.parent), err  # the user ran it: their code runs

    monkeypatch.setenv(DATA_ONLY, "1")
    one_line(*simulate(cli, theirs, tmp_path / "served"), "toy.yaml: world: 'garden.py:load' names code", TRUST_CODE)
    assert not ran(theirs.parent) and not (tmp_path / "served").exists()

    monkeypatch.setenv(TRUST_CODE, "1")  # whoever started the server opted in
    assert load_scenario(theirs).name == "toy-garden" and ran(theirs.parent)


def test_a_module_a_scenario_names_is_code_but_a_registered_worlds_is_not(tmp_path, monkeypatch, cli):
    trio = yaml.safe_load(packaged_scenarios()["trio"].read_text())
    for key in ("seeds", "paths"):  # packaged data: readable from anywhere
        trio[key] = str(packaged_scenarios()["trio"].parent / trio[key])
    (tmp_path / "by-module.yaml").write_text(yaml.safe_dump(trio | {"world": "json:loads"}))
    (tmp_path / "registered.yaml").write_text(
        yaml.safe_dump(trio | {"world": "amphoreus_graph.worlds.amphoreus:load_world"})
    )
    monkeypatch.setenv(DATA_ONLY, "1")
    one_line(*simulate(cli, tmp_path / "by-module.yaml", tmp_path / "run"), "world: 'json:loads' names code")
    assert load_scenario(tmp_path / "registered.yaml").agent_names == ["Cyrene", "Phainon", "Anaxagoras"]


def test_world_os_system_is_one_line_and_never_called(cli, tmp_path):
    """`os.system` would be called as a world factory, (raw, source): it takes one argument, so it never is."""
    (tmp_path / "system.yaml").write_text("world: os:system\n")
    line = one_line(*simulate(cli, tmp_path / "system.yaml", tmp_path / "run"), "world: 'os:system' is a")
    assert "expected a World or a factory (raw, source) -> World" in line and not (tmp_path / "run").exists()


def test_a_plug_in_that_is_missing_or_fails_is_one_line(cli, tmp_path):
    (tmp_path / "broken.py").write_text("def load(raw, source):\n    raise KeyError('fruit')\n", encoding="utf-8")
    for spec, expected in (
        ("broken.py:nope", "world: broken.py has no 'nope'; expected a World plug-in named nope"),
        ("broken.py:load", "world: 'broken.py:load' failed (KeyError: 'fruit'); expected a World factory"),
    ):
        (tmp_path / "w.yaml").write_text(f"world: {spec}\n")
        one_line(*simulate(cli, tmp_path / "w.yaml", tmp_path / "run"), expected)
    assert not (tmp_path / "run").exists()


def test_a_resolver_is_code_and_the_packaged_worlds_own_are_installed_code(tmp_path, monkeypatch):
    folder = tmp_path / "isles"
    folder.mkdir()
    raw = yaml.safe_load((ROOT / "tests" / "worlds" / "isles" / "isles.yaml").read_text())
    raw["actions"][0]["resolver"] = "horn.py:ring"
    (folder / "horn.py").write_text(PLANT + "def ring(act):\n    pass\n", encoding="utf-8")
    (folder / "isles.yaml").write_text(yaml.safe_dump(raw))
    monkeypatch.setenv(DATA_ONLY, "1")
    with pytest.raises(ScenarioError, match=r"actions\[0\]\.resolver: 'horn.py:ring' names code") as caught:
        load_scenario(folder / "isles.yaml")
    assert "\n" not in str(caught.value) and not ran(folder)
    fishery = load_scenario(packaged_scenarios()["fishery"])  # resolvers.py ships with the package
    assert fishery.world.rules.resolvers  # type: ignore[attr-defined]


def test_the_fork_graph_refuses_overrides_naming_code_in_a_data_only_server(cli, tmp_path, monkeypatch):
    """Studio's fork input `scenario_overrides` is data: a `world:` naming a Python file is refused in one line by
    the `simulate --fork` the graph runs (it inherits the server's environment), and nothing of it runs."""
    from amphoreus_graph.cli.fork_graph import build_fork_graph

    code, _, err = simulate(cli, "trio", tmp_path / "parent")
    assert code == 0, err
    plugin = garden(tmp_path / "theirs").with_name("garden.py")
    monkeypatch.setenv(DATA_ONLY, "1")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    asked = {
        "run_dir": str(tmp_path / "parent"),
        "at": "1/1",
        "out_dir": str(tmp_path / "branch"),
        "scenario_overrides": {"world": f"{plugin}:load"},
    }
    with pytest.raises(AmphoreusError, match="names code") as caught:
        asyncio.run(build_fork_graph().compile().ainvoke(asked))
    assert "\n" not in str(caught.value) and not ran(plugin.parent) and not (tmp_path / "branch").exists()


def test_overrides_naming_code_are_refused_by_a_data_only_cli_too(cli, tmp_path, monkeypatch):
    plugin = garden(tmp_path / "theirs").with_name("garden.py")
    monkeypatch.setenv(DATA_ONLY, "1")
    overrides = json.dumps({"world": f"{plugin}:load"})
    one_line(*simulate(cli, "trio", tmp_path / "run", "--scenario-overrides", overrides), "names code")
    assert not ran(plugin.parent) and not (tmp_path / "run").exists()


# ---------------------------------------------------------------------------------- files a scenario may read


def test_seeds_and_paths_outside_the_scenarios_folder_need_the_users_opt_in(cli, tmp_path, monkeypatch):
    elsewhere = tmp_path / "elsewhere"
    shutil.copytree(TOY / "seeds", elsewhere / "seeds")
    (elsewhere / "values.yaml").write_text("paths: []\n")
    by_dots = garden(tmp_path / "dots", seeds="../elsewhere/seeds")
    by_path = garden(tmp_path / "abs", paths=str(elsewhere / "values.yaml"))
    one_line(*simulate(cli, by_dots, tmp_path / "run"), "toy.yaml: seeds:", "lies outside", OUTSIDE_FILES)
    one_line(*simulate(cli, by_path, tmp_path / "run"), "toy.yaml: paths:", "values.yaml lies outside")
    assert not (tmp_path / "run").exists()
    monkeypatch.setenv(OUTSIDE_FILES, "1")  # the user's option, not the scenario's
    assert load_scenario(by_dots).seeds_dir == (elsewhere / "seeds").resolve()


def test_a_symlink_out_of_the_scenarios_folder_does_not_escape(cli, tmp_path):
    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "diary.yaml").write_text("- {text: the key is under the mat, public: true}\n")
    linked_folder = garden(tmp_path / "folder-link", seeds=None)  # no `seeds:`: the folder beside it, if any
    shutil.rmtree(linked_folder.parent / "seeds")
    (linked_folder.parent / "seeds").symlink_to(secret)  # `seeds/` beside the scenario, by default its seeds
    linked_file = garden(tmp_path / "file-link")
    (linked_file.parent / "seeds" / "diary.yaml").symlink_to(secret / "diary.yaml")
    one_line(*simulate(cli, linked_folder, tmp_path / "run"), "toy.yaml: seeds/", "lies outside")
    one_line(*simulate(cli, linked_file, tmp_path / "run"), "seeds/diary.yaml", "lies outside")
    assert not (tmp_path / "run").exists()


def test_overrides_cannot_reach_outside_either(cli, tmp_path):
    overrides = json.dumps({"seeds": str(tmp_path)})
    one_line(*simulate(cli, "trio", tmp_path / "run", "--scenario-overrides", overrides), "seeds:", "lies outside")
    assert not (tmp_path / "run").exists()


def test_a_seed_file_that_is_not_utf8_is_one_line(cli, tmp_path):
    scenario = garden(tmp_path / "garden")
    (scenario.parent / "seeds" / "latin.yaml").write_bytes("- {text: café, public: true}\n".encode("latin-1"))
    line = one_line(*simulate(cli, scenario, tmp_path / "run"), "latin.yaml: cannot read the file")
    assert line.endswith("expected a UTF-8 YAML file")
    assert not (tmp_path / "run").exists()


# ---------------------------------------------------------------------------------------------- YAML alias bombs


def _bounded_cli(*args: str, cwd: Path) -> tuple[subprocess.CompletedProcess[str], float]:
    """The CLI in a child process that may not grow past 2 GiB of address space (a bomb expanded would)."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))

    env = os.environ | {"PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "amphoreus_graph.cli", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=limit,
    )
    return done, time.monotonic() - started


@pytest.mark.parametrize("given", ["variant", "overrides file", "overrides inline"])
def test_an_alias_bomb_is_refused_in_one_line_quickly(tmp_path, given):
    (tmp_path / "variant.yaml").write_text(f"extends: fishery\n{BOMB}\n")
    (tmp_path / "changes.yaml").write_text(f"{BOMB}\n")
    scenario = {"variant": ["--scenario", "variant.yaml"]}.get(given, ["--scenario", "fishery"])
    overrides = {
        "overrides file": ["--scenario-overrides", "changes.yaml"],
        "overrides inline": ["--scenario-overrides", BOMB],
    }
    done, seconds = _bounded_cli(
        "simulate", *scenario, *overrides.get(given, []), "--cycles", "1", "--out", "run", cwd=tmp_path
    )
    one_line(done.returncode, done.stdout, done.stderr, "aliases expand to 2.5e+10 values", "at most 1,000,000")
    assert seconds < 30 and not (tmp_path / "run").exists()


def test_yaml_that_holds_itself_is_one_line(cli, tmp_path):
    (tmp_path / "loop.yaml").write_text("extends: fishery\nloop: &loop [1, *loop]\n")
    one_line(*simulate(cli, tmp_path / "loop.yaml", tmp_path / "run"), "an alias refers to the mapping or list")


# ------------------------------------------------------------------------------------- checkpoints are data


def _touch_on_load(marker: Path) -> Any:
    """An object whose unpickling would create `marker`: what a checkpoint from elsewhere could carry."""

    class Planted:
        def __reduce__(self) -> tuple[Any, ...]:
            return (Path.touch, (marker,))

    return Planted()


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A tiny model pre-trained for two steps (a checkpoint after each) on a short trio run's export."""
    pytest.importorskip("torch", reason="training needs the [train] extra")
    from amphoreus_graph.data.export import export_sft
    from amphoreus_graph.memory.store import NullMemory
    from amphoreus_graph.society.runner import RunConfig, Simulation
    from amphoreus_graph.train.configs import PretrainConfig
    from amphoreus_graph.train.corpus import read_sft_rows
    from amphoreus_graph.train.pretrain import pretrain

    root = tmp_path_factory.mktemp("trained")
    asyncio.run(
        Simulation(RunConfig(scenario="trio", cycles=1, rounds=2, seed=5, out=root / "run"), memory=NullMemory()).run()
    )
    export_sft([root / "run"], root / "sft")
    pretrain(
        read_sft_rows([root / "sft"]), root / "pes", PretrainConfig(base="tiny", steps=2, save_every=1, batch_size=2)
    )
    return root


def test_train_resume_refuses_a_training_state_carrying_a_pickled_callable(trained, tmp_path, cli):
    import torch

    out = tmp_path / "pes"
    shutil.copytree(trained / "pes", out)
    marker = tmp_path / "ran"
    state = out / "checkpoint-2" / "training_state.pt"
    torch.save(
        {"step": 2, "optimizer": _touch_on_load(marker), "scheduler": {}, "torch_rng": torch.get_rng_state()}, state
    )
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    line = one_line(
        *cli("train", "pretrain", "--data", str(trained / "sft"), "--out", str(out), "--resume", "--steps", "4"),
        "training_state.pt: holds a pickled",
        "refused unread",
    )
    assert "could run code" in line and not marker.exists()
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before


def test_a_pes_checkpoint_with_pickled_weights_is_refused(trained, tmp_path, cli):
    import torch

    ckpt = tmp_path / "pes"
    shutil.copytree(trained / "pes", ckpt, ignore=shutil.ignore_patterns("checkpoint-*"))
    (ckpt / "model.safetensors").unlink()
    marker = tmp_path / "ran"
    torch.save({"transformer.wte.weight": _touch_on_load(marker)}, ckpt / "pytorch_model.bin")
    one_line(
        *simulate(cli, "trio", tmp_path / "run", "--model", f"pes:{ckpt}"),
        "holds a pickled",
        "refused unread",
    )
    assert not marker.exists() and not (tmp_path / "run").exists()


def test_a_run_checkpoint_naming_a_callable_does_not_call_it_on_resume(cli, tmp_path):
    """LangGraph's default serializer rebuilds any class a checkpoint names (module, name, arguments): a run's
    checkpoint is read with only LangGraph's safe types rebuilt, so `os.system` stays the data it was stored as."""
    import ormsgpack
    from langgraph.checkpoint.serde.jsonplus import EXT_CONSTRUCTOR_POS_ARGS

    from amphoreus_graph.society.checkpoint_data import COMPRESSED
    from amphoreus_graph.society.checkpoint_rows import SELECT_ROWS, row_digest, row_key

    run, marker = tmp_path / "run", tmp_path / "ran"
    code, _, err = simulate(cli, "trio", run)
    assert code == 0, err
    with sqlite3.connect(run / "checkpoint.sqlite") as db:
        rowid, type_, blob = db.execute(
            "SELECT rowid, type, checkpoint FROM checkpoints ORDER BY checkpoint_id DESC"
        ).fetchone()
        if type_.endswith(COMPRESSED):  # stored compressed: planted as it would be, plain
            blob = zlib.decompress(blob)
        checkpoint = ormsgpack.unpackb(blob, ext_hook=ormsgpack.Ext, option=ormsgpack.OPT_NON_STR_KEYS)
        call = ormsgpack.packb(("os", "system", [f"touch {marker}"]))
        checkpoint["planted"] = ormsgpack.Ext(EXT_CONSTRUCTOR_POS_ARGS, call)
        db.execute(
            "UPDATE checkpoints SET type = ?, checkpoint = ? WHERE rowid = ?",
            (type_.removesuffix(COMPRESSED), ormsgpack.packb(checkpoint), rowid),
        )
        # whoever plants it can mend the row's digest too (society/checkpoint_rows.py): the serializer must hold
        row = db.execute(f"{SELECT_ROWS['checkpoints']} WHERE rowid = ?", (rowid,)).fetchone()
        key = row_key("checkpoints", row)
        db.execute(
            "UPDATE row_digests SET digest = ? "
            "WHERE tbl = ? AND thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?",
            (row_digest(row), *key[:4]),
        )
    code, _, err = cli("simulate", "--resume", str(run))
    assert code == 0, err
    assert not marker.exists()
