"""Where training and generation run: CUDA with bf16 autocast when present, else CPU in fp32."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

from amphoreus_graph.errors import AmphoreusError

if TYPE_CHECKING:
    import torch


def pick_device(name: str = "auto") -> torch.device:
    import torch

    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name == "cuda" and not torch.cuda.is_available():
        raise AmphoreusError("--device cuda: no CUDA device is available here; expected --device cpu or auto")
    if name not in ("cpu", "cuda"):
        raise AmphoreusError(f"--device {name!r}: expected auto, cpu or cuda")
    return torch.device(name)


def autocast(device: torch.device) -> contextlib.AbstractContextManager[object]:
    """bf16 autocast on CUDA (weights stay fp32 for the optimizer); nothing on CPU."""
    import torch

    if device.type == "cuda":
        return torch.autocast("cuda", dtype=torch.bfloat16)
    return contextlib.nullcontext()
