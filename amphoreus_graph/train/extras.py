"""The `[train]` extra: one clear line, not an ImportError traceback, when torch, transformers or TRL is missing."""

from __future__ import annotations

import importlib

from amphoreus_graph.errors import AmphoreusError

TRAIN_EXTRA_HINT = "pip install 'amphoreus-graph[train]'"
TRAIN_PACKAGES = ("torch", "transformers", "tokenizers", "datasets", "trl")


class MissingExtraError(AmphoreusError):
    """A training command or `pes:` model without the packages it needs."""


def require_train_extra(*packages: str) -> None:
    """Import the packages (all of the extra by default) or raise one line saying how to install them."""
    missing = []
    for name in packages or TRAIN_PACKAGES:
        try:
            importlib.import_module(name)
        except ImportError:
            missing.append(name)
    if missing:
        raise MissingExtraError(f"training needs {', '.join(missing)}, which is not installed ({TRAIN_EXTRA_HINT})")
