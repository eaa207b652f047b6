"""The embedding model run by ONNX Runtime: the same weights, exported once from sentence-transformers.

Why: on this project's 2-core CPU, ONNX Runtime encodes a round's batch and one short recall query each about
twice as fast as PyTorch eager (fused kernels, no per-op Python dispatch), and a cached export starts without
importing torch. The export is checked before it is kept: the tokenizer must give the model's own features and
the vectors must match PyTorch's on probe texts, else the embedder stays on PyTorch.

Beside the fp32 export lives an int8 variant (dynamic quantisation of the MatMul weights): about twice as fast
again, at the cost of small changes in the vectors. It is used only if it keeps the fp32 model's recall on a
probe set of memories and queries shipped with the package (probes.yaml); the verdict is stored beside the export,
so the check runs once per model, ONNX Runtime version and recipe.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import tempfile
import warnings
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, suppress
from dataclasses import asdict, dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

import numpy as np
from numpy.typing import NDArray

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

log = logging.getLogger(__name__)

Precision = Literal["fp32", "int8"]
INT8_MODEL = "model-int8.onnx"
INT8_VERDICT = "int8.json"
# The int8 model is used only if, on the probe set, each query keeps on average at least 90% of fp32's top-5 (4.5 of
# 5) and no text's vector turns by more than cos 0.97. The chosen recipe measures 0.933 and 0.987 here, and every
# memory it swaps into a top-5 sits within 0.026 cosine of fp32's 5th: near-ties (the median gap between fp32's
# 5th and 6th is 0.012). Plain `quantize_dynamic` measures 0.81 and 0.94 and is refused.
AGREEMENT_FLOOR = 0.90
COSINE_FLOOR = 0.97
TOP_K = 5
INT8_FORMAT = 1  # bump when how the int8 model is made or run changes: stored verdicts are then made again

FORMAT = 1  # bump when the export's layout changes: old exports are then ignored
TOLERANCE = 1e-4  # largest allowed |onnx - torch| per vector component on the probes
_PROBES = [
    "At the harbour, Selka won the silver cup from the old captain Brann.",
    '  Doran said: "I will hold the line here. This is the way of strife and the council."  ',
    "x",
    "",
    "Ünïcödé — the Grove of Dodona 🌿, and a very long memory " + "that keeps on going " * 80,
]


def cache_root() -> Path:
    """Where exports live: $AMPHOREUS_CACHE_DIR, else $XDG_CACHE_HOME (or ~/.cache)/amphoreus-graph."""
    if root := os.environ.get("AMPHOREUS_CACHE_DIR"):
        return Path(root)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "amphoreus-graph"


def export_dir(location: str) -> Path:
    """One directory per model location and its files' sizes and times, so a changed model is exported again."""
    source = Path(location)
    stamp = [location, FORMAT]
    if source.is_dir():
        stamp += sorted((str(p.relative_to(source)), p.stat().st_size, p.stat().st_mtime_ns) for p in source.rglob("*"))
    digest = hashlib.sha256(json.dumps(stamp, default=str).encode()).hexdigest()[:16]
    return cache_root() / "onnx" / f"{source.name or 'model'}-{digest}"


class Encoder(Protocol):
    """Texts to unit vectors, uncached: the model behind an Embedder."""

    dims: int

    def encode(self, texts: list[str], batch_size: int) -> NDArray[np.float32]: ...


