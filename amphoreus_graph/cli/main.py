"""`amphoreus`: simulate societies, list Paths, scenarios and worlds, write a new world; the other parts'
commands are added here. User errors print one line and exit 2."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import ValidationError
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from amphoreus_graph.cli.bench import bench_command
from amphoreus_graph.cli.console import (
    OneLineUsageErrors,
    SkipBadRows,
    bad_rows,
    command_name,
    console,
    err_console,
    follow,
    one_line_errors,
    print_warning,
)
from amphoreus_graph.cli.data import export_app, judge_command
from amphoreus_graph.cli.interview import interview_command
from amphoreus_graph.cli.options import default, model_options
from amphoreus_graph.cli.studio import studio_command
from amphoreus_graph.cli.train import train_app
from amphoreus_graph.contracts.events import (
    CycleDone,
    CycleStarted,
    Forked,
    ProgressEvent,
    RoundDone,
    RoundStarted,
    TurnDone,
)
from amphoreus_graph.errors import AmphoreusError, format_validation_error, output_path
from amphoreus_graph.layout import RunDir
from amphoreus_graph.scepter.plan import ScepterConfig
from amphoreus_graph.society.config import RunConfig
from amphoreus_graph.society.fork import BRANCHABLE

PARALLEL = default(ScepterConfig, "parallel")
app = typer.Typer(
    cls=OneLineUsageErrors,
    help="Simulate a society of LLM agents living by Paths.",
    no_args_is_help=True,
    add_completion=False,
)


@app.command()
@one_line_errors
def paths(
    catalog: Annotated[
        Path | None, typer.Option(help="a Path catalog YAML file to check and list (default: the packaged one)")
    ] = None,
) -> None:
    """Print a catalog of Paths: patron, the kinds of act (tags) each favours and shuns, opposed Paths."""
    from amphoreus_graph.catalogs.paths import load_paths

    loaded = load_paths(str(catalog) if catalog is not None else None)
    table = Table(title=f"The Paths ({loaded.source})")
    for column in ("Path", loaded.patron_title or "Patron", "Favours", "Shuns", "Opposes", "Lexicon"):
        table.add_column(column)
    for path in loaded.paths.values():
        favours = [f"{t} {path.rating(t):+.1f}" for t in path.favoured() if path.rating(t) > 0]
        shuns = [f"{t} {path.rating(t):+.1f}" for t in path.shunned() if path.rating(t) < 0]
        table.add_row(
            path.name,
            path.patron or "–",
            ", ".join(favours) or "–",
            ", ".join(shuns) or "–",
            ", ".join(path.opposed) or "–",
            ", ".join(path.lexicon[:4]) + "…",
        )
    console.print(table)


@app.command()
@one_line_errors
def scenarios() -> None:
    """List the packaged scenarios and their worlds (any YAML file works too: --scenario PATH.yaml)."""
    console.print(_scenarios_table())


@app.command()
@one_line_errors
def worlds() -> None:
    """The kinds of world a scenario may name (`world:`), and the packaged scenarios of each world."""
    from amphoreus_graph.catalogs.scenario import registered_worlds

    kinds = Table(title="Kinds of world (a scenario's `world:`; also module:attr or file.py:attr)")
    for column in ("world:", "provided by"):
        kinds.add_column(column)
    for name, entry in sorted(registered_worlds().items()):
        kinds.add_row(name, entry.value)
    console.print(kinds)
    console.print(_scenarios_table())
    console.print("make your own: amphoreus new-world NAME (a commented starter; docs/worlds.md walks through it)")


def _scenarios_table() -> Table:
    from amphoreus_graph.cli.onboarding import packaged_worlds

    table = Table(title="Packaged scenarios")
    for column in ("Name", "World", "Title", "Agents", "Paths", "Actions", "Rounds/cycle"):
        table.add_column(column)
    for entry in packaged_worlds():
        table.add_row(
            entry.scenario,
            entry.kind,
            entry.title,
            entry.agents,
            str(entry.paths),
            str(entry.actions),
            str(entry.rounds),
        )
    return table


@app.command("new-world")
@one_line_errors
def new_world(
    name: Annotated[str, typer.Argument(help="the new world's name: a short lowercase identifier")],
    where: Annotated[Path, typer.Option(help="the folder to write NAME/ into")] = Path("."),
) -> None:
    """Write a commented starter world (scenario YAML, seed memories, README card) that runs as written."""
    from amphoreus_graph.cli.onboarding import write_starter

    written = write_starter(name, where)
    for path in written:
        console.print(f"wrote {path}", highlight=False)
    console.print(
        f"run it: {command_name()} simulate --scenario {written[0]} --cycles 2 --rounds 8\n"
        "then make it yours: docs/worlds.md (a walk-through) and docs/worlds-kit.md (every field)",
        highlight=False,
        soft_wrap=True,
    )


# simulate's options that set a RunConfig field as they are (option name → field): named, typed, defaulted and
# explained by the field (cli/options.py)
RUN_OPTIONS = {
    "cycles": "cycles",
    "rounds": "rounds",
    "model": "model",
    "base_url": "base_url",
    "seed": "seed",
    "max_concurrency": "max_concurrency",
    "memory_dir": "memory_dir",
    "chroma_url": "chroma_url",
    "memory": "memory",
    "recall_k": "recall_k",
    "seeds_dir": "seeds_dir",
    "embedder": "embedder",
    "temperature": "temperature",
    "timeout": "timeout_s",
    "max_retries": "max_retries",
    "transport": "transport",
}


@app.command()
@one_line_errors
@model_options(RunConfig, RUN_OPTIONS, into="run")
def simulate(
    ctx: typer.Context,
    run: dict[str, Any],  # the RUN_OPTIONS' values by field, from the options model_options puts in its place
    scenario: Annotated[
        list[str] | None,
        typer.Option(help="packaged scenario name or a YAML file; repeat it to cycle scenarios over --societies"),
    ] = None,
    scenario_overrides: Annotated[
        str | None,
        typer.Option(
            help="a YAML file or inline mapping merged onto the scenario (mappings key by key, null removes a key), "
            "saved as RUN/scenario.yaml; with --fork: how the world differs from the fork point on"
        ),
    ] = None,
    out: Annotated[Path | None, typer.Option(help="run directory (default: runs/SCENARIO-sSEED-TIME)")] = None,
    resume: Annotated[Path | None, typer.Option(help="continue the run in this directory from its checkpoint")] = None,
    fork: Annotated[
        Path | None, typer.Option(help="branch off this run at --at into --out (same seed and model unless given)")
    ] = None,
    at: Annotated[str | None, typer.Option(help="CYCLE/ROUND: the last round a --fork shares with its parent")] = None,
    societies: Annotated[int, typer.Option(help="independent societies at once; society i gets seed SEED+i")] = 1,
    engine: Annotated[str | None, typer.Option(help="local (asyncio, one process) or ray (default: local)")] = None,
    address: Annotated[str | None, typer.Option(help="Ray cluster: ray://HEAD:10001, HEAD:6379, auto")] = None,
    ray_cpus: Annotated[int | None, typer.Option(help="CPUs of a Ray started here (--engine ray)")] = None,
    parallel: Annotated[int | None, typer.Option(help=f"societies alive per process (default {PARALLEL})")] = None,
    quiet: Annotated[bool, typer.Option(help="no progress bar")] = False,
    live: Annotated[
        bool, typer.Option(help="a live dashboard: round, agents' last actions, the world's gauges")
    ] = False,
    events: Annotated[
        bool, typer.Option(help="print each progress event as a line of JSON on stdout (no bars, no summary table)")
    ] = False,
    fresh_memory: Annotated[
        bool, typer.Option(help="wipe this society's memories in the store first (with --resume: restart the run)")
    ] = False,
    model_for: Annotated[
        list[str] | None,
        typer.Option(help="NAME=MODEL: this agent (or every agent of this Path) decides with MODEL; repeatable"),
    ] = None,
    api_key: Annotated[
        str | None, typer.Option(help="the provider's key (else its env var); never saved: give it again on --resume")
    ] = None,
    max_calls: Annotated[int | None, typer.Option(min=1, help="stop (resumably) once this many calls are made")] = None,
    max_tokens: Annotated[
        int | None, typer.Option(min=1, help="stop (resumably) once this many tokens are used")
    ] = None,
    max_cost: Annotated[
        float | None, typer.Option(min=0, help="stop (resumably) at this cost (needs --prices)")
    ] = None,
    prices: Annotated[
        Path | None, typer.Option(help="YAML: model -> {input_per_1k, output_per_1k}, for --max-cost")
    ] = None,
    max_fallback_rate: Annotated[
        float | None, typer.Option(min=0, max=1, help="stop if a stand-in decides more of the turns (default 0.2)")
    ] = None,
    cache: Annotated[
        Path | None,
        typer.Option(help="the response cache's directory, to share between runs (default: the run's own)"),
    ] = None,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="ask the model every time; keep no answers")] = False,
    structured: Annotated[
        str, typer.Option(help="auto | json_schema | tools | off: how a decision is asked for natively")
    ] = default(RunConfig, "structured"),
) -> None:
    """Run a society (or --societies N at once) through its cycles: samples, summary.json, resumable checkpoints."""
    from amphoreus_graph.scepter.plan import is_scepter_run

    if out is not None:
        output_path(out, "--out", folder=True)
    scenarios = scenario or [default(RunConfig, "scenario")]
    many = societies > 1 or engine is not None or (resume is not None and is_scepter_run(resume))
    _check_modes(societies=societies, engine=engine, ray_cpus=ray_cpus, parallel=parallel)
    _check_one_society_options(
        many, live=live, quiet=quiet, events=events, fresh_memory=fresh_memory, api_key=api_key, memory=run["memory"]
    )
    shown = "events" if events else "live" if live else "quiet" if quiet else "bars"
    overrides = _overrides(scenario_overrides, many=many, resume=resume is not None)
    # The modes, told apart in this order (a resumed Scepter run takes no other option; a fork only its own).
    if resume is not None and is_scepter_run(resume):
        _simulate_many(
            resume, engine=engine, address=address, ray_cpus=ray_cpus, parallel=parallel, quiet=quiet, events=events
        )
        return
    limits = _limits(max_calls, max_tokens, max_cost, prices, max_fallback_rate)
    if fork is not None or at is not None:
        _simulate_fork(ctx, fork, at, out, overrides=overrides, api_key=api_key, limits=limits, shown=shown)
        return
    starts_many = resume is None and (societies > 1 or engine == "ray")
    config = _new_run_config(
        run,
        scenarios[0],
        out,
        societies=societies if starts_many else None,
        limits=limits,
        model_for=model_for,
        no_cache=no_cache,
        cache=cache,
        structured=structured,
    )
    if starts_many:
        _start_many(
            config,
            scenarios,
            societies,
            engine=engine,
            address=address,
            ray_cpus=ray_cpus,
            parallel=parallel,
            quiet=quiet,
            events=events,
        )
        return
    _check_one_society(scenarios, resume=resume, out=config.out, ray=address is not None or ray_cpus is not None)
    if config.memory is not None:
        config.memory_store()  # a memory URL no backend takes: one line before any progress bar
    if resume is not None:
        sim = _resumed(resume, fresh_memory=fresh_memory, limits=limits, api_key=api_key)
    else:
        sim = _new_simulation(config, overrides, fresh_memory=fresh_memory, api_key=api_key)
    _run_one(sim, resume=resume is not None, shown=shown)


def _new_run_config(
    run: dict[str, Any],
    scenario: str,
    out: Path | None,
    *,
    societies: int | None,
    limits: dict[str, Any],
    model_for: list[str] | None,
    no_cache: bool,
    cache: Path | None,
    structured: str,
) -> RunConfig:
    """A new run's config from simulate's options: one society's, or the template of a Scepter run of `societies`.
    Without --out it goes in runs/SCENARIO-sSEED-TIME (runs/SCENARIO-sSEED-nN-TIME for N societies)."""
    from amphoreus_graph.policy.routing import parse_model_for
    from amphoreus_graph.society.guard import Limits

    many = "" if societies is None else f"-n{societies}"
    return _run_config(
        **run,
        scenario=scenario,
        out=out or Path("runs") / f"{Path(scenario).stem}-s{run['seed']}{many}-{time.strftime('%Y%m%d-%H%M%S')}",
        limits=Limits().model_copy(update=limits),
        models=parse_model_for(model_for or []),
        cache=not no_cache,
        cache_dir=cache,
        structured=_structured_mode(structured),
    )


def _start_many(
    template: RunConfig,
    scenarios: list[str],
    societies: int,
    *,
    engine: str | None,
    address: str | None,
    ray_cpus: int | None,
    parallel: int | None,
    quiet: bool,
    events: bool,
) -> None:
    """`--societies N` (or `--engine ray`): a new Scepter run, its societies made from the template."""
    from amphoreus_graph.scepter.plan import check_engine

    plan = ScepterConfig(
        societies=societies,
        scenarios=scenarios,
        template=template,
        engine=check_engine(engine or "local"),
        address=address,
        ray_cpus=ray_cpus,
        parallel=parallel or PARALLEL,
    )
    _simulate_many(plan, address=address, ray_cpus=ray_cpus, quiet=quiet, events=events)


def _new_simulation(config: RunConfig, overrides: dict[str, Any], *, fresh_memory: bool, api_key: str | None) -> Any:
    """One new society, in its own variant of its scenario if --scenario-overrides gave one."""
    from amphoreus_graph.society.runner import Simulation

    return Simulation(_varied(config, overrides), fresh_memory=fresh_memory, api_key=api_key)


def _simulate_fork(
    ctx: typer.Context,
    parent: Path | None,
    at: str | None,
    out: Path | None,
    *,
    overrides: dict[str, Any],
    api_key: str | None,
    limits: dict[str, Any],
    shown: str,
) -> None:
    """`--fork RUN --at C/R --out NEW`: the branch replayed up to its fork point, then run on (with --events, a
    `forked` event says where it went first)."""
    branch = _forked(ctx, parent, at, out, overrides=overrides, api_key=api_key, limits=limits)
    if shown == "events":
        print(json.dumps(Forked(parent=str(parent), at=str(at), out_dir=str(out)).payload()), flush=True)
    _run_one(branch, resume=True, shown=shown)


def _resumed(run: Path, *, fresh_memory: bool, limits: dict[str, Any], api_key: str | None) -> Any:
    """The run in `run`, ready to go on; a fork stopped while it replayed its parent is finished first."""
    from amphoreus_graph.layout import RunDir
    from amphoreus_graph.society.fork import resume_fork
    from amphoreus_graph.society.runner import Simulation

    if not RunDir(run).fork_plan.is_file():
        return Simulation.resume(run, fresh_memory=fresh_memory, limits=limits, api_key=api_key)
    if fresh_memory:
        raise AmphoreusError(f"--resume {run}: a fork still being set up; expected no --fresh-memory")
    err_console.print(f"finishing the fork in {run}…", highlight=False)
    return asyncio.run(resume_fork(run, api_key=api_key, limits=limits))


def _check_one_society(scenarios: list[str], *, resume: Path | None, out: Path, ray: bool) -> None:
    """What one society (no --societies, no --engine) cannot be asked for."""
    from amphoreus_graph.scepter.plan import is_scepter_run

    if len(scenarios) > 1:
        raise AmphoreusError(f"--scenario given {len(scenarios)} times: one society runs one; expected --societies N")
    if ray:
        raise AmphoreusError("--address and --ray-cpus need --engine ray")
    if resume is None and is_scepter_run(out):
        raise AmphoreusError(f"{out}: already holds a run; expected a new --out, or --resume {out}")


def _overrides(text: str | None, *, many: bool, resume: bool) -> dict[str, Any]:
    """--scenario-overrides, read and checked against the other options (the variant itself is checked later)."""
    from amphoreus_graph.catalogs.scenario_files import read_overrides

    if text is None:
        return {}
    if many:
        raise AmphoreusError("--scenario-overrides varies one society's scenario; expected no --societies or --engine")
    if resume:
        raise AmphoreusError(
            "--scenario-overrides with --resume: a run's world does not change midway; expected --fork RUN --at "
            "CYCLE/ROUND --out NEW to branch off it with a variant"
        )
    return read_overrides(text, "--scenario-overrides")


def _varied(config: RunConfig, overrides: dict[str, Any]) -> RunConfig:
    """A new run in its own variant of its scenario (with overrides), written into its directory (which must hold no
    run); else the run as configured."""
    from amphoreus_graph.society.run_dir import prepare_run_dir
    from amphoreus_graph.society.variant import checked_variant, save_variant

    if not overrides:
        return config
    checked_variant(config.scenario, overrides, config.out)
    prepare_run_dir(config.out, resume=False)
    return config.model_copy(update={"scenario": save_variant(config.scenario, overrides, config.out)})


def _check_modes(*, societies: int, engine: str | None, ray_cpus: int | None, parallel: int | None) -> None:
    """The Scepter's options, each in its range."""
    from amphoreus_graph.scepter.plan import check_engine

    if societies < 1:
        raise AmphoreusError(f"--societies {societies}: expected at least 1")
    if engine is not None:
        check_engine(engine)
    for flag, value in (("--ray-cpus", ray_cpus), ("--parallel", parallel)):
        if value is not None and value < 1:
            raise AmphoreusError(f"{flag} {value}: expected at least 1")


