"""The embedder: ONNX Runtime gives sentence-transformers' vectors, exports once, and falls back to PyTorch."""

from __future__ import annotations

import numpy as np
import pytest

from amphoreus_graph.errors import AmphoreusError
from amphoreus_graph.memory import embedder as embedder_module
from amphoreus_graph.memory import onnx_encoder
from amphoreus_graph.memory.embedder import Embedder, default_embedder

TEXTS = [
    "At Okhema, Aglaea won the Coreflame of Sky from the Titan Aquila.",
    "Mydei attacked Phainon, who was hurt badly.",
    "A",
    "",
    "   padded with spaces   ",
    "Tribbie made everyone nearby laugh. " * 60,  # past the model's 256 tokens: truncated alike
    "Ünïcödé, emoji 🌿 and the Grove of Dodona",
]


@pytest.fixture(scope="module")
def torch_embedder() -> Embedder:
    return Embedder(backend="torch")


def test_the_default_embedder_runs_on_onnx_and_gives_pytorchs_vectors(embedder, torch_embedder):
    assert embedder.backend == "onnx" and torch_embedder.backend == "torch"
    ours, theirs = embedder.encode(TEXTS), torch_embedder.encode(TEXTS)
    assert ours.shape == theirs.shape == (len(TEXTS), 384)
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
    assert float(np.abs(ours - theirs).max()) < 1e-4
    # batches are formed by length: the order of the texts must not change any text's vector
    shuffled = embedder.encoder.encode(TEXTS[::-1], batch_size=3)[::-1]
    assert float(np.abs(shuffled - ours).max()) < 1e-5


def test_an_export_is_made_once_and_then_loads_without_pytorch(tmp_path, monkeypatch):
    monkeypatch.setenv("AMPHOREUS_CACHE_DIR", str(tmp_path))
    first = Embedder(backend="onnx")
    assert first.backend == "onnx"
    exports = list((tmp_path / "onnx").iterdir())
    assert len(exports) == 1 and (exports[0] / "model.onnx").exists()  # no temp dir left behind

    def no_torch(*_: object) -> None:
        raise AssertionError("the cached export should not load the PyTorch model")

    monkeypatch.setattr(embedder_module, "_load_sentence_transformer", no_torch)
    again = Embedder(backend="onnx")
    assert again.backend == "onnx"
    assert np.array_equal(again.encode(TEXTS[:3]), first.encode(TEXTS[:3]))


def test_a_failed_export_falls_back_to_pytorch_and_leaves_nothing(tmp_path, monkeypatch, caplog):
    import torch

    def broken_export(*_: object, **__: object) -> None:
        raise RuntimeError("unsupported operator")

    monkeypatch.setenv("AMPHOREUS_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(torch.onnx, "export", broken_export)
    fallback = Embedder(backend="onnx")
    assert fallback.backend == "torch"
    assert "staying on PyTorch" in caplog.text and "unsupported operator" in caplog.text
    assert not any((tmp_path / "onnx").iterdir())
    assert fallback.encode(["still embeds"]).shape == (1, 384)


def test_an_export_that_disagrees_with_pytorch_is_not_kept(tmp_path, monkeypatch, caplog):
    monkeypatch.setenv("AMPHOREUS_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(onnx_encoder, "TOLERANCE", -1.0)  # no export can pass: stands for a wrong one
    assert Embedder(backend="onnx").backend == "torch"
    assert "vectors differ from PyTorch's" in caplog.text
    assert not any((tmp_path / "onnx").iterdir())


def test_the_backend_setting_is_checked(monkeypatch):
    monkeypatch.setenv("AMPHOREUS_EMBEDDER_BACKEND", "tensorflow")
    with pytest.raises(AmphoreusError, match="AMPHOREUS_EMBEDDER_BACKEND='tensorflow': expected 'onnx' or 'torch'"):
        default_embedder()


def test_an_unknown_model_is_one_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("AMPHOREUS_CACHE_DIR", str(tmp_path))
    with pytest.raises(AmphoreusError, match=r"--embedder .*cannot load it offline"):
        Embedder(str(tmp_path / "no-such-model"))