class OnnxEncoder:
    """Tokenizer + ONNX Runtime session for an exported model (`weights`: the fp32 or the int8 file); `encode`
    returns unit vectors."""

    def __init__(self, directory: Path, weights: str = "model.onnx") -> None:
        import onnxruntime as ort
        from transformers import AutoTokenizer

        meta = json.loads((directory / "meta.json").read_text())
        self.directory = directory
        self.precision: Precision = "int8" if weights == INT8_MODEL else "fp32"
        self.dims = int(meta["dims"])
        self.max_length = int(meta["max_length"])
        self.inputs: list[str] = list(meta["inputs"])
        self.tokenizer = AutoTokenizer.from_pretrained(str(directory))
        options = ort.SessionOptions()
        # Worker threads spin between the graph's many small ops (~1 ms less per query on 2 cores) but stop when a
        # run ends: the store and the society need the cores between batches.
        options.add_session_config_entry("session.intra_op.allow_spinning", "1")
        options.add_session_config_entry("session.force_spinning_stop", "1")
        options.log_severity_level = 3
        if self.precision == "int8":
            # Texts run one at a time (see `encode`): a run is too small to split across cores, so each run takes
            # one and the texts are spread over the cores instead (about 0.8x the time of 24 texts in a row).
            options.intra_op_num_threads = 1
        self.session = ort.InferenceSession(str(directory / weights), options, providers=["CPUExecutionProvider"])
        self._pool: tuple[int, ThreadPoolExecutor] | None = None  # (pid, pool): a forked child makes its own

    def features(self, texts: list[str]) -> dict[str, NDArray[np.int64]]:
        encoded = self.tokenizer(
            texts, padding=True, truncation="longest_first", max_length=self.max_length, return_tensors="np"
        )
        return {name: np.asarray(encoded[name], dtype=np.int64) for name in self.inputs}

    def _lanes(self) -> ThreadPoolExecutor:
        """One worker per core, for this process (a pool's threads do not survive a fork)."""
        if self._pool is None or self._pool[0] != os.getpid():
            self._pool = (os.getpid(), ThreadPoolExecutor(os.cpu_count() or 1, thread_name_prefix="embedder"))
        return self._pool[1]

    def encode(self, texts: list[str], batch_size: int) -> NDArray[np.float32]:
        """Longest texts first, in batches (little padding per batch), then back in the caller's order.

        The int8 model quantises its activations with one scale per run, so a text's vector would depend on its
        batch-mates (cosine down to 0.989 between a text alone and in a batch of 12): it runs one text at a time,
        so that a text has one vector whatever it is embedded with (a resumed run finds the same neighbours). On 2
        cores that costs 0-20% of int8's time for a batch of 12 (no padding is computed, which pays for some)."""
        step = 1 if self.precision == "int8" else batch_size
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        out = np.zeros((len(texts), self.dims), dtype=np.float32)
        chunks = [order[start : start + step] for start in range(0, len(order), step)]

        def run(chunk: list[int]) -> NDArray[np.float32]:
            (vectors,) = self.session.run(None, self.features([texts[i] for i in chunk]))
            return np.asarray(vectors, dtype=np.float32)

        runs = self._lanes().map(run, chunks) if self.precision == "int8" and len(chunks) > 1 else map(run, chunks)
        for chunk, vectors in zip(chunks, runs, strict=True):
            out[chunk] = vectors
        norms = np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)
        return (out / norms).astype(np.float32)


def load_or_export(location: str, load_torch_model: Callable[[], SentenceTransformer]) -> OnnxEncoder | None:
    """The cached export for `location`, exporting it first if needed; None (stay on PyTorch) if it cannot be."""
    target = export_dir(location)
    if not (target / "meta.json").exists():
        model = load_torch_model()  # a model that cannot load at all is the caller's one-line error
        try:
            _export(model, target)
        except Exception as exc:  # an architecture the exporter or the check rejects: PyTorch still works
            log.warning(
                "embedder %s: staying on PyTorch, the ONNX export failed (%s: %s)", location, type(exc).__name__, exc
            )
            return None
    return OnnxEncoder(target)


def _export(model: SentenceTransformer, target: Path) -> None:
    """Export to a temp dir beside `target`, check it against PyTorch, then move it into place atomically."""
    import torch

    target.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    try:
        sample = model.preprocess(_PROBES[:2])
        inputs = [k for k, v in sample.items() if isinstance(v, torch.Tensor)]
        modality = sample.get("modality", "text")

        class SentenceEmbedding(torch.nn.Module):
            """The whole pipeline (transformer, pooling, any dense/normalise): token tensors in, vectors out."""

            def __init__(self) -> None:
                super().__init__()
                self.model = model

            def forward(self, *tensors: torch.Tensor) -> torch.Tensor:
                features: dict[str, Any] = {**dict(zip(inputs, tensors, strict=True)), "modality": modality}
                return self.model(features)["sentence_embedding"]

        wrapper = SentenceEmbedding().eval()
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # tracer notes on Python-side branches, which the probe check covers
            torch.onnx.export(
                wrapper,
                tuple(sample[k] for k in inputs),
                str(work / "model.onnx"),
                input_names=inputs,
                output_names=["sentence_embedding"],
                dynamic_axes={**{k: {0: "batch", 1: "tokens"} for k in inputs}, "sentence_embedding": {0: "batch"}},
                opset_version=17,
                dynamo=False,
            )
        model.tokenizer.save_pretrained(str(work))
        dims = int(model.get_embedding_dimension() or 0)
        meta = {"format": FORMAT, "dims": dims, "max_length": int(model.max_seq_length or 512), "inputs": inputs}
        (work / "meta.json").write_text(json.dumps(meta))
        _check(model, OnnxEncoder(work))
        try:
            work.rename(target)
        except OSError:  # another process exported it first: theirs is as good
            shutil.rmtree(work, ignore_errors=True)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise


