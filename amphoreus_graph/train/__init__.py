"""Optional: train the PES model on a society's own data (pre-train, then DPO) and let it decide again.

torch, transformers and TRL load inside the functions that need them, so the base install (and the CLI, which reads
the settings models here for its options) works without the `[train]` extra.

- `pretrain(rows, out, config)`: a small causal LM (own byte-level BPE tokenizer and chat template) from scratch,
  or continued from a local Hugging Face checkpoint; see `amphoreus_graph.train.pretrain`.
- `train_dpo(pairs_dir, model_dir, out, settings)`: TRL's DPOTrainer on `amphoreus judge` pairs, with a held-out
  reward margin before and after; see `amphoreus_graph.train.dpo`.
- `PESPolicy` (`--model pes:CKPT`): a checkpoint as a society policy; see `amphoreus_graph.train.policy`.
"""

from amphoreus_graph.train.configs import SIZES, DpoSettings, PretrainConfig
from amphoreus_graph.train.corpus import read_dpo_pairs, read_sft_rows
from amphoreus_graph.train.dpo import DpoMetrics, train_dpo
from amphoreus_graph.train.pretrain import PretrainMetrics, pretrain

__all__ = [
    "SIZES",
    "DpoMetrics",
    "DpoSettings",
    "PretrainConfig",
    "PretrainMetrics",
    "pretrain",
    "read_dpo_pairs",
    "read_sft_rows",
    "train_dpo",
]
