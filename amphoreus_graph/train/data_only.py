"""Trained files are data (docs/trust.md): tensors, numbers, lists and dicts. A file holding other pickled objects,
whose loading could run code, is refused unread; torch's own message says how to load it anyway, not what to do."""

from __future__ import annotations

import pickle
import re
from pathlib import Path

from amphoreus_graph.errors import AmphoreusError


def load_refused(where: Path, exc: BaseException, expected: str) -> AmphoreusError:
    """The one line for a trained file (or folder) `where` that `exc` stopped from loading."""
    if isinstance(exc, pickle.UnpicklingError) and (named := re.search(r"Unsupported global: GLOBAL (\S+)", str(exc))):
        return AmphoreusError(
            f"{where}: holds a pickled {named[1]}, not only tensors, numbers, lists and dicts; refused unread "
            f"(loading it could run code): {expected}"
        )
    said = str(exc).strip().splitlines()
    return AmphoreusError(f"{where}: cannot load it ({type(exc).__name__}{f': {said[0]}' if said else ''}); {expected}")
