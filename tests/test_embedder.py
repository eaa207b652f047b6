"""The embedder: ONNX Runtime gives sentence-transformers' vectors, exports once, and falls back to PyTorch; its
int8 variant is used only once it has passed its probe check against fp32."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import numpy as np
import pytest
from numpy.typing import NDArray

from amphoreus_graph.errors import AmphoreusError
from amphoreus_graph.models import embedder as embedder_module
from amphoreus_graph.models import onnx_encoder
from amphoreus_graph.models.embedder import Embedder, default_embedder
from amphoreus_graph.models.onnx_encoder import INT8_MODEL, INT8_VERDICT, OnnxEncoder

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


@pytest.fixture(scope="module")
def fp32_embedder() -> Embedder:
    return Embedder(backend="onnx-fp32")


def test_onnx_fp32_gives_pytorchs_vectors(fp32_embedder, torch_embedder):
    assert (fp32_embedder.backend, fp32_embedder.precision) == ("onnx", "fp32") and torch_embedder.backend == "torch"
    ours, theirs = fp32_embedder.encode(TEXTS), torch_embedder.encode(TEXTS)
    assert ours.shape == theirs.shape == (len(TEXTS), 384)
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
    assert float(np.abs(ours - theirs).max()) < 1e-4
    # batches are formed by length: the order of the texts must not change any text's vector
    shuffled = fp32_embedder.encoder.encode(TEXTS[::-1], batch_size=3)[::-1]
    assert float(np.abs(shuffled - ours).max()) < 1e-5


def test_the_default_embedder_runs_int8_after_it_passed_its_probe_check(embedder, fp32_embedder, monkeypatch):
    assert (embedder.backend, embedder.precision) == ("onnx", "int8")
    verdict = json.loads((embedder.encoder.directory / INT8_VERDICT).read_text())
    assert verdict["passed"] and verdict["agreement"] >= onnx_encoder.AGREEMENT_FLOOR
    assert verdict["min_cosine"] >= onnx_encoder.COSINE_FLOOR
    # the stored verdict is what the check gives now
    check = onnx_encoder.probe_check(fp32_embedder.encoder, embedder.encoder)
    assert check.passed and (check.agreement, check.min_cosine) == pytest.approx(
        (verdict["agreement"], verdict["min_cosine"]), abs=1e-3
    )
    ours, exact = embedder.encode(TEXTS), fp32_embedder.encode(TEXTS)
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
    assert float(np.min(np.sum(ours * exact, axis=1))) > 0.97
    # int8 runs one text at a time: a text's vector does not depend on what it was embedded with
    assert np.array_equal(embedder.encoder.encode(TEXTS[::-1], batch_size=3)[::-1], embedder.encoder.encode(TEXTS, 64))
    # the check ran once per model: a new embedder reads the verdict instead of checking again
    monkeypatch.setattr(onnx_encoder, "probe_check", _never)
    assert Embedder(backend="onnx").precision == "int8"


def _never(*_: object, **__: object) -> None:
    raise AssertionError("the stored verdict should have been used")


class FakeEncoder:
    """Fixed vectors by text: a tiny probe set whose top-5s are known by hand."""

    dims = 6

    def __init__(self, vectors: dict[str, list[float]]) -> None:
        self.vectors = vectors

    def encode(self, texts: list[str], batch_size: int) -> NDArray[np.float32]:
        rows = np.asarray([self.vectors[t] for t in texts], dtype=np.float32)
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_agreement_is_the_mean_overlap_of_the_top_5s(monkeypatch):
    memories = {f"m{i}": [float(i == j) for j in range(6)] for i in range(6)}  # memory i: the i-th axis
    reference = {**memories, "q0": [6, 5, 4, 3, 2, 1], "q1": [1, 2, 3, 4, 5, 6]}  # top-5: m0..m4 and m5..m1
    monkeypatch.setattr(onnx_encoder, "load_probes", lambda: (list(memories), ["q0", "q1"]))
    same = onnx_encoder.probe_check(FakeEncoder(reference), FakeEncoder(reference))
    assert (same.agreement, same.min_cosine, same.passed) == (1.0, pytest.approx(1.0), True)
    swapped = {**reference, "q0": [6, 5, 4, 3, 1, 2]}  # q0's 5th memory swapped for its 6th: 4 of 5 kept
    check = onnx_encoder.probe_check(FakeEncoder(reference), FakeEncoder(swapped))
    assert check.agreement == pytest.approx(0.9) and check.min_cosine == pytest.approx(90 / 91, abs=1e-5)
    assert check.passed and "recall@5 agreement 0.900" in check.reason
    reordered = {**swapped, "q1": [1, 2, 3, 4, 6, 5]}  # q1's top-5 in another order: all 5 kept
    assert onnx_encoder.probe_check(FakeEncoder(reference), FakeEncoder(reordered)).agreement == pytest.approx(0.9)
    worse = {**swapped, "q1": [2, 1, 3, 4, 5, 6]}  # q1's 5th (m1) out, m0 in: 4 of 5 again
    worse_check = onnx_encoder.probe_check(FakeEncoder(reference), FakeEncoder(worse))
    assert worse_check.agreement == pytest.approx(0.8) and not worse_check.passed


class Scrambled:
    """An encoder whose vectors land on the wrong texts: a broken quantisation stands for it."""

    def __init__(self, inner: OnnxEncoder) -> None:
        self.inner, self.dims = inner, inner.dims

    def encode(self, texts: list[str], batch_size: int) -> NDArray[np.float32]:
        return np.roll(self.inner.encode(texts, batch_size), 1, axis=0)


@pytest.fixture
def cache_copy(embedder, tmp_path, monkeypatch) -> Path:
    """A cache dir holding the session's fp32 export (linked, not exported again) and no int8 verdict."""
    source = embedder.encoder.directory
    target = tmp_path / "onnx" / source.name
    target.mkdir(parents=True)
    for item in source.iterdir():
        if item.name not in (INT8_MODEL, INT8_VERDICT) and not item.name.startswith("."):
            (target / item.name).symlink_to(item)
    monkeypatch.setenv("AMPHOREUS_CACHE_DIR", str(tmp_path))
    return target


