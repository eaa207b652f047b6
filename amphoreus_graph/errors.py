"""Errors a user can cause. The CLI prints them as one line and exits 2; they never carry a traceback."""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

InputT = TypeVar("InputT", bound=BaseModel)


class AmphoreusError(ValueError):
    """A problem the user can fix (bad input, missing extra, unknown model). Printed as one line. A ValueError, so
    that `langgraph dev` shows its line in Studio (the server hides the message of exceptions it does not know)."""


class ScenarioError(AmphoreusError):
    """A scenario file that cannot be loaded: names the file, the field path and what was expected."""


class ModelSpecError(AmphoreusError):
    """A `--model` value that cannot be turned into a policy."""


def field_path(loc: tuple[int | str, ...]) -> str:
    """Render a pydantic location tuple as `agents[3].path`."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out or "(top level)"


def format_validation_error(source: str, exc: ValidationError, at: tuple[int | str, ...] = ()) -> str:
    """One line for the first problem pydantic found: file, field path (below `at`, where the data validated
    lies in the file), what was expected."""
    first = exc.errors()[0]
    more = exc.error_count() - 1
    suffix = f" (and {more} more problem{'s' if more > 1 else ''})" if more else ""
    got = first.get("input")
    got_text = "" if first["type"] == "missing" or isinstance(got, dict | list) else f", got {got!r}"
    return f"{source}: {field_path((*at, *first['loc']))}: {first['msg']}{got_text}{suffix}"


def stored_model(model: type[InputT], path: Path, written_by: str) -> InputT:
    """A JSON file read into its model; a missing, unreadable or damaged file is one line naming the file (and
    field), and what should have written it."""
    if not path.is_file():
        raise AmphoreusError(f"{path}: no such file; expected a file written by {written_by}")
    try:
        return model.model_validate_json(path.read_text(encoding="utf-8"))
    except ValidationError as exc:
        raise AmphoreusError(format_validation_error(str(path), exc)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise AmphoreusError(f"{path}: cannot read it ({exc}); expected a file written by {written_by}") from None


def graph_input(schema: type[InputT], state: Mapping[str, Any], source: str) -> InputT:
    """A graph's input with its schema's defaults applied (LangGraph hands a dict input over without running it
    through the schema: the HTTP API, Studio, `graph.invoke({})`); a field it cannot take is one line."""
    given = {name: value for name, value in state.items() if name in schema.model_fields and value is not None}
    try:
        return schema.model_validate(given)
    except ValidationError as exc:
        raise AmphoreusError(format_validation_error(source, exc)) from None


class RunStopped(AmphoreusError):
    """A run stopped on purpose, checkpointed and resumable: a budget spent, a model unreachable, too many
    fallbacks. The CLI prints it as one line and exits 3 (2 is for input the user can correct)."""

    exit_code = 3


class OutsideFault(AmphoreusError):
    """A fault outside the user's input (a full disk, a dead server): the run stops at its last checkpoint, in one
    line, and resumes once the cause is gone. Exit code 3, as a run stopped on purpose."""

    exit_code = 3


class WriteFailed(OutsideFault):
    """A file a run must write could not be written (a full disk, a file made read-only)."""


def cannot_write(path: Path, error: BaseException) -> WriteFailed:
    """The one line for a failed write: the file, why, and, where the disk may be full, how much room is left."""
    why = getattr(error, "strerror", None) or str(error) or type(error).__name__
    free = ""
    if isinstance(error, OSError | sqlite3.Error):
        with contextlib.suppress(OSError):
            free = f"; {shutil.disk_usage(path.parent).free:,} bytes free on its disk"
    return WriteFailed(
        f"{path}: cannot write it ({type(error).__name__}: {why}{free}); the run stopped at its last checkpoint: "
        "fix the cause, then --resume the run"
    )


def _limit(where: Path, name: str, fallback: int) -> int:
    """A limit of the filesystem `where` is on (`PC_NAME_MAX`, `PC_PATH_MAX`), or the usual one where it says none."""
    try:
        return int(os.pathconf(where, name))
    except (OSError, ValueError):
        return fallback


def output_path(path: Path, what: str, *, folder: bool, way_out: str = "") -> Path:
    """A path the user gave to write to (`folder`: a folder to write into, else a file), checked before any work is
    done: each name in it within what its filesystem allows, the whole too; not a file where a folder is meant, or
    a folder where a file is; somewhere this process may write. One line otherwise (`way_out` said after it)."""
    full = Path(os.path.abspath(path))
    existing = next((p for p in full.parents if os.path.isdir(p)), Path(full.anchor))
    name_max, path_max = _limit(existing, "PC_NAME_MAX", 255), _limit(existing, "PC_PATH_MAX", 4096)
    longest = max(full.parts, key=lambda part: len(os.fsencode(part)))
    if len(os.fsencode(longest)) > name_max:
        problem = f"the name {longest[:24]}… is {len(os.fsencode(longest))} bytes; expected at most {name_max}"
        raise AmphoreusError(f"{what}: {problem} bytes per name on this filesystem{_then(way_out)}")
    if len(os.fsencode(str(full))) >= path_max:
        problem = f"the path is {len(os.fsencode(str(full)))} bytes; expected under {path_max}"
        raise AmphoreusError(f"{what}: {problem}{_then(way_out)}")
    nearest = full if full.exists() else existing
    if folder and full.exists() and not full.is_dir():
        problem = "not a directory; expected a folder to write into (or a new path)"
    elif not folder and full.is_dir():
        problem = "a folder; expected a file to write"
    elif not os.access(nearest, os.W_OK) or (not folder and full.exists() and not os.access(full.parent, os.W_OK)):
        problem = f"cannot write there ({nearest} is read-only); expected a writable place"
    else:
        return path
    raise AmphoreusError(f"{what} {path}: {problem}{_then(way_out)}")


def _then(way_out: str) -> str:
    return f"; {way_out}" if way_out else ""
