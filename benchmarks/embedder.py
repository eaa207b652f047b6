"""Embedder figures: all-MiniLM-L6-v2 on ONNX Runtime, fp32 against the int8 variant the embedder uses by default.

- speed: ms to encode a batch of 12 typical memory texts (about 54 tokens each; not the probe set's) and one short
  recall query, uncached (`encoder.encode`), fp32 and int8 timed in alternating rounds so that load from other
  processes falls on both alike; p50 and the least of the rounds.
- probe check: recall@5 agreement of int8 with fp32 over the shipped probe set (amphoreus_graph/models/probes.yaml:
  for each query, the share of fp32's top-5 memories that int8's top-5 keeps, averaged) and the least cosine
  between a probe text's int8 and fp32 vectors; the floors the embedder requires; the verdict it stored.
- batch independence: the least cosine between a text's vector alone and in the batch of 12 (int8 runs one text
  at a time for this; see OnnxEncoder.encode).
- lanes (`--lanes`): int8's batch of 12 timed twice, alternating: each text a run in a row on one thread, and as
  `encode` runs them, spread over one lane per core; how far the cores multiply what one does (a text's run
  streams the model's weights, so two runs at once can share more than the cores).
- variants (`--variants`): the quantisation recipes tried, each made afresh in a temp dir, with the same figures.
- beside memory traffic (`--beside-traffic MB`): the CPU a text costs int8 alone and beside a thread that streams
  through MB of memory, alternating: what a 10,000-agent run's native threads (Chroma's, inserting into a graph
  of a GB) do to the embedder's caches.

Figures depend on the machine's load: the JSON records it (benchmarks/bench_common.py). `--quick` is a smoke run.
The JSON goes to benchmarks/results/embedder.json.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import json  # noqa: E402

import numpy as np  # noqa: E402

from amphoreus_graph.models import onnx_encoder  # noqa: E402
from amphoreus_graph.models.embedder import Embedder  # noqa: E402
from amphoreus_graph.models.onnx_encoder import INT8_VERDICT, Encoder, Int8Recipe, OnnxEncoder  # noqa: E402
from benchmarks.bench_common import environment, median_ms, publish, results_options  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "embedder.json"
PACKAGES = ("onnxruntime", "onnx", "transformers", "sentence-transformers")

# A round's worth of memories as a society files them: events with witnesses, speech, a reflection.
TEXTS = [
    "Round 14 at the northern harbour: Ilse and Barnaby argued over who may fish the reef this month; Ilse struck "
    "first, Barnaby fell into the water, and the three witnesses on the pier all took Ilse's side afterwards.",
    'Councillor Ovid said to the assembly: "We cannot feed the refugees and rebuild the walls with one harvest; '
    'choose now, or the winter will choose for us." Nobody answered him, and the vote was put off to the next '
    "full moon.",
    "I handed the last medicine to the miller's son instead of the old captain. The captain will not forgive me, "
    "and I am no longer sure that I chose well; the boy was already recovering when the healer came back from the "
    "hills.",
    "The storm tore the roof off the grain store during the night. By morning half of the barley was soaked, and "
    "Theron ordered everyone to carry the dry sacks up to the chapel loft before the second storm came in from "
    "the sea.",
    "At the market, a merchant from the coast sold salt at twice last week's price. Mira bought none and warned "
    "the other families that he is hoarding the rest in his cellar behind the inn, waiting for the roads to close.",
    "Quintus challenged the champion of the eastern camp to a duel at dawn and lost his sword arm; his brother "
    "swore revenge in front of the whole camp before the healers carried him away to the tents by the river.",
    "Looking back on this cycle: every time I shared what I knew about the tunnels, the others trusted me more, "
    "but every time I kept a secret, someone I loved paid for it. Next cycle I will speak first and ask later.",
    "The engineers restarted the water pump after three days of work. Children lined up at the fountain with "
    "buckets, and the elders agreed to share the water by household until autumn, with the largest families "
    "served last.",
    'Sela whispered to me at the gate: "The captain of the guard takes bribes from the smugglers; I saw the '
    'purse change hands at midnight." She made me promise to tell no one yet, not even my own sister.',
    "The festival of lanterns went ahead despite the rain. The musicians played under the bridge, and for one "
    "evening the two quarters of the city danced together as if the feud had never begun, until the bells rang.",
    "A stranger in grey arrived with a sealed letter for the council and refused to give his name. The guards "
    "kept him in the tower overnight while the councillors argued about opening it; two of them walked out.",
    "Our scouts came back from the mountain pass with news that the bridge has collapsed. The caravan will be "
    "three weeks late, and the city has flour for only ten more days; the bakers have already halved every loaf.",
]
QUERY = "who broke a promise to me"
VARIANTS: dict[str, Int8Recipe] = {
    "plain (all ops, per tensor)": Int8Recipe(op_types=(), per_channel=False, reduce_range=False),
    "all ops, per channel": Int8Recipe(op_types=(), reduce_range=False),
    "all ops, per channel, reduce_range": Int8Recipe(op_types=()),
    "MatMul, per tensor": Int8Recipe(per_channel=False, reduce_range=False),
    "MatMul, per channel": Int8Recipe(reduce_range=False),
    "MatMul, per channel, reduce_range (used)": Int8Recipe(),
    "MatMul, QUInt8, per channel, reduce_range": Int8Recipe(weight_type="QUInt8"),
}


def timings(encoders: dict[str, Encoder], rounds: int, repeats: int) -> dict[str, dict[str, float]]:
    """ms per batch and per query for each encoder, the encoders alternating round by round."""
    batch: dict[str, list[float]] = {name: [] for name in encoders}
    query: dict[str, list[float]] = {name: [] for name in encoders}
    for encoder in encoders.values():  # warm-up: every shape the timed runs will see
        encoder.encode(TEXTS, 64)
        encoder.encode([QUERY], 1)
    for _ in range(rounds):
        for name, encoder in encoders.items():
            batch[name].append(median_ms(lambda e=encoder: e.encode(TEXTS, 64), repeats))
            query[name].append(median_ms(lambda e=encoder: e.encode([QUERY], 1), 4 * repeats))
    return {
        name: {
            "batch12_ms_p50": round(statistics.median(batch[name]), 2),
            "batch12_ms_min": round(min(batch[name]), 2),
            "query_ms_p50": round(statistics.median(query[name]), 3),
            "query_ms_min": round(min(query[name]), 3),
        }
        for name in encoders
    }


def beside_traffic(encoder: Encoder, rounds: int, megabytes: int) -> dict[str, float]:
    """CPU ms a text costs, one text a call on this thread, alone and beside a thread streaming through `megabytes`
    of memory (numpy lets go of the GIL while it sums), the two alternating round by round."""
    block = np.ones(megabytes * 2**20 // 8)
    stop = threading.Event()

    def stream() -> None:
        while not stop.is_set():
            block.sum()

    def cpu_ms_a_text(tag: int) -> float:
        began = time.thread_time()
        for text in TEXTS:
            encoder.encode([f"{text} {tag}"], 1)  # uncached: a tag makes each text new
        return 1000 * (time.thread_time() - began) / len(TEXTS)

    alone, beside = [], []
    for r in range(rounds):
        alone.append(cpu_ms_a_text(2 * r))
        stop.clear()
        streamer = threading.Thread(target=stream, daemon=True)
        streamer.start()
        beside.append(cpu_ms_a_text(2 * r + 1))
        stop.set()
        streamer.join()
    return {
        "megabytes": megabytes,
        "alone_cpu_ms_a_text_p50": round(statistics.median(alone), 2),
        "beside_cpu_ms_a_text_p50": round(statistics.median(beside), 2),
    }


def lanes(encoder: OnnxEncoder, rounds: int) -> dict[str, float]:
    """ms for the batch of 12 on one thread (a run a text, in a row) and over the lanes, alternating round by round
    (uncached: the encoder has no cache)."""
    in_a_row, spread = [], []
    for _ in range(rounds):
        in_a_row.append(median_ms(lambda: [encoder.encode([text], 1) for text in TEXTS], 3))
        spread.append(median_ms(lambda: encoder.encode(TEXTS, 64), 3))
    row, lanes_p50 = statistics.median(in_a_row), statistics.median(spread)
    return {
        "cores": os.cpu_count() or 1,
        "in_a_row_ms_p50": round(row, 2),
        "lanes_ms_p50": round(lanes_p50, 2),
        "speedup": round(row / lanes_p50, 2),
    }


def batch_independence(encoder: Encoder) -> float:
    """The least cosine between a text's vector encoded alone and within the batch of 12."""
    together = encoder.encode(TEXTS, 64)
    alone = np.vstack([encoder.encode([text], 1) for text in TEXTS])
    return round(float(np.min(np.sum(together * alone, axis=1))), 6)


