"""Where a long run's CPU goes, at little cost to it: a thread that samples every Python thread's stack.

A deterministic profiler (cProfile) slows a run of many small calls by a large factor and sees the main thread
alone; sampling every few milliseconds sees the worker threads too (the memory's writes and head starts run
there). Each sample of a thread is weighted by the CPU that thread used since the last one (Linux's per-thread
counters, in 10 ms ticks: exact over many samples), so a thread waiting (on a queue, a lock, the event loop's
select) counts for nothing whatever its stack shows. The tables are shares of that CPU, not call counts.
The same thread watches the process's resident memory and a folder's size, so a run that would outgrow the machine
is stopped (by a signal to the main thread) while it still can report what it did.
"""

from __future__ import annotations

import gc
import os
import resource
import signal
import sys
import threading
import time
from collections import Counter
from contextlib import suppress
from pathlib import Path
from types import FrameType
from typing import Any

# Frames that only carry others (thread and event-loop plumbing, the benchmark itself) are left out of the tables.
PLUMBING = ("threading.py:", "concurrent/futures/", "asyncio/", "contextvars", "benchmarks/", "scale.py:")
PAGE = os.sysconf("SC_PAGE_SIZE")
TICK = 1 / os.sysconf("SC_CLK_TCK")


def thread_cpu(native_id: int | None) -> float | None:
    """Seconds of CPU a thread has used (None: not known here)."""
    try:
        stat = Path(f"/proc/self/task/{native_id}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()  # after the thread's name, which may hold spaces
    return (int(fields[11]) + int(fields[12])) * TICK  # utime, stime


def threads_cpu() -> Counter[str]:
    """CPU seconds of each live thread of the process, summed by the thread's OS name. Native threads are what the
    stack samples cannot see: Chroma's Rust runtime (`tokio-rt-worker`), its SQLite workers (`sqlx-sqlite-wor`), ONNX
    Runtime's pool; Python's own threads carry the process's name, e.g. `python` (Linux; empty elsewhere)."""
    out: Counter[str] = Counter()
    for name, cpu in thread_stats().values():
        out[name] += cpu
    return out


def current_frames() -> dict[int, FrameType]:
    """`sys._current_frames()` with the cyclic collector paused (only if it was running). On CPython 3.11 before
    3.11.9 a collection that starts inside it waits for the thread-list lock the call holds, with the GIL held, and
    the whole process hangs (python/cpython#106883; a `make test` worker hung so here); 3.11.9 pauses it itself."""
    paused = gc.isenabled()
    gc.disable()
    try:
        return sys._current_frames()
    finally:
        if paused:
            gc.enable()


def thread_stats() -> dict[int, tuple[str, float]]:
    """Each live thread of the process by native id: its OS name and the CPU seconds it has used (Linux; empty
    elsewhere)."""
    out: dict[int, tuple[str, float]] = {}
    with suppress(OSError):
        for task in Path("/proc/self/task").iterdir():
            with suppress(OSError, IndexError, ValueError):
                stat = (task / "stat").read_text()
                fields = stat.rsplit(")", 1)[1].split()  # after the thread's name, which may hold spaces
                name = stat[stat.index("(") + 1 : stat.rindex(")")]
                out[int(task.name)] = (name, (int(fields[11]) + int(fields[12])) * TICK)
    return out


def rss_bytes() -> int:
    """The process's resident memory now (Linux: /proc; elsewhere the peak so far)."""
    try:
        return int(Path("/proc/self/statm").read_text().split()[1]) * PAGE
    except OSError:
        return peak_rss_bytes()


def peak_rss_bytes() -> int:
    """The process's peak resident memory (ru_maxrss is KiB on Linux)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def folder_bytes(folder: Path) -> int:
    """Bytes of the files under `folder` (0 if it is not there yet)."""
    total = 0
    for dirpath, _, files in os.walk(folder):
        for name in files:
            with suppress(OSError):  # written and removed between the listing and the stat
                total += os.stat(os.path.join(dirpath, name)).st_size
    return total


def where(frame: FrameType) -> str:
    """A frame's function as `file:qualified name`, the file from its package down."""
    path = frame.f_code.co_filename
    for marker in ("site-packages/", "/lib/"):
        if marker in path:
            path = path.split(marker, 1)[1].split("/", 1)[-1] if marker == "/lib/" else path.split(marker, 1)[1]
            break
    else:
        path = os.path.relpath(path) if path.startswith(os.getcwd()) else os.path.basename(path)
    return f"{path}:{frame.f_code.co_qualname}"


class Profile:
    """CPU seen by the samples from a start: by function (on the stack, on top), all Python threads' and the main
    thread's, and every OS thread's since then."""

    def __init__(self) -> None:
        self.cumulative: Counter[str] = Counter()  # CPU seconds with the function on the stack
        self.own: Counter[str] = Counter()  # CPU seconds with the function on top
        self.cpu_s = self.main_cpu_s = 0.0  # all Python threads' CPU seen, and the main thread's (the event loop)
        self.begun = time.perf_counter()
        self.threads_at_start = threads_cpu()

    def add(self, frame: FrameType, weight: float, *, main: bool) -> None:
        self.cpu_s += weight
        self.main_cpu_s += weight if main else 0.0
        self.own[where(frame)] += weight
        seen: set[str] = set()
        walk: FrameType | None = frame
        while walk is not None:
            seen.add(where(walk))
            walk = walk.f_back
        for key in seen:
            self.cumulative[key] += weight

    def summary(self, sampler_cpu_s: float, top: int = 12, wrapper_share: float = 0.9) -> dict[str, Any]:
        """The top functions by cumulative and by own share of the CPU seen. Functions under more than
        `wrapper_share` of it (the graph's runner) and plumbing say nothing and are left out."""
        total = self.cpu_s or 1.0
        cumulative = [
            (f, n / total)
            for f, n in self.cumulative.most_common()
            if n / total <= wrapper_share and not any(p in f for p in PLUMBING)
        ]
        own = [(f, n / total) for f, n in self.own.most_common(top)]
        wall = time.perf_counter() - self.begun
        by_name = threads_cpu()
        by_name.subtract(self.threads_at_start)
        return {
            "python_threads_cpu_s": round(self.cpu_s, 2),
            "main_thread_busy": round(self.main_cpu_s / wall, 3) if wall else None,  # the event loop's CPU ÷ wall
            # every thread's CPU by OS name, native ones included (threads that ended are not counted)
            "cpu_s_by_thread_name": {name: round(cpu, 2) for name, cpu in by_name.most_common(6) if cpu > 0},
            "sampler_cpu_s": round(sampler_cpu_s, 2),  # what sampling cost, since the sampler started
            "cumulative": [[f, round(100 * s, 1)] for f, s in cumulative[:top]],
            "own": [[f, round(100 * s, 1)] for f, s in own],
        }


class Sampler(threading.Thread):
    """Samples all threads' stacks every `interval` seconds into two profiles, the whole run's (`restart` begins it
    again) and the round's (`since_round` hands it over and begins the next); stops the run with SIGALRM past
    `max_rss` bytes of memory or `max_disk` bytes under `folder` (checked every ~second), leaving the reason in
    `over`."""

    def __init__(self, interval: float, folder: Path, max_rss: int, max_disk: int) -> None:
        super().__init__(name="scale-sampler", daemon=True)
        self.interval, self.folder, self.max_rss, self.max_disk = interval, folder, max_rss, max_disk
        self.whole, self.round = Profile(), Profile()
        self.over: str | None = None
        self.lock = threading.Lock()
        self.halt = threading.Event()

    def run(self) -> None:
        me, checked = threading.get_ident(), time.monotonic()
        used: dict[int, float] = {}  # each thread's CPU at the last sample
        while not self.halt.wait(self.interval):
            with self.lock:
                self.sample(me, used)
            if time.monotonic() - checked >= 1.0:
                checked = time.monotonic()
                self.check_limits()

    def sample(self, me: int, used: dict[int, float]) -> None:
        native = {t.ident: t.native_id for t in threading.enumerate()}
        main = threading.main_thread().ident
        for ident, frame in current_frames().items():
            if ident == me:
                continue
            cpu = thread_cpu(native.get(ident))
            weight = self.interval if cpu is None else cpu - used.get(ident, cpu)
            if cpu is not None:
                used[ident] = cpu
            if weight <= 0:
                continue
            for profile in (self.whole, self.round):
                profile.add(frame, weight, main=ident == main)

    def restart(self) -> dict[str, Any]:
        """The run's summary so far, and count afresh from here (a run's setup apart from its rounds)."""
        with self.lock:
            summary, self.whole, self.round = self._summary(self.whole), Profile(), Profile()
        return summary

    def since_round(self) -> dict[str, Any]:
        """The summary since the last call (or `restart`), and count the next round's afresh."""
        with self.lock:
            summary, self.round = self._summary(self.round), Profile()
        return summary

    def check_limits(self) -> None:
        if self.over is not None:
            return
        if (rss := rss_bytes()) > self.max_rss:
            self.over = f"memory cap ({rss / 2**30:.1f} GiB resident > {self.max_rss / 2**30:.1f})"
        elif (disk := folder_bytes(self.folder)) > self.max_disk:
            self.over = f"disk cap ({disk / 2**30:.1f} GiB written > {self.max_disk / 2**30:.1f})"
        if self.over is not None:
            os.kill(os.getpid(), signal.SIGALRM)

    def summary(self) -> dict[str, Any]:
        """The run's profile since the start or the last `restart`."""
        with self.lock:
            return self._summary(self.whole)

    def _summary(self, profile: Profile) -> dict[str, Any]:
        return profile.summary(thread_cpu(self.native_id) or 0.0) | {"interval_ms": round(1000 * self.interval, 1)}