def test_an_int8_model_that_fails_the_probe_check_is_not_used(cache_copy, monkeypatch, caplog):
    monkeypatch.setattr(onnx_encoder, "open_int8", lambda directory: Scrambled(OnnxEncoder(directory, INT8_MODEL)))
    with caplog.at_level(logging.WARNING, logger=onnx_encoder.__name__):
        fallback = Embedder(backend="onnx")
    assert (fallback.backend, fallback.precision) == ("onnx", "fp32")
    assert "staying on fp32 ONNX, the int8 model failed its probe check: recall@5 agreement" in caplog.text
    verdict = json.loads((cache_copy / INT8_VERDICT).read_text())
    assert not verdict["passed"] and verdict["agreement"] < 0.5
    # the verdict is kept: the next embedder stays on fp32 without checking again, and says why
    caplog.clear()
    monkeypatch.setattr(onnx_encoder, "probe_check", _never)
    assert Embedder(backend="onnx").precision == "fp32"
    assert "failed its probe check" in caplog.text
    assert not [p.name for p in cache_copy.iterdir() if p.name.startswith(".")]  # no temp file left behind


def test_a_quantisation_that_fails_keeps_fp32_and_stores_no_verdict(cache_copy, monkeypatch, caplog):
    def broken(*_: object, **__: object) -> None:
        raise RuntimeError("unsupported operator")

    monkeypatch.setattr(onnx_encoder, "quantise", broken)
    with caplog.at_level(logging.WARNING, logger=onnx_encoder.__name__):
        assert Embedder(backend="onnx").precision == "fp32"
    assert "staying on fp32 ONNX, the int8 model failed (RuntimeError: unsupported operator)" in caplog.text
    assert not (cache_copy / INT8_VERDICT).exists()  # a passing failure: tried again next time


def test_repeated_texts_are_embedded_once(embedder):
    seen: list[list[str]] = []
    view = embedder.view()
    real = view.encoder

    class Counting:
        dims = real.dims

        def encode(self, texts: list[str], batch_size: int) -> NDArray[np.float32]:
            seen.append(list(texts))
            return real.encode(texts, batch_size)

    view.encoder = Counting()
    first = view.encode(["a storm", "a feast", "a storm"])
    second = view.encode(["a feast", "a duel"])
    assert seen == [["a storm", "a feast"], ["a duel"]]
    assert np.array_equal(first[0], first[2]) and np.array_equal(first[1], second[0])


def test_a_societys_memory_caches_a_rounds_texts_however_large_it_is(embedder):
    """Each society's memory embeds through a text cache of its own, sized to hold a round's texts (its queries,
    the next round's embedded ahead, its events): a fixed size would drop the head start's vectors unused."""
    from amphoreus_graph.memory.store import TEXTS_CACHED, TEXTS_PER_AGENT, MemorySpec, open_memory

    small = open_memory(MemorySpec(), "small", ["Ada", "Bo"])
    crowd = open_memory(MemorySpec(), "crowd", [f"villager {i}" for i in range(5000)])
    assert small.embedder.cache_size == TEXTS_CACHED
    assert crowd.embedder.cache_size == TEXTS_PER_AGENT * 5000
    small.embedder.encode(["a storm"])
    assert "a storm" not in crowd.embedder.cached_texts(), "societies do not share a text cache"


def test_an_export_is_made_once_and_then_loads_without_pytorch(tmp_path, monkeypatch):
    monkeypatch.setenv("AMPHOREUS_CACHE_DIR", str(tmp_path))
    first = Embedder(backend="onnx-fp32")
    assert first.backend == "onnx"
    exports = list((tmp_path / "onnx").iterdir())
    assert len(exports) == 1 and (exports[0] / "model.onnx").exists()  # no temp dir left behind

    def no_torch(*_: object) -> None:
        raise AssertionError("the cached export should not load the PyTorch model")

    monkeypatch.setattr(embedder_module, "_load_sentence_transformer", no_torch)
    again = Embedder(backend="onnx-fp32")
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
    monkeypatch.setenv("AMPHOREUS_EMBEDDER_BACKEND", "onnx-int4")
    with pytest.raises(AmphoreusError) as error:
        default_embedder()
    assert str(error.value) == "AMPHOREUS_EMBEDDER_BACKEND='onnx-int4': expected one of 'onnx', 'onnx-fp32', 'torch'"


@pytest.mark.parametrize(("setting", "precision"), [("onnx", "int8"), (" ONNX-FP32 ", "fp32")])
def test_the_backend_setting_picks_the_precision(setting, precision, embedder, monkeypatch):
    monkeypatch.setenv("AMPHOREUS_EMBEDDER_BACKEND", setting)
    chosen = default_embedder()
    assert (chosen.backend, chosen.precision) == ("onnx", precision)


def test_an_unknown_model_is_one_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("AMPHOREUS_CACHE_DIR", str(tmp_path))
    with pytest.raises(AmphoreusError, match=r"--embedder .*cannot load it offline"):
        Embedder(str(tmp_path / "no-such-model"))