def _check_one_society_options(
    many: bool, *, live: bool, quiet: bool, events: bool, fresh_memory: bool, api_key: str | None, memory: str | None
) -> None:
    """Options that only make sense for one society, refused with many."""
    if live and (quiet or many or events):
        raise AmphoreusError(
            "--live shows one society as it runs; expected no --quiet, --events, --societies or --engine"
        )
    if fresh_memory and many:
        raise AmphoreusError("--fresh-memory wipes one society's memories; expected no --societies or --engine")
    if memory is not None and many:
        raise AmphoreusError(
            "--memory names one society's store; expected --memory-dir or --chroma-url with --societies or --engine"
        )
    if api_key is not None and many:
        raise AmphoreusError(
            "--api-key with --societies or --engine: the key is never written to the plan its societies read; "
            "expected the provider's environment variable (e.g. OPENAI_API_KEY) instead"
        )


def _run_one(sim: Any, *, resume: bool, shown: str) -> None:
    """One society to its end, behind the progress bars or the live dashboard, then its closing summary; or as
    JSON lines of its events (`--events`, for scripts and the fork graph)."""
    if shown == "events":
        asyncio.run(_print_events(sim, resume=resume))
        return
    live = shown == "live"
    summary = asyncio.run(
        _drive_live(sim, resume=resume) if live else _drive(sim, resume=resume, quiet=shown == "quiet")
    )
    _print_summary(summary, sim.config.out)


