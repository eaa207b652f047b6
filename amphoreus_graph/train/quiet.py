"""Keep the training libraries' own progress bars and deprecation notices out of our output (we print our own
progress), and restore their settings afterwards so a library caller's process is left as it was."""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator


@contextlib.contextmanager
def quiet_libraries() -> Iterator[None]:
    from transformers.utils import logging as hf_logging

    try:
        import datasets
    except ImportError:  # only DPO needs datasets
        datasets = None  # type: ignore[assignment]
    hf_bars = hf_logging.is_progress_bar_enabled()
    ds_bars = datasets.is_progress_bar_enabled() if datasets is not None else False
    hf_logging.disable_progress_bar()
    if datasets is not None:
        datasets.disable_progress_bars()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)  # transformers 5 renames that TRL still calls
            yield
    finally:
        if hf_bars:
            hf_logging.enable_progress_bar()
        if ds_bars and datasets is not None:
            datasets.enable_progress_bars()
