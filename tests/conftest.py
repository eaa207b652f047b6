"""Shared fixtures: offline environment, tiny runs, and a CLI runner."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

REPO = Path(__file__).resolve().parents[1]


def digests(folder: Path) -> dict[str, str]:
    """Every file under `folder`, by its path there, with the SHA-256 of its bytes: what "nothing changed" compares."""
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.fixture(scope="session")
def embedder():
    """The real all-MiniLM-L6-v2 embedder, loaded once for the whole session."""
    from amphoreus_graph.models.embedder import default_embedder

    return default_embedder()


@pytest.fixture
def cli():
    """Invoke `amphoreus …` in-process; returns (exit code, stdout, stderr)."""
    from typer.testing import CliRunner

    from amphoreus_graph.cli import app

    runner = CliRunner()

    def invoke(*args: str) -> tuple[int, str, str]:
        result = runner.invoke(app, list(args))
        return result.exit_code, result.stdout, result.stderr

    return invoke


@pytest.fixture(scope="session")
def chroma_url(tmp_path_factory):
    """A real Chroma server (`chroma run` on 127.0.0.1), shared by the session."""
    from tests.chroma_server import chroma_server

    with chroma_server(tmp_path_factory.mktemp("chroma-server")) as url:
        yield url


@pytest.fixture(params=["embedded", "server"])
def chroma_client(request, tmp_path):
    """Each memory test runs on an embedded PersistentClient and on a real Chroma server."""
    from amphoreus_graph.memory.chroma_index import open_chroma

    if request.param == "server":
        client, lock = open_chroma(url=request.getfixturevalue("chroma_url"))
    else:
        client, lock = open_chroma(tmp_path / "chroma")
    yield client
    if lock is not None:
        lock.release()


@pytest.fixture
def openai_server(monkeypatch):
    """A fresh OpenAI-compatible server on 127.0.0.1 for one test (tests/openai_server.py: schedules, switches,
    the request log), stopped after it; starting one takes about a millisecond, so no state leaks between tests.
    Loopback is kept off any proxy the environment names, so nothing leaves the machine."""
    from tests.openai_server import OpenAIServer

    loopback = "127.0.0.1,localhost"
    for name in ("NO_PROXY", "no_proxy"):
        monkeypatch.setenv(name, ",".join(filter(None, [os.environ.get(name), loopback])))
    with OpenAIServer(retry_after_s=0.1) as server:
        yield server