def _check(model: SentenceTransformer, encoder: OnnxEncoder) -> None:
    """Same features from the tokenizer, same vectors from the session, as sentence-transformers gives."""
    reference = model.preprocess(_PROBES)
    ours = encoder.features(_PROBES)
    for name in encoder.inputs:
        if not np.array_equal(ours[name], reference[name].numpy()):
            raise ValueError(f"the tokenizer's {name} differ from sentence-transformers' on the probe texts")
    expected = model.encode(_PROBES, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)
    worst = float(np.abs(encoder.encode(_PROBES, batch_size=2) - expected).max())
    if worst > TOLERANCE:
        raise ValueError(f"vectors differ from PyTorch's by up to {worst:.2g} on the probe texts")


# ------------------------------------------------------------------------------------------------------ int8


@dataclass(frozen=True)
class Int8Recipe:
    """Options for `quantize_dynamic`. The default was picked on the probe set (benchmarks/embedder.py --variants):
    MatMul weights only (quantising the embedding tables too gives a 23 MB file instead of 59 MB but agreement
    0.89-0.93 instead of 0.93, and no speed that shows through the noise), one scale per output channel (one per
    tensor: 0.82), and 7-bit weights (`reduce_range`: no saturation in the u8×s8 kernels of CPUs without VNNI)."""

    weight_type: Literal["QInt8", "QUInt8"] = "QInt8"
    op_types: tuple[str, ...] = ("MatMul",)  # empty: every op the quantiser knows (Gather, Attention, …)
    per_channel: bool = True
    reduce_range: bool = True
    exclude_nodes: tuple[str, ...] = ()


RECIPE = Int8Recipe()


@dataclass(frozen=True)
class ProbeCheck:
    """How far the int8 vectors are from fp32's on the probe set, and whether that is close enough."""

    agreement: float  # mean over the queries of |int8 top-k ∩ fp32 top-k| / k, over the probe memories
    min_cosine: float  # the least cosine between a probe text's int8 and fp32 vectors
    passed: bool
    reason: str


def load_probes() -> tuple[list[str], list[str]]:
    """The shipped probe set: (memories, queries)."""
    import yaml

    data = yaml.safe_load(resources.files("amphoreus_graph.models").joinpath("probes.yaml").read_text("utf-8"))
    return [str(t) for t in data["memories"]], [str(t) for t in data["queries"]]


def top_k(queries: NDArray[np.float32], memories: NDArray[np.float32], k: int = TOP_K) -> NDArray[np.int64]:
    """Each query's k nearest memories by cosine (the vectors are unit length), best first."""
    return np.argsort(-(queries @ memories.T), axis=1, kind="stable")[:, :k]


def probe_check(reference: Encoder, candidate: Encoder, batch_size: int = 64) -> ProbeCheck:
    """Recall@k agreement and least cosine of `candidate` against `reference` on the shipped probe set."""
    memories, queries = load_probes()
    ref_m, ref_q = reference.encode(memories, batch_size), reference.encode(queries, batch_size)
    new_m, new_q = candidate.encode(memories, batch_size), candidate.encode(queries, batch_size)
    expected, got = top_k(ref_q, ref_m), top_k(new_q, new_m)
    agreement = float(np.mean([len(set(a) & set(b)) / TOP_K for a, b in zip(expected, got, strict=True)]))
    min_cosine = float(np.min(np.sum(np.vstack([ref_m, ref_q]) * np.vstack([new_m, new_q]), axis=1)))
    passed = agreement >= AGREEMENT_FLOOR and min_cosine >= COSINE_FLOOR
    reason = (
        f"recall@{TOP_K} agreement {agreement:.3f} (floor {AGREEMENT_FLOOR}), "
        f"min cosine {min_cosine:.4f} (floor {COSINE_FLOOR}) on {len(queries)} probe queries"
    )
    return ProbeCheck(round(agreement, 4), round(min_cosine, 5), passed, reason)


