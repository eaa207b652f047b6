"""One persisted HNSW segment of an embedded Chroma store, checked before Chroma's native loader reads it.

Chroma hands a segment's files to hnswlib as they are: a count in `header.bin` past what `data_level0.bin`
holds, a neighbour id past the last element, a level past the link lists read memory that is not there, and the
process dies of a segmentation fault, with no message. So every structural fact the loader trusts is checked
here first: the header's fields against each other and the collection's dimension, each file's size against the
header's counts, every neighbour id (level 0 and above) against the element count, every label against the id
map, and the id map itself (`index_metadata.pickle`) read as data only, never as code. The vectors are checked
for what can be known of them: finite, and of unit length where the space is cosine (Chroma stores them
normalised, with each one's length in `length.bin`). A value changed into another plausible one (a vector still
of unit length, a length still positive) cannot be told from a real one and is not found.

The layout is hnswlib's (persistence version 1, as chroma-core's fork writes it): a 100-byte header; per
element a fixed-size record in `data_level0.bin` (a u32 whose low 16 bits count the level-0 neighbours and whose
bit 16 marks the element deleted, `maxM0` neighbour ids, the vector, a u64 label); a float per element in
`length.bin`; and in `link_lists.bin`, per element, a u32 byte count then that many bytes of upper-level lists.
"""

from __future__ import annotations

import io
import math
import pickle
import pickletools
import struct
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeGuard

import numpy as np

HEADER = "header.bin"
DATA = "data_level0.bin"
LENGTHS = "length.bin"
LINKS = "link_lists.bin"
ID_MAP = "index_metadata.pickle"
INDEX_FILES = (HEADER, DATA, LENGTHS, LINKS)

_HEADER = struct.Struct("<iQQQQQQiIQQQdQ")  # hnswlib's persisted header, field by field (100 bytes)
_VERSION = 1  # hnswlib's PERSISTENCE_VERSION
_DELETED = 1 << 16  # the deleted mark in an element's level-0 count word
_MAX_M = 10_000  # hnswlib caps M there
_SPARE = 1 << 16  # room Chroma may hold beyond twice its elements: it grows to a power of two over a write batch
_UNIT = 1e-3  # how far from 1 a cosine segment's stored vector's length may be (float32 rounding is ~1e-7)
_CHUNK = 8192  # elements checked at a time: memory stays bounded whatever the store's size


class SegmentDamaged(Exception):
    """A segment's file that Chroma could not load safely: `path` names it, the message says what is wrong."""

    def __init__(self, path: Path, problem: str) -> None:
        super().__init__(problem)
        self.path = path
        self.problem = problem


@dataclass(frozen=True)
class Header:
    """The header fields the checks use (hnswlib's names)."""

    capacity: int
    elements: int
    stride: int  # bytes per element in data_level0.bin
    label_offset: int
    data_offset: int  # where the vector starts in an element's record
    max_level: int
    entry_point: int
    max_m: int
    max_m0: int

    @property
    def dimension(self) -> int:
        return (self.label_offset - self.data_offset) // 4


@dataclass(frozen=True)
class IdMap:
    """What `index_metadata.pickle` maps: Chroma's record ids to hnswlib labels and back."""

    labels: Mapping[int, str]
    total_added: int
    dimension: int | None


def check_segment(folder: Path, *, dimension: int | None, cosine: bool, has_writes: bool) -> None:
    """Raise SegmentDamaged for the first problem found in the segment stored in `folder`. `dimension`: the
    collection's (None if unknown); `cosine`: its space; `has_writes`: whether Chroma's database says this
    segment was ever persisted (then its files must be there)."""
    if not folder.is_dir():
        if has_writes:
            raise SegmentDamaged(folder, "the segment's directory is missing, though the database says it was written")
        return  # never persisted: Chroma makes it on the first sync
    missing = [name for name in INDEX_FILES if not (folder / name).is_file()]
    if len(missing) == len(INDEX_FILES) and not (folder / ID_MAP).exists() and not has_writes:
        return
    if missing:
        raise SegmentDamaged(folder / missing[0], "missing; every HNSW segment has header, data, length and link files")
    header = read_header(folder / HEADER, dimension)
    if not (folder / ID_MAP).is_file():
        if header.elements or has_writes:
            raise SegmentDamaged(folder / ID_MAP, f"missing, though {HEADER} counts {header.elements} elements")
        return
    ids = read_id_map(folder / ID_MAP)
    if ids.dimension is not None and ids.dimension != header.dimension:
        raise SegmentDamaged(folder / ID_MAP, f"dimension {ids.dimension}, {HEADER} says {header.dimension}")
    _check_sizes(folder, header)
    _check_level0(folder / DATA, folder / LENGTHS, header, ids, cosine)
    _check_upper_levels(folder / LINKS, header)


