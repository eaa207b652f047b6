"""How far the Scepter has come: each society's position on disk, and the whole run's rate and ETA.

A society's position is `(cycle - 1) * rounds + round` in planned rounds, so it only ever moves forward: a replayed
round (after a crash) lands on the same position and counts nothing twice, and a cycle that ends early jumps ahead.
Each society writes it to `progress.json` after every round; the Ray engine's driver reads those files, the local
engine gets the same values as events. The totals are for display: exact counts come from the summaries.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from amphoreus_graph.atomic import write_atomic
from amphoreus_graph.contracts.events import SocietyUpdate
from amphoreus_graph.layout import RunDir


class SocietyProgress(SocietyUpdate):
    """One society's progress, as written to RUN/societies/NAME/progress.json and reported as its event."""

    def advance(self, cycle: int, round_: int, rounds: int, samples: int) -> bool:
        """A finished round; False (and nothing counted) if this round was already counted."""
        position = min((cycle - 1) * rounds + round_, self.total)
        if position <= self.position:
            return False
        self.position = position
        self.samples += samples
        return True

    def finish(self, samples: int) -> None:
        self.position, self.samples, self.done = self.total, samples, True

    def save(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        write_atomic(RunDir(directory).progress, self.model_dump_json())

    @classmethod
    def load(cls, directory: Path, society: str, total: int) -> SocietyProgress:
        """What an earlier process got to (a fresh record if none, or if the file is unreadable)."""
        try:
            found = cls.model_validate_json(RunDir(directory).progress.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return cls(society=society, total=total)
        return found.model_copy(update={"society": society, "total": total, "pid": os.getpid()})


class ScepterTracker:
    """The run as a whole: societies done, samples, samples/s and ETA over this session's progress.

    Totals are kept as running sums, so an update costs the same however many societies there are."""

    def __init__(self, societies: int, total_positions: int) -> None:
        self.societies = societies
        self.total_positions = max(total_positions, 1)
        self.started = time.monotonic()
        self._latest: dict[str, SocietyProgress] = {}
        self.done = 0
        self.position = 0
        self.samples = 0
        self._moved = 0  # positions gained this session
        self._gained = 0  # samples written this session

    def update(self, event: dict[str, Any]) -> None:
        """Take a `society` event (as a dict); older or equal positions change nothing."""
        progress = SocietyProgress.model_validate(event)
        known = self._latest.get(progress.society)
        if known is not None:
            if progress.position < known.position or (progress.position == known.position and known.done):
                return
            self._moved += progress.position - known.position
            self._gained += progress.samples - known.samples
            self.done -= known.done
            self.position -= known.position
            self.samples -= known.samples
        self.done += progress.done
        self.position += progress.position
        self.samples += progress.samples
        self._latest[progress.society] = progress

    def finish(self, society: str, samples: int) -> None:
        """A society's end (its summary's count), whatever its last progress event said."""
        known = self._latest.get(society)
        total = known.total if known is not None else 1
        self.update({"society": society, "position": total, "total": total, "samples": samples, "done": True})

    def session_samples(self) -> int:
        return self._gained

    def samples_per_s(self) -> float:
        elapsed = time.monotonic() - self.started
        return self._gained / elapsed if elapsed > 0 else 0.0

    def eta_s(self) -> float | None:
        """Seconds left at this session's pace over planned rounds (None until something moved)."""
        if self._moved <= 0:
            return None
        elapsed = time.monotonic() - self.started
        return max(self.total_positions - self.position, 0) * elapsed / self._moved

    def snapshot(self) -> dict[str, Any]:
        eta = self.eta_s()
        return {
            "societies_done": self.done,
            "societies": self.societies,
            "position": self.position,
            "total_positions": self.total_positions,
            "samples": self.samples,
            "samples_per_s": round(self.samples_per_s(), 2),
            "eta_s": None if eta is None else round(eta, 1),
        }


def read_progress(directory: Path) -> dict[str, Any] | None:
    """A society's progress file as a dict, or None if there is none yet."""
    try:
        return dict(json.loads(RunDir(directory).progress.read_text(encoding="utf-8")))
    except (OSError, ValueError):
        return None
