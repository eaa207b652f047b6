"""A real `chroma run` server on 127.0.0.1 for the tests that check the HttpClient deployment."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def chroma_server(data_dir: Path) -> Iterator[str]:
    """Start `chroma run` on a free loopback port; yield its URL; stop it (and its children) afterwards."""
    with chroma_process(data_dir, free_port()) as (url, _):
        yield url


@contextmanager
def chroma_process(data_dir: Path, port: int) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """`chroma run` over `data_dir/db` on `port` (a server started again where one was killed keeps its URL);
    yield its URL and process (the leader of its own process group); stop it, if still running, afterwards."""
    chroma = Path(sys.executable).with_name("chroma")
    log = open(data_dir / "chroma.log", "ab")  # noqa: SIM115 - closed below
    process = subprocess.Popen(
        [str(chroma), "run", "--path", str(data_dir / "db"), "--host", "127.0.0.1", "--port", str(port)],
        stdout=log,
        stderr=subprocess.STDOUT,
        env={**os.environ, "ANONYMIZED_TELEMETRY": "False"},
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"{url}/api/v2/heartbeat", timeout=1).read()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError((data_dir / "chroma.log").read_text(errors="replace")[-2000:]) from None
                time.sleep(0.2)
        yield url, process
    finally:
        with contextlib.suppress(ProcessLookupError):  # a test may have killed it already
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
        log.close()
