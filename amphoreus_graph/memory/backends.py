"""Memory backends by URL: `chroma:///PATH`, `chroma+http://HOST:PORT`, `memory://`, or a scheme another package
registers in the `amphoreus_graph.memory` entry-point group, so a store is chosen with `--memory URL` (the CLI, a
RunConfig, Studio's settings) without editing this package.

A scheme names a factory `(MemoryPlace) -> MemoryBackend` (index.py): it is given the URL parsed and the run it
serves, and returns the store, which opens a society's index when asked. The packaged schemes are declared in the
group in pyproject.toml as well; PACKAGED keeps them known where the installed metadata predates the group (an
editable install made before it), and a test keeps the two the same.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from urllib.parse import parse_qsl, unquote, urlsplit

from amphoreus_graph.errors import AmphoreusError
from amphoreus_graph.layout import RunDir
from amphoreus_graph.memory.index import MemoryBackend
from amphoreus_graph.memory.store import MemorySpec

GROUP = "amphoreus_graph.memory"
PACKAGED = {
    "chroma": "amphoreus_graph.memory.backends:embedded_chroma",
    "chroma+http": "amphoreus_graph.memory.backends:chroma_server",
    "chroma+https": "amphoreus_graph.memory.backends:chroma_server",
    "memory": "amphoreus_graph.memory.backends:in_process",
}
EXAMPLES = "chroma:///PATH, chroma+http://HOST:PORT or memory://"


@dataclass(frozen=True)
class MemoryPlace:
    """What a backend's factory is given: the memory URL, parsed, and the run whose memories it will keep."""

    url: str  # as the user wrote it: say it in error lines
    scheme: str
    location: str  # what follows `scheme://` up to any `?`, percent-decoded: HOST:PORT, a path, or "" (none named)
    run_dir: Path  # the run's directory: where a store whose URL names no place may keep its files
    options: Mapping[str, str] = field(default_factory=dict)  # the URL's query, `?key=value&…`

    def refuse(self, expected: str) -> AmphoreusError:
        """The one line for a URL this backend cannot use."""
        return AmphoreusError(f"--memory {self.url!r}: expected {expected}")


BackendFactory = Callable[[MemoryPlace], MemoryBackend]


def registered_backends() -> dict[str, metadata.EntryPoint]:
    """Every scheme a memory URL may use, by name: the packaged ones, and those installed packages register."""
    packaged = {name: metadata.EntryPoint(name, value, GROUP) for name, value in PACKAGED.items()}
    return packaged | {ep.name: ep for ep in metadata.entry_points(group=GROUP)}


def memory_place(url: str, run_dir: Path) -> MemoryPlace:
    """The URL parsed for the run in `run_dir`; a malformed URL or a scheme no one registered is one line."""
    scheme, sep, _ = url.partition("://")
    parts = urlsplit(url)
    if not sep or not scheme or parts.scheme != scheme.lower() or parts.fragment:
        raise AmphoreusError(f"--memory {url!r}: expected SCHEME://WHERE, such as {EXAMPLES}")
    known = registered_backends()
    if parts.scheme not in known:
        raise AmphoreusError(f"--memory {url!r}: unknown scheme {parts.scheme!r}; expected one of {sorted(known)}")
    try:
        options = dict(parse_qsl(parts.query, keep_blank_values=True, strict_parsing=bool(parts.query)))
    except ValueError:
        raise AmphoreusError(f"--memory {url!r}: expected options as ?KEY=VALUE&KEY=VALUE") from None
    return MemoryPlace(url, parts.scheme, unquote(parts.netloc + parts.path), run_dir, options)


def memory_backend(url: str, run_dir: Path) -> MemoryBackend:
    """The store `url` names for the run in `run_dir`, from its scheme's factory; any problem is one line."""
    place = memory_place(url, run_dir)
    entry = registered_backends()[place.scheme]
    try:
        factory: BackendFactory = entry.load()
        return factory(place)
    except AmphoreusError:
        raise
    except Exception as exc:  # another package's code: one line, naming it
        raise AmphoreusError(
            f"--memory {url!r}: the {place.scheme!r} backend ({entry.value}) failed ({type(exc).__name__}: {exc}); "
            "expected a factory (MemoryPlace) -> MemoryBackend"
        ) from None


def embedded_chroma(place: MemoryPlace) -> MemorySpec:
    """`chroma:///ABSOLUTE/DIR`, `chroma://RELATIVE/DIR` (to the working directory), or `chroma://`: the run's own
    store, RUN/memory. Embedded Chroma, locked to one writing process."""
    _plain(place, "chroma:///PATH (or chroma:// for the run's own RUN/memory)")
    return MemorySpec(directory=Path(place.location) if place.location else RunDir(place.run_dir).memory)


def chroma_server(place: MemoryPlace) -> MemorySpec:
    """`chroma+http://HOST:PORT` (or `chroma+https://`): a `chroma run` server; many processes may share it."""
    expected = f"{place.scheme}://HOST:PORT"
    _plain(place, expected)
    parts = urlsplit(place.url)
    try:
        parts.port  # noqa: B018 - a port that is not a number raises here
    except ValueError:
        raise place.refuse(expected) from None
    if not parts.hostname or parts.path.strip("/"):
        raise place.refuse(expected)
    return MemorySpec(url=f"{place.scheme.partition('+')[2]}://{parts.netloc}")  # no port: Chroma's 8000


def in_process(place: MemoryPlace) -> MemorySpec:
    """`memory://`: this process only, gone with it (InMemoryIndex): a throwaway run, or a test's."""
    if place.location or place.options:
        raise place.refuse("memory:// with nothing after it")
    return MemorySpec()


def _plain(place: MemoryPlace, expected: str) -> None:
    """The packaged backends take no options."""
    if place.options:
        raise place.refuse(f"{expected}, without options")