def read_header(path: Path, dimension: int | None) -> Header:
    data = path.read_bytes()
    if len(data) != _HEADER.size:
        raise SegmentDamaged(path, f"{len(data)} bytes, expected {_HEADER.size}")
    version, level0_at, capacity, elements, stride, label_at, data_at, *graph = _HEADER.unpack(data)
    level, entry, max_m, max_m0, m, mult, ef_construction = graph
    header = Header(capacity, elements, stride, label_at, data_at, level, entry, max_m, max_m0)
    problem = None
    if version != _VERSION:
        problem = f"persistence version {version}, expected {_VERSION}"
    elif level0_at != 0:
        problem = f"level 0 at offset {level0_at}, expected 0"
    elif not 1 < m <= _MAX_M or max_m != m or max_m0 != 2 * m:
        problem = f"graph parameters M {m}, maxM {max_m}, maxM0 {max_m0}; hnswlib writes M = maxM = maxM0 / 2"
    elif not math.isclose(mult, 1 / math.log(m), rel_tol=1e-9) or not m <= ef_construction < 2**31:
        problem = f"level multiplier {mult!r} or ef_construction {ef_construction} does not go with M {m}"
    elif capacity > 2 * elements + _SPARE:
        problem = f"room for {capacity} elements, far beyond its {elements} (the loader would allocate it all)"
    elif data_at != 4 + 4 * max_m0 or label_at <= data_at or (label_at - data_at) % 4 or stride != label_at + 8:
        problem = f"an element layout that does not add up (stride {stride}, vector at {data_at}, label at {label_at})"
    elif dimension is not None and header.dimension != dimension:
        problem = f"vectors of {header.dimension} values, the collection's have {dimension}"
    elif elements > capacity:
        problem = f"{elements} elements in room for {capacity}"
    elif elements and (entry >= elements or level < 0):
        problem = f"entry point {entry} at level {level}, of {elements} elements"
    if problem is not None:
        raise SegmentDamaged(path, problem)
    return header


# The opcodes of dicts, lists, tuples, strings, numbers, None and booleans: a pickle of plain data needs no other
# (what runs code, GLOBAL, REDUCE, BUILD, INST, OBJ, NEWOBJ, EXT, PERSID, and out-of-band buffers, is not here).
_PLAIN_DATA = frozenset(
    {
        "PROTO",
        "FRAME",
        "STOP",
        "MARK",
        "POP",
        "POP_MARK",
        "DUP",
        "EMPTY_DICT",
        "DICT",
        "SETITEM",
        "SETITEMS",
        "EMPTY_LIST",
        "LIST",
        "APPEND",
        "APPENDS",
        "EMPTY_TUPLE",
        "TUPLE",
        "TUPLE1",
        "TUPLE2",
        "TUPLE3",
        "EMPTY_SET",
        "ADDITEMS",
        "FROZENSET",
        "NONE",
        "NEWTRUE",
        "NEWFALSE",
        "INT",
        "BININT",
        "BININT1",
        "BININT2",
        "LONG",
        "LONG1",
        "LONG4",
        "FLOAT",
        "BINFLOAT",
        "STRING",
        "BINSTRING",
        "SHORT_BINSTRING",
        "UNICODE",
        "BINUNICODE",
        "SHORT_BINUNICODE",
        "BINUNICODE8",
        "BINBYTES",
        "SHORT_BINBYTES",
        "BINBYTES8",
        "MEMOIZE",
        "PUT",
        "BINPUT",
        "LONG_BINPUT",
        "GET",
        "BINGET",
        "LONG_BINGET",
    }
)
_SIZED = frozenset({"FRAME", "PUT", "BINPUT", "LONG_BINPUT", "GET", "BINGET", "LONG_BINGET"})  # a size, a memo slot