async def _print_events(run: Any, *, resume: bool) -> None:
    """Each progress event of a run (a Simulation or a Scepter) as a line of JSON."""
    async for event in run.stream(resume=resume):
        print(json.dumps(event.payload()), flush=True)


# simulate's options a fork may change, by the RunConfig field each sets (society/fork.py says which fields may)
_BRANCH_OPTIONS = {
    option: field
    for option, field in {**RUN_OPTIONS, "model_for": "models", "structured": "structured"}.items()
    if field in BRANCHABLE
}
# options that say how to run the branch, not what it is
_FORK_RUN_OPTIONS = {"fork", "at", "out", "quiet", "live", "events", "api_key", "scenario_overrides"} | {
    "max_calls",
    "max_tokens",
    "max_cost",
    "prices",
    "max_fallback_rate",  # the branch's budgets
}


def _forked(
    ctx: typer.Context,
    parent: Path | None,
    at: str | None,
    out: Path | None,
    *,
    overrides: dict[str, Any],
    api_key: str | None,
    limits: dict[str, Any],
) -> Any:
    """`--fork RUN --at C/R --out NEW`: the branch, replayed up to its fork point and ready to go on."""
    from amphoreus_graph.policy.routing import parse_model_for
    from amphoreus_graph.society.fork import fork, parse_fork_point, plan_fork

    if parent is None or at is None or out is None:
        raise AmphoreusError("--fork RUN --at CYCLE/ROUND --out NEW: expected all three")
    given = [name for name in ctx.params if (source := ctx.get_parameter_source(name)) and source.name != "DEFAULT"]
    if fixed := [name for name in given if name not in _BRANCH_OPTIONS and name not in _FORK_RUN_OPTIONS]:
        shown = ", ".join("--" + name.replace("_", "-") for name in fixed)
        raise AmphoreusError(f"--fork: {shown} cannot change on a branch; expected the parent's (see --help)")
    values = dict(ctx.params) | {"model_for": parse_model_for(ctx.params.get("model_for") or [])}
    changes = {_BRANCH_OPTIONS[name]: values[name] for name in given if name in _BRANCH_OPTIONS}
    plan = plan_fork(parent, parse_fork_point(at), out, changes, overrides=overrides)
    err_console.print(f"replaying {parent} up to {at} into {out}…", highlight=False)
    return asyncio.run(fork(plan, api_key=api_key, limits=limits))


