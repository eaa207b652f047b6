"""A run's call log (RUN/calls.jsonl): every request the gateway sends for the run, written as it goes out and again
as its answer or failure comes back, so what the run spent survives a kill.

Why a log beside the graph state: a run counts its model use per step (`model_use`, checkpointed with the step), so a
kill loses the counts of the steps not yet checkpointed though the server was paid for them; on resume those steps
run again, their answers come from the response cache (cache hits, not calls) and their failed attempts are not
there at all. The log is written as each request happens, whatever is checkpointed. `counted_use` (gateway.py)
takes, field by field, the larger of the two counts: the log's where it saw every request (a run's own models), the
state's where a call went past it (a policy handed in by library code, with a model handle of its own).

One JSON object a line, appended with one `write` each (no buffering: a `kill -9` loses nothing the process wrote,
a power cut may lose the last lines):
- `{"n": 7, "role": "decide"}`, `"retry": true` for a retry: request 7 is going out now (its slot and the endpoint's
  limiter were waited for first, so a request still queued is not a call);
- `{"n": 7, "in": 812, "out": 40}`: it was answered, with these tokens; `{"n": 7, "failed": "http_status"}`: it
  failed, of this kind;
- `{"role": "decide", "local": true, ...}` with `in`/`out` or `failed`: a call to a model in this process.
A request sent by an earlier process with no answer line is a call that failed `interrupted` (the run was killed
while it waited). Only one process writes a run's log (the run directory is the run's alone).
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from amphoreus_graph.errors import AmphoreusError

INTERRUPTED = "interrupted"  # sent, and the process ended before the answer came back


class _Line(BaseModel):
    """One line of the log (which fields it has says what it records)."""

    model_config = ConfigDict(extra="forbid")

    n: int | None = Field(default=None, ge=1)
    role: str | None = None
    retry: bool = False
    local: bool = False
    tokens_in: int = Field(default=0, ge=0, alias="in")
    tokens_out: int = Field(default=0, ge=0, alias="out")
    failed: str | None = None

    def problem(self) -> str | None:
        """What makes this line no record at all (None: it is one)."""
        if self.local:
            return None if self.role is not None else "a local call without its role"
        return None if self.n is not None else "a request line without its number"


class CallLog:
    """One run's call log: its totals by role (read from the file, then kept as lines are written), and the writer.
    Thread-safe: requests are sent from the gateway's thread, local models count from the graph's."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.errors = 0  # lines that could not be written (the totals still hold them)
        self._lock = threading.Lock()
        self._totals: dict[str, dict[str, Any]] = {}
        self._open: dict[int, str] = {}  # requests of this process still waiting: number -> role
        self._next = 1
        self._good_bytes: int | None = None  # where the file's last whole line ends (None: not read)
        self._fd: int | None = None

    def read(self) -> CallLog:
        """Count what earlier processes of the run logged. A damaged line is one error naming it; a last line cut
        short (a power cut, a full disk) is left out, and cut off before the next line is written."""
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            data = b""
        except OSError as exc:
            problem = exc.strerror or exc
            raise AmphoreusError(f"{self.path}: cannot read it ({problem}); expected the run's call log") from None
        whole = data[: data.rfind(b"\n") + 1]
        waiting: dict[int, str] = {}
        with self._lock:
            self._totals, self._next, self._good_bytes = {}, 1, len(whole)
            for number, raw in enumerate(whole.splitlines(), 1):
                line = self._parse(raw, number)
                if line.n is not None:
                    self._next = max(self._next, line.n + 1)
                if line.role is not None and not line.local:
                    waiting[line.n or 0] = line.role
                    self._count(line.role, calls=1, retry=line.retry)
                elif line.role is not None:
                    self._count(line.role, calls=1, failed=line.failed, tokens=(line.tokens_in, line.tokens_out))
                elif (role := waiting.pop(line.n or 0, None)) is not None:
                    self._count(role, failed=line.failed, tokens=(line.tokens_in, line.tokens_out))
            for role in waiting.values():
                self._count(role, failed=INTERRUPTED)
        return self

    def _parse(self, raw: bytes, number: int) -> _Line:
        try:
            line = _Line.model_validate_json(raw)
        except ValidationError as exc:
            problem: str | None = exc.errors()[0]["msg"]
        else:
            if (problem := line.problem()) is None:
                return line
        raise AmphoreusError(
            f"{self.path}: line {number}: not a call record ({problem}); expected the log a run writes "
            "(move it away to count the run's calls from its checkpoints alone)"
        )

    # what is written

    def sent(self, role: str, *, retry: bool = False) -> int:
        """A request is going out now: its number, for `done`."""
        with self._lock:
            number, self._next = self._next, self._next + 1
            self._open[number] = role
            self._count(role, calls=1, retry=retry)
            self._write({"n": number, "role": role, **({"retry": True} if retry else {})})
        return number

    def done(self, number: int, *, failed: str | None = None, tokens: tuple[int, int] = (0, 0)) -> None:
        """Request `number` was answered (with these tokens) or failed (of this kind)."""
        with self._lock:
            role = self._open.pop(number, None)
            if role is None:
                return
            self._count(role, failed=failed, tokens=tokens)
            self._write({"n": number, "failed": failed} if failed else {"n": number, "in": tokens[0], "out": tokens[1]})

    def local(self, role: str, *, failed: str | None = None, tokens: tuple[int, int] = (0, 0)) -> None:
        """A call to a model that runs in this process, done."""
        with self._lock:
            self._count(role, calls=1, failed=failed, tokens=tokens)
            outcome = {"failed": failed} if failed else {"in": tokens[0], "out": tokens[1]}
            self._write({"role": role, "local": True, **outcome})

    def totals(self) -> dict[str, dict[str, Any]]:
        """What was logged, by role, as `model_use` holds it (calls, retries, failures by kind, tokens)."""
        with self._lock:
            return {role: {**use, "failures": dict(use["failures"])} for role, use in sorted(self._totals.items())}

    def close(self) -> None:
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None

    def _count(
        self,
        role: str,
        *,
        calls: int = 0,
        retry: bool = False,
        failed: str | None = None,
        tokens: tuple[int, int] = (0, 0),
    ) -> None:
        use = self._totals.setdefault(role, {"calls": 0, "retries": 0, "failures": {}, "tokens_in": 0, "tokens_out": 0})
        use["calls"] += calls
        use["retries"] += int(retry)
        use["tokens_in"] += tokens[0]
        use["tokens_out"] += tokens[1]
        if failed is not None:
            use["failures"][failed] = use["failures"].get(failed, 0) + 1

    def _write(self, record: dict[str, Any]) -> None:
        """Append one line (under the lock). A line that cannot be written is counted, not raised: the request was
        made either way, and this process's totals still hold it (a resume then counts from the checkpoints)."""
        try:
            if self._fd is None:
                self._fd = self._opened()
            os.write(self._fd, json.dumps(record, separators=(",", ":")).encode() + b"\n")
        except OSError:
            self.errors += 1

    def _opened(self) -> int:
        """The file, opened for appending on the first line written (a run that asks no model writes none)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        if self._good_bytes is not None and os.fstat(fd).st_size > self._good_bytes:
            os.ftruncate(fd, self._good_bytes)  # a last line cut short by an earlier process's end
        return fd