def quantise(source: Path, target: Path, recipe: Int8Recipe = RECIPE) -> None:
    """Write the int8 variant of the fp32 model `source` to `target` (atomically: beside it, then renamed)."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    with _replacing(target) as work, _quiet_quantiser():
        quantize_dynamic(
            onnx.load(str(source)),  # not the path: the quantiser would write its own temp file beside it
            str(work),
            weight_type=QuantType[recipe.weight_type],
            op_types_to_quantize=list(recipe.op_types),
            per_channel=recipe.per_channel,
            reduce_range=recipe.reduce_range,
            nodes_to_exclude=list(recipe.exclude_nodes),
        )


def open_int8(directory: Path) -> Encoder:
    """The int8 variant's encoder (a seam: tests put a broken encoder here)."""
    return OnnxEncoder(directory, INT8_MODEL)


def int8_or_fp32(fp32: OnnxEncoder) -> Encoder:
    """The int8 variant of an export if it passes the probe check (made and checked on first use), else `fp32`."""
    try:
        verdict = _int8_verdict(fp32)
        if verdict["passed"]:
            return open_int8(fp32.directory)
    except Exception as exc:  # a graph the quantiser rejects, a full disk, a damaged file: fp32 still works
        log.warning("embedder: staying on fp32 ONNX, the int8 model failed (%s: %s)", type(exc).__name__, exc)
        return fp32
    log.warning("embedder: staying on fp32 ONNX, the int8 model failed its probe check: %s", verdict["reason"])
    return fp32


def _int8_verdict(fp32: OnnxEncoder) -> dict[str, Any]:
    """The stored verdict if it was made under the same conditions, else quantise, check and store a new one."""
    path = fp32.directory / INT8_VERDICT
    stamp = _int8_stamp()
    with suppress(OSError, ValueError):
        stored = json.loads(path.read_text())
        if stored.get("stamp") == stamp and (fp32.directory / INT8_MODEL).exists():
            return dict(stored)
    quantise(fp32.directory / "model.onnx", fp32.directory / INT8_MODEL)
    check = probe_check(fp32, open_int8(fp32.directory))
    log.info("embedder: int8 probe check %s: %s", "passed" if check.passed else "failed", check.reason)
    verdict = {"stamp": stamp, "recipe": asdict(RECIPE), **asdict(check)}
    with _replacing(path) as work:
        work.write_text(json.dumps(verdict, indent=2))
    return verdict


def _int8_stamp() -> str:
    """What a verdict depends on: the recipe, the floors, the probe set and ONNX Runtime's kernels."""
    import onnxruntime

    probes = resources.files("amphoreus_graph.models").joinpath("probes.yaml").read_bytes()
    parts = [INT8_FORMAT, asdict(RECIPE), AGREEMENT_FLOOR, COSINE_FLOOR, TOP_K, onnxruntime.__version__]
    return hashlib.sha256(json.dumps(parts).encode() + probes).hexdigest()[:16]


@contextmanager
def _replacing(target: Path) -> Iterator[Path]:
    """A unique temp path beside `target`, renamed over it once written: concurrent writers never mix files."""
    handle, name = tempfile.mkstemp(prefix=f".{target.name}-", dir=target.parent)
    os.close(handle)
    work = Path(name)
    try:
        yield work
        os.replace(work, target)
    finally:
        work.unlink(missing_ok=True)


@contextmanager
def _quiet_quantiser() -> Iterator[None]:
    """`quantize_dynamic` logs on the root logger, which installs a stderr handler on a bare root: a note per
    tensor, and a warning that the graph was not pre-processed (measured on the probes, `quant_pre_process`
    changes neither the vectors nor the speed here). Both kept out of the caller's logging."""
    root = logging.getLogger()
    guard = logging.NullHandler()

    def drop(record: logging.LogRecord) -> bool:
        return "onnxruntime" not in record.pathname

    root.addHandler(guard)
    root.addFilter(drop)
    try:
        yield
    finally:
        root.removeFilter(drop)
        root.removeHandler(guard)