def variant(fp32: OnnxEncoder, recipe: Int8Recipe, work: Path) -> OnnxEncoder:
    """`recipe`'s int8 model made in `work`, beside links to the export's tokenizer and meta."""
    work.mkdir()
    for item in fp32.directory.iterdir():
        if item.suffix != ".onnx" and item.name != INT8_VERDICT:
            (work / item.name).symlink_to(item)
    onnx_encoder.quantise(fp32.directory / "model.onnx", work / onnx_encoder.INT8_MODEL, recipe)
    return OnnxEncoder(work, onnx_encoder.INT8_MODEL)


def variants(fp32: OnnxEncoder, args: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="embedder-variants-") as tmp:
        for i, (name, recipe) in enumerate(VARIANTS.items()):
            candidate = variant(fp32, replace(recipe), Path(tmp) / str(i))
            check = onnx_encoder.probe_check(fp32, candidate)
            speed = timings({"fp32": fp32, "int8": candidate}, max(2, args.rounds // 3), args.repeats)
            out[name] = {
                "recipe": asdict(recipe),
                "agreement": check.agreement,
                "min_cosine": check.min_cosine,
                "passes": check.passed,
                "size_mb": round((Path(tmp) / str(i) / onnx_encoder.INT8_MODEL).stat().st_size / 1e6, 1),
                **speed["int8"],
                "fp32_batch12_ms_p50": speed["fp32"]["batch12_ms_p50"],
            }
    return out


def benchmark(args: argparse.Namespace) -> dict[str, Any]:
    load_before = os.getloadavg()
    fp32 = Embedder(backend="onnx-fp32").encoder
    assert isinstance(fp32, OnnxEncoder), "the model did not export to ONNX"
    int8 = onnx_encoder.int8_or_fp32(fp32)  # made and checked here on first use
    verdict = json.loads((fp32.directory / INT8_VERDICT).read_text())
    check = onnx_encoder.probe_check(fp32, int8)
    speed = timings({"fp32": fp32, "int8": int8}, args.rounds, args.repeats)
    tokens = [len(ids) for ids in fp32.tokenizer(TEXTS)["input_ids"]]
    report: dict[str, Any] = {
        "quick": args.quick,
        "texts": len(TEXTS),
        "mean_tokens": round(statistics.mean(tokens), 1),
        "int8_in_use": isinstance(int8, OnnxEncoder) and int8.precision == "int8",
        "speed": speed,
        "speedup_batch12_p50": round(speed["fp32"]["batch12_ms_p50"] / speed["int8"]["batch12_ms_p50"], 2),
        "speedup_query_p50": round(speed["fp32"]["query_ms_p50"] / speed["int8"]["query_ms_p50"], 2),
        "probe_check": {
            "agreement_recall_at_5": check.agreement,
            "min_cosine": check.min_cosine,
            "agreement_floor": onnx_encoder.AGREEMENT_FLOOR,
            "cosine_floor": onnx_encoder.COSINE_FLOOR,
            "passed": check.passed,
            "stored_verdict": {k: verdict[k] for k in ("agreement", "min_cosine", "passed", "recipe")},
        },
        "batch_independence_min_cosine": {"fp32": batch_independence(fp32), "int8": batch_independence(int8)},
    }
    if args.variants:
        report["variants"] = variants(fp32, args)
    if args.lanes and isinstance(int8, OnnxEncoder):
        report["lanes"] = lanes(int8, args.rounds)
    if args.beside_traffic:
        report["beside_traffic"] = beside_traffic(int8, args.rounds, args.beside_traffic)
    report["environment"] = environment(PACKAGES, load_before)
    return report


def table(report: dict[str, Any]) -> str:
    speed, check = report["speed"], report["probe_check"]
    lines = [
        f"embedder: all-MiniLM-L6-v2 on ONNX Runtime ({report['texts']} texts of ~{report['mean_tokens']} tokens)",
        f"  {'':6} {'batch of 12 ms p50 (min)':>26} {'one query ms p50 (min)':>24}",
    ]
    for name in ("fp32", "int8"):
        row = speed[name]
        lines.append(
            f"  {name:6} {row['batch12_ms_p50']:>17.1f} ({row['batch12_ms_min']:6.1f})"
            f" {row['query_ms_p50']:>15.2f} ({row['query_ms_min']:6.2f})"
        )
    lines.append(f"  speed-up p50: batch {report['speedup_batch12_p50']}×, query {report['speedup_query_p50']}×")
    lines.append(
        f"  probe check: recall@5 agreement {check['agreement_recall_at_5']:.3f} (floor {check['agreement_floor']}),"
        f" min cosine {check['min_cosine']:.4f} (floor {check['cosine_floor']}): "
        f"{'passed, int8 in use' if report['int8_in_use'] else 'failed, fp32 in use'}"
    )
    alone = report["batch_independence_min_cosine"]
    lines.append(f"  a text alone vs in the batch, least cosine: fp32 {alone['fp32']}, int8 {alone['int8']}")
    for name, row in report.get("variants", {}).items():
        lines.append(
            f"  variant {name:<44} agreement {row['agreement']:.3f}  min cos {row['min_cosine']:.4f}  "
            f"batch {row['batch12_ms_p50']:6.1f} ms (fp32 {row['fp32_batch12_ms_p50']:6.1f})  "
            f"query {row['query_ms_p50']:5.2f} ms  {row['size_mb']:5.1f} MB"
        )
    if spread := report.get("lanes"):
        lines.append(
            f"  int8, batch of 12: a run a text in a row {spread['in_a_row_ms_p50']} ms, over {spread['cores']} "
            f"lanes {spread['lanes_ms_p50']} ms ({spread['speedup']}×)"
        )
    if traffic := report.get("beside_traffic"):
        lines.append(
            f"  int8, CPU a text: alone {traffic['alone_cpu_ms_a_text_p50']} ms, beside a thread streaming "
            f"{traffic['megabytes']} MB {traffic['beside_cpu_ms_a_text_p50']} ms"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=12, help="alternating timing rounds")
    parser.add_argument("--repeats", type=int, default=5, help="runs per round (the query: 4× as many)")
    parser.add_argument("--variants", action="store_true", help="also measure the quantisation recipes tried")
    parser.add_argument("--lanes", action="store_true", help="also: int8 on one thread against the lanes")
    parser.add_argument("--beside-traffic", type=int, metavar="MB", default=0, help="also: int8 beside memory traffic")
    parser.add_argument("--quick", action="store_true", help="a smoke run (seconds): fewer rounds and repeats")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    results_options(parser, RESULTS)
    args = parser.parse_args(argv)
    if args.quick:
        args.rounds, args.repeats = 2, 2
    report = benchmark(args)
    publish(report, table(report), path=args.results, save=not args.no_save, as_json=args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