def _run_config(**options: Any) -> RunConfig:
    """The run's config from the options; a value its model refuses (a bound typer cannot state) is one line."""
    try:
        return RunConfig(**options)
    except ValidationError as exc:
        raise AmphoreusError(format_validation_error("options", exc)) from None


def _structured_mode(value: str) -> Any:
    """--structured, checked: one line naming what it takes."""
    from amphoreus_graph.models.structured import MODES

    if value not in MODES:
        raise AmphoreusError(f"--structured {value!r}: expected one of {', '.join(MODES)}")
    return value


def _limits(
    max_calls: int | None,
    max_tokens: int | None,
    max_cost: float | None,
    prices: Path | None,
    max_fallback_rate: float | None,
) -> dict[str, Any]:
    """The budget and breaker options given (a resume changes only these)."""
    from amphoreus_graph.society.guard import load_prices

    given: dict[str, Any] = {
        "max_calls": max_calls,
        "max_tokens": max_tokens,
        "max_cost": max_cost,
        "max_fallback_rate": max_fallback_rate,
        "prices": load_prices(prices) if prices is not None else None,
    }
    if max_cost is not None and prices is None:
        raise AmphoreusError("--max-cost: needs --prices FILE (model -> {input_per_1k, output_per_1k})")
    return {key: value for key, value in given.items() if value is not None}


