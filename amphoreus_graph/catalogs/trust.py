"""The trust boundary (docs/trust.md): which code a scenario may run, and which files it may read.

A scenario is data; the code it names (a world plug-in `file.py:attr` or `module:attr`, a kit resolver) runs
because the person who ran the scenario chose to: from the CLI or the library it runs. A server's inputs are
data only: in a process started with AMPHOREUS_DATA_ONLY=1 (langgraph.json and `amphoreus studio` set it) a
scenario naming code is refused in one line, unless whoever started the server opted in with
AMPHOREUS_TRUST_CODE=1. Installed code is trusted everywhere: registered world plug-ins, and the code files of
the packaged worlds (their resolvers).

The files a scenario reads (`seeds:`, `paths:`, each seed file) lie in the scenario's own folder, symlinks and
`..` resolved first, or among the package's own data; elsewhere only when the user sets
AMPHOREUS_ALLOW_OUTSIDE_FILES=1 (a key of the scenario could not be that opt-in: the scenario is what is not
trusted). These are options of the process, so a child it starts (the fork graph's `simulate`) keeps them.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from amphoreus_graph.errors import ScenarioError

DATA_ONLY = "AMPHOREUS_DATA_ONLY"
TRUST_CODE = "AMPHOREUS_TRUST_CODE"
OUTSIDE_FILES = "AMPHOREUS_ALLOW_OUTSIDE_FILES"
PACKAGE = Path(__file__).resolve().parents[1]  # its data (catalogs, worlds) is public; its worlds' code installed
PACKAGED_CODE = PACKAGE / "worlds"
_YES = frozenset({"1", "true", "yes", "on"})


def _set(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in _YES


def code_may_run() -> bool:
    """Whether code a scenario names may run in this process: yes, unless it serves data only and was not told
    to trust code."""
    return not _set(DATA_ONLY) or _set(TRUST_CODE)


def allow_code(where: str, spec: str, file: Path | None) -> None:
    """Refuse `spec` (code a scenario names at `where`; `file`: the Python file, resolved, if it names one)
    where code may not run, unless it is one of the packaged worlds' own files."""
    if code_may_run() or (file is not None and file.is_relative_to(PACKAGED_CODE)):
        return
    raise ScenarioError(
        f"{where}: {spec!r} names code (a Python file or module) and this server takes data only; expected a "
        f"registered world and no resolvers, or a server started with {TRUST_CODE}=1 by whoever trusts the scenario"
    )


def inside(where: str, folder: Path, target: Path) -> Path:
    """`target` (a file or folder a scenario in `folder` names at `where`), resolved; refused when it lies outside
    that folder and the package, unless the user allowed files outside."""
    resolved, own = target.resolve(), folder.resolve()
    if _set(OUTSIDE_FILES) or resolved.is_relative_to(own) or resolved.is_relative_to(PACKAGE):
        return resolved
    raise ScenarioError(
        f"{where}: {resolved} lies outside {own}; expected a file inside that folder (or {OUTSIDE_FILES}=1 set "
        "by a user who trusts the scenario with files elsewhere)"
    )


def import_code(target: str, spec: str, source: Path, field: str, noun: str) -> ModuleType:
    """The module `target` names (of `spec`, at `field` of the scenario `source`): a Python file relative to the
    scenario's folder, or an importable module; imported once per file and process, and only where code may run.
    Anything wrong is one ScenarioError line naming the field."""
    file = (source.parent / target).resolve() if target.endswith(".py") else None
    allow_code(f"{source}: {field}", spec, file)
    try:
        if file is None:
            return importlib.import_module(target)
        if not file.is_file():
            raise ScenarioError(f"{source}: {field}: no such {noun} file {file}; expected a Python file")
        name = f"amphoreus_code_{file.stem}_{hashlib.sha256(str(file).encode()).hexdigest()[:12]}"
        if (module := sys.modules.get(name)) is not None:
            return module
        loader = importlib.util.spec_from_file_location(name, file)
        if loader is None or loader.loader is None:
            raise ScenarioError(f"{source}: {field}: cannot import {file}; expected a Python file")
        module = importlib.util.module_from_spec(loader)
        sys.modules[name] = module  # so the code's pydantic models resolve their annotations
        try:
            loader.loader.exec_module(module)
        except BaseException:
            sys.modules.pop(name, None)
            raise
        return module
    except ScenarioError:
        raise
    except Exception as exc:
        raise ScenarioError(
            f"{source}: {field}: cannot load {spec!r} ({type(exc).__name__}: {exc}); expected a {noun}"
        ) from None


def takes(found: Any, *arguments: Any) -> bool:
    """Whether the callable `found` can be called with `arguments` (checked before it is called: a scenario naming
    `os:system` as its world must not get as far as calling it)."""
    try:
        inspect.signature(found).bind(*arguments)
    except (TypeError, ValueError):
        return False
    return True
