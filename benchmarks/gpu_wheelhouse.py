"""Build a wheelhouse for a GPU image that has Python 3.12 and a CUDA torch, and nothing else of ours.

    python benchmarks/gpu_wheelhouse.py --out wheelhouse [--dry-run]

It holds what the seed table's training and recording phases import (`seed_table.py --data ... --record-only`),
pinned to the versions installed here (the ones this checkout is tested with), for CPython 3.12 on manylinux
x86_64, without torch and what only torch needs (the image has them); the project's own wheel; and the two
scripts, seed_table.py and bench_common.py. On the GPU machine (docs/training.md, "On a GPU machine"):

    pip install --no-index --no-deps wheelhouse/*.whl
    python wheelhouse/seed_table.py --data data --out out --device cuda --record-only ...

The set of distributions is measured, not listed: this script imports the seed table and what its phases load
lazily (transformers, TRL, datasets, tokenizers), maps every module loaded to its distribution and adds their
declared requirements (as Python 3.12 on Linux reads them); Chroma and LangGraph are not among them (a test checks
that the recording phase runs without them). `--dry-run` prints the pins and the commands, downloads nothing.
"""

from __future__ import annotations

import argparse
import importlib
import shlex
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path

from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
PROJECT = "amphoreus-graph"
IN_THE_IMAGE = {"torch"}  # with what only it requires (nvidia-*, triton, sympy, ...), never followed
LAZY = ("transformers", "trl", "datasets", "tokenizers", "accelerate", "safetensors")  # loaded inside functions
PLATFORMS = ("manylinux_2_28_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64", "linux_x86_64")
TARGET = {**default_environment(), "python_version": "3.12", "python_full_version": "3.12.0"}
TARGET |= {"sys_platform": "linux", "platform_system": "Linux", "platform_machine": "x86_64"}


def imported_distributions() -> set[str]:
    """The distributions of every module the seed table's phases load (they run here to find out)."""
    sys.path.insert(0, str(HERE))
    importlib.import_module("seed_table")
    for name in LAZY:
        importlib.import_module(name)
    owners = metadata.packages_distributions()
    found = {canonicalize_name(d) for m in list(sys.modules) for d in owners.get(m.partition(".")[0], [])}
    return found - {canonicalize_name(PROJECT)}


def closure(roots: set[str]) -> dict[str, str]:
    """Every installed distribution the roots require, transitively, as Python 3.12 on Linux reads the markers;
    name → the version installed here. Torch's branch is left to the image."""
    pins: dict[str, str] = {}
    todo = sorted(roots - IN_THE_IMAGE)
    while todo:
        name = todo.pop()
        if name in pins or name in IN_THE_IMAGE:
            continue
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue  # an optional dependency not installed here: nothing here imports it either
        pins[name] = dist.version
        for line in dist.requires or []:
            requirement = Requirement(line)
            if requirement.marker is None or requirement.marker.evaluate({**TARGET, "extra": ""}):
                todo.append(canonicalize_name(requirement.name))
    return dict(sorted(pins.items()))


def commands(out: Path, pins: dict[str, str]) -> list[list[str]]:
    tags = [f"--platform={p}" for p in PLATFORMS]
    download = [sys.executable, "-m", "pip", "download", "--dest", str(out), "--no-deps", "--only-binary=:all:"]
    download += ["--python-version", "3.12", "--implementation", "cp", *tags]
    download += ["--abi", "cp312", "--abi", "abi3", "--abi", "none", *(f"{n}=={v}" for n, v in pins.items())]
    project = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w", str(out), str(REPO)]
    return [download, project]


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--out", default="wheelhouse", help="the folder to fill (made if missing)")
    parser.add_argument("--dry-run", action="store_true", help="print the pins and the commands; download nothing")
    args = parser.parse_args()
    out = Path(args.out)
    pins = closure(imported_distributions())
    steps = commands(out, pins)
    if args.dry_run:
        print("\n".join(f"{n}=={v}" for n, v in pins.items()))
        print("\n".join(shlex.join(step) for step in steps))
        return
    out.mkdir(parents=True, exist_ok=True)
    (out / "requirements.txt").write_text("".join(f"{n}=={v}\n" for n, v in pins.items()), encoding="utf-8")
    for step in steps:
        done = subprocess.run(step)
        if done.returncode:
            sys.exit(f"gpu_wheelhouse: {shlex.join(step[:4])} ... failed (exit {done.returncode})")
    for script in ("seed_table.py", "bench_common.py"):
        shutil.copy2(HERE / script, out / script)
    wheels = sorted(p.name for p in out.glob("*.whl"))
    print(f"{out}: {len(wheels)} wheels ({len(pins)} pinned + {PROJECT}), seed_table.py, bench_common.py")


if __name__ == "__main__":
    main()