class _DataOnly(pickle.Unpickler):
    """An unpickler that builds plain data only: any reference to a class or function (the way a pickle runs
    code) is refused, so a planted pickle cannot execute anything."""

    def find_class(self, module: str, name: str) -> Any:
        raise pickle.UnpicklingError(f"refers to {module}.{name}, expected plain data only")


def read_id_map(path: Path) -> IdMap:
    """The id map, loaded as data (never as code) and checked: two maps each the other's inverse. Its opcodes
    are read first (pickletools, which allocates nothing a length field claims): only plain data, frames and memo
    slots within the file's size, so that loading it can neither run code nor ask for more memory than the file
    holds."""
    data = path.read_bytes()
    try:
        _only_plain_data(data)
        loaded = _DataOnly(io.BytesIO(data)).load()
    except Exception as exc:  # on bad data the unpickler raises many kinds (pickle's docs); only it runs here
        raise SegmentDamaged(path, f"not a readable id map ({str(exc) or type(exc).__name__})") from None
    fields = loaded if isinstance(loaded, dict) else {}
    to_label, to_id = fields.get("id_to_label"), fields.get("label_to_id")
    total, dimension = fields.get("total_elements_added"), fields.get("dimensionality")
    if not (isinstance(to_label, dict) and isinstance(to_id, dict) and _is_count(total)):
        raise SegmentDamaged(path, "not an id map (expected id_to_label, label_to_id and total_elements_added)")
    if dimension is not None and not _is_count(dimension):
        raise SegmentDamaged(path, f"dimensionality {dimension!r}, expected a count")
    if len(to_label) != len(to_id) or any(
        not (_is_count(label) and isinstance(record, str)) or to_label.get(record) != label
        for label, record in to_id.items()
    ):
        raise SegmentDamaged(path, "its two maps (id to label, label to id) disagree")
    return IdMap(to_id, total, dimension)


def _only_plain_data(data: bytes) -> None:
    for opcode, arg, position in pickletools.genops(data):
        if opcode.name not in _PLAIN_DATA:
            raise pickle.UnpicklingError(f"opcode {opcode.name} at byte {position}, expected plain data only")
        if opcode.name in _SIZED and not (isinstance(arg, int) and 0 <= arg < len(data)):
            raise pickle.UnpicklingError(f"{opcode.name} {arg} at byte {position}, past the file's {len(data)} bytes")


