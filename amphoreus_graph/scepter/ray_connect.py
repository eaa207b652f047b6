"""Joining a Ray cluster at `--address` in bounded time, or one error line saying why not.

Ray itself waits a long time on an address nobody answers: `ray.init("HEAD:6379")` retries the head for minutes
and `ray://HEAD:10001` gives up after 30 s. So the address's host and port are tried first (a refused or
unroutable port fails at once), then `ray.init` runs in a daemon thread that is given up on after
`timeout_s` (a port that answers but is not Ray). `auto` needs no probe: Ray reads this machine's cluster file,
or says at once that there is none.
"""

from __future__ import annotations

import socket
import threading
from typing import Any

from amphoreus_graph.errors import AmphoreusError

CLIENT_PORT = 10001  # Ray client's default (`ray://HEAD`)
EXPECTED = "expected a running Ray cluster (`ray start --head` there): ray://HEAD:10001, HEAD:6379 or auto"


def endpoint(address: str) -> tuple[str, int] | None:
    """The host and port an address names, or None where Ray resolves it itself (`auto`, no port)."""
    client = address.startswith("ray://")
    rest = address.removeprefix("ray://").split("/", 1)[0]
    host, colon, port = rest.rpartition(":")
    if not colon:
        host, port = rest, str(CLIENT_PORT) if client else ""
    host = host.strip("[]")
    if address == "auto" or not host or not port.isdigit():
        return None
    return host, int(port)


def probe(address: str, timeout_s: float) -> None:
    """Fail in one line if nothing accepts a connection at the address's host and port."""
    found = endpoint(address)
    if found is None:
        return
    host, port = found
    try:
        with socket.create_connection((host, port), timeout=min(timeout_s, 10.0)):
            pass
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise AmphoreusError(f"--address {address}: nothing answers at {host}:{port} ({reason}); {EXPECTED}") from None


def join(ray: Any, address: str, timeout_s: float, **kwargs: Any) -> None:
    """`ray.init(address=…)` within `timeout_s`, or AmphoreusError (the thread left behind is a daemon)."""
    probe(address, timeout_s)
    outcome: dict[str, BaseException | None] = {}

    def connect() -> None:
        try:
            ray.init(address=address, **kwargs)
            outcome["error"] = None
        except BaseException as exc:  # handed to the caller below
            outcome["error"] = exc

    thread = threading.Thread(target=connect, name="ray-connect", daemon=True)
    thread.start()
    thread.join(timeout_s)
    if "error" not in outcome:
        raise AmphoreusError(f"--address {address}: no answer from Ray within {timeout_s:g} s; {EXPECTED}")
    error = outcome["error"]
    if error is not None:
        first = (str(error).strip().splitlines() or [""])[0]
        raise AmphoreusError(f"--address {address}: cannot join Ray ({type(error).__name__}: {first}); {EXPECTED}")
