"""Configuration is stated once: a run's config (RunConfig) is the world a graph's input names (WorldRun) plus the
settings Studio's context holds (RunSettings), and the CLI's options take their defaults, help and bounds from those
fields, so no default can differ between the library, Studio and the CLI. The other commands' options are their
models' fields the same way: `judge`'s the experts graph's input (its Studio form), `bench`'s the benchmark graph's,
`export`'s its filters' and `train`'s its settings'."""

from __future__ import annotations

import pytest
import typer.main

from amphoreus_graph.bench.graph import BenchmarkInput
from amphoreus_graph.cli import app
from amphoreus_graph.cli.bench import BENCH_OPTIONS
from amphoreus_graph.cli.data import DPO_EXPORT_OPTIONS, JUDGE_OPTIONS, SFT_OPTIONS
from amphoreus_graph.cli.main import RUN_OPTIONS
from amphoreus_graph.cli.train import DPO_OPTIONS, PRETRAIN_OPTIONS
from amphoreus_graph.data.experts_input import ExpertsInput
from amphoreus_graph.data.export import SftFilters
from amphoreus_graph.society.config import RunConfig
from amphoreus_graph.society.services import RunSettings, SocietySettings
from amphoreus_graph.society.state import RecurrenceInput, SocietyInput, WorldRun
from amphoreus_graph.train.configs import DpoSettings, PretrainConfig


def params_of(name: str) -> dict[str, object]:
    command = typer.main.get_command(app)
    for word in name.split():  # "train dpo": a command of a group
        command = command.commands[word]  # type: ignore[attr-defined]
    return {param.name: param for param in command.params}


@pytest.mark.parametrize(
    ("command", "options", "model"),
    [
        ("simulate", RUN_OPTIONS, RunConfig),
        ("judge", JUDGE_OPTIONS, ExpertsInput),
        ("export sft", SFT_OPTIONS, SftFilters),
        ("export dpo", DPO_EXPORT_OPTIONS, ExpertsInput),
        ("bench", BENCH_OPTIONS, BenchmarkInput),
        ("train dpo", DPO_OPTIONS, DpoSettings),
        ("train pretrain", PRETRAIN_OPTIONS, PretrainConfig),
    ],
)
def test_a_commands_options_are_its_models_fields(command: str, options: dict[str, str], model: type) -> None:
    params = params_of(command)
    assert set(options.values()) <= set(model.model_fields)
    for option, field in options.items():
        param, info = params[option], model.model_fields[field]
        assert param.default == info.get_default(call_default_factory=True), option  # type: ignore[attr-defined]
        assert param.help == info.description, option  # type: ignore[attr-defined]


def test_out_of_bounds_options_are_one_line(cli) -> None:
    for bad in (["--cycles", "0"], ["--recall-k", "-1"], ["--timeout", "0"]):  # the fields' bounds, one line each
        code, _, err = cli("simulate", "--scenario", "trio", *bad)
        assert code == 2 and len(err.strip().splitlines()) == 1, (bad, err)


def test_the_library_studio_and_a_graphs_input_share_their_fields() -> None:
    for name in RunSettings.model_fields:
        assert RunConfig.model_fields[name].default == SocietySettings.model_fields[name].default, name
        assert RunConfig.model_fields[name].description == SocietySettings.model_fields[name].description, name
    for name in WorldRun.model_fields:
        for model in (RecurrenceInput, SocietyInput):
            assert model.model_fields[name].default == RunConfig.model_fields[name].default, (model, name)
    assert RecurrenceInput.model_fields["cycles"].default == RunConfig.model_fields["cycles"].default
    config = RunConfig(model="m", recall_k=2, max_concurrency=3)
    settings = config.settings()
    assert (settings.model, settings.recall_k, settings.max_concurrency) == ("m", 2, 3)
    assert settings.run_dir == str(config.out) and settings.memory_dir == str(config.memory_path)