def _is_count(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**63


def _check_sizes(folder: Path, header: Header) -> None:
    for name, needed in ((DATA, header.elements * header.stride), (LENGTHS, header.elements * 4)):
        size = (folder / name).stat().st_size
        if size < needed:
            raise SegmentDamaged(folder / name, f"{size} bytes, {HEADER}'s {header.elements} elements need {needed}")


def _records(path: Path, header: Header) -> Iterator[tuple[int, np.ndarray]]:
    """data_level0.bin's element records, a chunk at a time, as hnswlib lays them out (read where they lie)."""
    layout = np.dtype(
        {
            "names": ["count", "neighbours", "vector", "label"],
            "formats": ["<u4", ("<u4", (header.max_m0,)), ("<f4", (header.dimension,)), "<u8"],
            "offsets": [0, 4, header.data_offset, header.label_offset],
            "itemsize": header.stride,
        }
    )
    records = np.memmap(path, dtype=layout, mode="r", shape=(header.elements,))
    for start in range(0, header.elements, _CHUNK):
        yield start, records[start : start + _CHUNK]


def _check_level0(data: Path, lengths_file: Path, header: Header, ids: IdMap, cosine: bool) -> None:
    """Every element's neighbour count, neighbour ids, label and vector; each live label in the id map and each
    id map entry an element's."""
    if not header.elements:
        if ids.labels:
            raise SegmentDamaged(data, f"no elements, though the id map holds {len(ids.labels)}")
        return
    lengths = np.fromfile(lengths_file, dtype="<f4", count=header.elements)
    labels = np.empty(header.elements, dtype=np.uint64)
    alive = np.empty(header.elements, dtype=bool)
    for start, chunk in _records(data, header):
        count, marks = chunk["count"] & 0xFFFF, chunk["count"] >> 16
        reached = np.arange(header.max_m0) < count[:, None]
        these = chunk["label"]
        bad = np.flatnonzero(
            (count > header.max_m0)
            | (marks > 1)
            | (reached & (chunk["neighbours"] >= header.elements)).any(axis=1)
            | (these == 0)
            | (these > ids.total_added)
        )
        if bad.size:
            problem = _what_is_wrong(chunk[bad[0]], header, ids)
            raise SegmentDamaged(data, f"element {start + int(bad[0])}: {problem}")
        span = slice(start, start + len(chunk))
        labels[span], alive[span] = these, marks == 0
        _check_vectors(data, lengths_file, start, chunk["vector"], lengths[span], alive[span], cosine)
    if np.unique(labels).size != labels.size:
        raise SegmentDamaged(data, "two elements carry the same label")
    live = labels[alive]
    unmapped = live[~np.isin(live, np.fromiter(ids.labels, dtype=np.uint64, count=len(ids.labels)))]
    if unmapped.size:
        raise SegmentDamaged(data, f"label {int(unmapped[0])} is not in {ID_MAP}")
    if live.size != len(ids.labels):
        raise SegmentDamaged(data, f"{live.size} live elements, {ID_MAP} maps {len(ids.labels)}")


def _what_is_wrong(record: np.void, header: Header, ids: IdMap) -> str:
    count, marks = int(record["count"]) & 0xFFFF, int(record["count"]) >> 16
    if count > header.max_m0:
        return f"{count} level-0 neighbours, at most {header.max_m0}"
    if marks > 1:
        return f"flags {marks:#x}, expected 0 or 1 (deleted)"
    for neighbour in record["neighbours"][:count]:
        if neighbour >= header.elements:
            return f"a neighbour {int(neighbour)}, past the {header.elements} elements"
    return f"label {int(record['label'])}, expected 1 to {ids.total_added}"


def _check_vectors(
    data: Path,
    lengths_file: Path,
    start: int,
    vectors: np.ndarray,
    lengths: np.ndarray,
    alive: np.ndarray,
    cosine: bool,
) -> None:
    """The live elements' vectors: finite; and in a cosine segment, each of unit length (or zero) with a positive
    length beside it."""
    with np.errstate(over="ignore", invalid="ignore"):
        bad = alive & ~np.isfinite(vectors).all(axis=1)
        if bad.any():
            raise SegmentDamaged(data, f"element {start + int(np.argmax(bad))}: a vector value that is not a number")
        if not cosine:
            return  # only a cosine segment's vectors and lengths say anything more
        norms = np.sqrt(np.einsum("ij,ij->i", vectors, vectors))
        zero = norms == 0
        bad = alive & ~((np.abs(norms - 1) <= _UNIT) | zero)
        if bad.any():
            element = start + int(np.argmax(bad))
            raise SegmentDamaged(
                data, f"element {element}: a vector of length {norms[bad][0]:.4g}, expected 1 (cosine)"
            )
        bad = alive & ~(np.isfinite(lengths) & ((lengths > 0) | zero))
        if bad.any():
            element = start + int(np.argmax(bad))
            raise SegmentDamaged(
                lengths_file, f"element {element}: length {float(lengths[bad][0])!r}, expected a positive number"
            )


def _check_upper_levels(path: Path, header: Header) -> None:
    """Each element's upper-level lists: a whole number of levels, none above the header's top level (which the
    entry point reaches: a search starts there), each list no longer than `maxM`, every neighbour an element."""
    links = path.read_bytes()
    per_level = 4 + 4 * header.max_m
    at = 0
    entry_level = None
    for element in range(header.elements):
        if at + 4 > len(links):
            raise SegmentDamaged(path, f"ends at element {element} of {header.elements}")
        (size,) = struct.unpack_from("<I", links, at)
        at += 4
        levels, rest = divmod(size, per_level)
        if element == header.entry_point:
            entry_level = levels
        if not size:
            continue
        if rest or levels > header.max_level or at + size > len(links):
            raise SegmentDamaged(path, f"element {element}: {size} bytes of upper levels, which do not fit")
        lists = np.frombuffer(links, dtype="<u4", count=size // 4, offset=at).reshape(levels, 1 + header.max_m)
        counts = lists[:, 0]
        reached = np.arange(header.max_m) < counts[:, None]
        if (counts > header.max_m).any() or (reached & (lists[:, 1:] >= header.elements)).any():
            raise SegmentDamaged(path, f"element {element}: an upper-level list past its bounds")
        at += size
    if entry_level is not None and entry_level != header.max_level:
        raise SegmentDamaged(path, f"the entry point reaches level {entry_level}, {HEADER} says {header.max_level}")