def _simulate_many(
    plan_or_run: Any,
    *,
    quiet: bool,
    events: bool = False,
    engine: str | None = None,
    address: str | None = None,
    ray_cpus: int | None = None,
    parallel: int | None = None,
) -> None:
    """The Scepter: a new plan, or the Scepter run in a directory to resume (engine settings may change)."""
    from amphoreus_graph.cli.scepter import drive, print_summary
    from amphoreus_graph.scepter import Scepter

    resume = isinstance(plan_or_run, Path)
    if resume:
        scepter = Scepter.resume(plan_or_run, engine=engine, address=address, ray_cpus=ray_cpus, parallel=parallel)
    else:
        scepter = Scepter(plan_or_run)
    if scepter.plan.engine != "ray" and (address is not None or ray_cpus is not None):
        raise AmphoreusError("--address and --ray-cpus need --engine ray")
    if events:
        asyncio.run(_print_events(scepter, resume=resume))
        return
    summary = asyncio.run(drive(scepter, resume=resume, quiet=quiet, console=err_console))
    print_summary(summary, scepter.plan.out, console)


async def _drive(sim: Any, *, resume: bool, quiet: bool) -> dict[str, Any]:
    """The run behind three progress bars: cycles, rounds of this cycle, turns of this round."""
    from amphoreus_graph.catalogs.scenario import scenario_of

    cfg = sim.config
    scenario = scenario_of(cfg.scenario)
    rounds_total = cfg.rounds or scenario.rounds_per_cycle
    columns = (TextColumn("{task.description:<8}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=err_console, disable=quiet, transient=False) as progress:
        cycles = progress.add_task("cycles", total=cfg.cycles)
        rounds = progress.add_task("rounds", total=rounds_total)
        turns = progress.add_task("turns", total=len(scenario.agents))

        def show(event: ProgressEvent) -> None:
            match event:
                case CycleStarted():
                    progress.update(cycles, description=f"cycle {event.cycle}")
                    progress.reset(rounds, total=rounds_total)
                case RoundStarted():
                    progress.reset(turns, total=event.agents)
                    progress.update(rounds, description=f"round {event.round}")
                case TurnDone():
                    progress.advance(turns)
                case RoundDone():
                    progress.advance(rounds)
                case CycleDone():
                    progress.advance(cycles)

        return await follow(sim.stream(resume=resume), show)


async def _drive_live(sim: Any, *, resume: bool) -> dict[str, Any]:
    """The run behind a rich Live dashboard that every progress event redraws."""
    from rich.live import Live

    from amphoreus_graph.catalogs.scenario import scenario_of
    from amphoreus_graph.live import LiveDashboard

    cfg = sim.config
    scenario = scenario_of(cfg.scenario)
    board = LiveDashboard(scenario, cycles=cfg.cycles, rounds=cfg.rounds or scenario.rounds_per_cycle, run=cfg.run_id)
    with Live(board.render(), console=err_console, refresh_per_second=8) as view:

        def show(event: ProgressEvent) -> None:
            board.update(event)
            view.update(board.render())

        return await follow(sim.stream(resume=resume), show)


def _print_summary(summary: dict[str, Any], out: Path) -> None:
    """The run's closing table in its world's words: how each cycle ended, its score, who fell."""
    table = Table(title=f"Run {summary['run']} — {summary['scenario']} with {summary['model']}")
    for column in ("Cycle", "Outcome", "Rounds", "Score", "How it ended", "Fallen"):
        table.add_column(column)
    for c in summary["cycles"]:
        table.add_row(
            str(c["cycle"]),
            c["outcome"].replace("_", " "),
            str(c["rounds"]),
            "–" if c["score"] is None else f"{c['score']:g}",
            c["text"],
            ", ".join(c["fallen"]) or "–",
        )
    console.print(table)
    top = sorted(summary["tally_per_agent"].items(), key=lambda kv: -kv[1])[:3]
    files = RunDir(out)
    if roles := _roles_table(summary.get("models") or {}):
        console.print(roles)
    if (cached := summary.get("cache") or {}).get("hits"):
        saved = cached["would_have_cost"]
        cost = f", cost {saved['cost']:g}" if "cost" in saved else ""
        console.print(
            f"response cache: {cached['hits']} answers not asked again (they would have cost tokens "
            f"{saved['tokens_in']}/{saved['tokens_out']}{cost}) · {out / cached['file']}",
            highlight=False,
        )
    repaired, redacted = summary.get("secret_repaired", 0), summary.get("secret_redacted", 0)
    secrets = f"secrets kept out of speech {repaired + redacted} (by asking again {repaired}, redacted {redacted}) · "
    console.print(
        f"samples {summary['samples_written']} · model calls {summary['model_calls']} · "
        f"failures {summary['failures']} · fallbacks {summary['fallbacks']} · {secrets if repaired + redacted else ''}"
        f"tokens {summary['tokens_in']}/{summary['tokens_out']} · {summary['wall_time_s']:.1f}s\n"
        f"most {summary['score_label']}: {', '.join(f'{name} {n:g}' for name, n in top)}\n"
        f"written to {out}/ ({files.summary.name}, {files.samples.name}/, {files.chronicle.name}/, "
        f"{files.checkpoint.name})\n"
        f"see it: {command_name()} report {out} --open",
        highlight=False,
        soft_wrap=True,  # commands stay on one line, to be copied
    )


def _roles_table(models: dict[str, Any]) -> Table | None:
    """Every model call of the run by role, as the gateway counted it (None when no model was called)."""
    if not any(use["calls"] or use["cache_hits"] for use in models.values()):
        return None
    table = Table(title="Model calls by role")
    for column in (
        "Role",
        "Calls",
        "Failed (by kind)",
        "Retries",
        "Repairs",
        "Fallbacks",
        "Tokens in/out",
        "p50/p90 ms",
    ):
        table.add_column(column)
    for role, use in models.items():
        kinds = ", ".join(f"{kind} {n}" for kind, n in sorted(use["failures"].items()))
        latency = use["latency_ms"]
        table.add_row(
            role,
            str(use["calls"]) + (f" (+{use['cache_hits']} cached)" if use["cache_hits"] else ""),
            f"{use['failed']}" + (f" ({kinds})" if kinds else ""),
            str(use["retries"]),
            str(use["repairs"]),
            str(use["fallbacks"]),
            f"{use['tokens_in']}/{use['tokens_out']}",
            f"{latency['p50'] or '–'}/{latency['p90'] or '–'}",
        )
    return table


@app.command()
@one_line_errors
def report(
    run: Annotated[Path, typer.Argument(help="a run directory written by `amphoreus simulate`")],
    open_: Annotated[bool, typer.Option("--open", help="open the report in the default browser")] = False,
    bench: Annotated[Path | None, typer.Option(help="a leaderboard.json (or its folder) to show")] = None,
    alignment: Annotated[bool, typer.Option(help="score Path alignment with the offline panels")] = True,
    out: Annotated[Path | None, typer.Option(help="the page to write (default: RUN/report.html)")] = None,
    skip_bad_rows: SkipBadRows = False,
) -> None:
    """Write RUN/report.html: one self-contained page (timeline, trust, Path alignment, memory, transcript)."""
    import webbrowser

    from amphoreus_graph.layout import RunDir
    from amphoreus_graph.report import load_run, write_report

    if out is not None:
        output_path(out, "--out", folder=False)
    else:
        output_path(RunDir(run).report, "report", folder=False, way_out="--out FILE writes it elsewhere")
    with bad_rows(skip_bad_rows), err_console.status("reading the run…"):
        target = write_report(load_run(run, bench=bench, judge_alignment=alignment), out or RunDir(run).report)
    console.print(f"written to {target} ({target.stat().st_size / 1e6:.1f} MB)", highlight=False)
    if open_:
        webbrowser.open(target.resolve().as_uri())


memory_app = typer.Typer(help="Look inside a run's memory, or compact it.", no_args_is_help=True)
app.add_typer(memory_app, name="memory")


@memory_app.command("inspect")
@one_line_errors
def memory_inspect(
    run: Annotated[Path, typer.Argument(help="a run directory")],
    agent: Annotated[str, typer.Option(help="whose memory")],
    query: Annotated[str, typer.Option(help="what the agent is trying to remember")],
    k: Annotated[int, typer.Option("-k", "--k", min=1, help="how many memories")] = 5,
) -> None:
    """Show what an agent would recall for a query, with the parts of each score."""
    from amphoreus_graph.contracts.memory import gist
    from amphoreus_graph.society.inspect import inspect_recall

    now, found = inspect_recall(run, agent, query, k)
    table = Table(title=f"{agent} recalls “{query}” (cycle {now.cycle}, tick {now.tick})")
    for column in ("#", "score", "rel", "imp", "rec", "c.r", "kind"):
        table.add_column(column, no_wrap=True)
    table.add_column("memory", ratio=1, overflow="fold")
    for i, m in enumerate(found, 1):
        kind = "public" if m.public else m.kind
        row = (f"{m.score:.2f}", f"{m.relevance:.2f}", f"{m.importance:.0f}", f"{m.recency:.2f}")
        table.add_row(str(i), *row, f"{m.cycle}.{m.round}", kind, gist(m.text, 120))
    console.print("score = w_rec·rec + w_imp·imp/10 + w_rel·rel, × cycle weight per cycle gone by", style="dim")
    console.print(table if found else f"{agent} remembers nothing that matches.")


@memory_app.command("compact")
@one_line_errors
def memory_compact(run: Annotated[Path, typer.Argument(help="a run directory (not running)")]) -> None:
    """Shrink a run's memory store: its write log to what a rebuild needs, its file to what it holds."""
    from amphoreus_graph.society.memory_compaction import compact_run_memory

    done = compact_run_memory(run)
    for line in done.repaired:
        print_warning(line)
    console.print(
        f"{done.store}: {done.bytes_before / 1e6:.1f} MB → {done.bytes_after / 1e6:.1f} MB; its write log "
        f"{done.writes_before:,} → {done.writes_after:,} writes",
        highlight=False,
    )


app.add_typer(export_app, name="export")
app.add_typer(train_app, name="train")
app.command("judge")(judge_command)
app.command("bench")(bench_command)
app.command("interview")(interview_command)
app.command("studio")(studio_command)
