"""Storage names for identities: collision-free for any Unicode name, and never forgeable by an agent's name.

An agent, a society or a namespace is identified by its exact name (its code points: "Zoé" composed and
decomposed are two identities here; the scenario loader rejects names equal after NFC). Chroma collection
names allow only 3-512 characters of [a-zA-Z0-9._-], so a name cannot be used as it is, and a slug alone
merges names that differ in accents, spaces, punctuation or script ("Zoé" and "Zoë"; every all-CJK name).
So every name part is a readable ASCII slug plus 16 hex digits of the SHA-256 of the exact name, and a
collection name says what it holds in a fixed role field:

    am2.<society>.agent.<agent>     an agent's memories (the layout before one collection per society)
    am2.<society>.int.<what>        the store's own bookkeeping (e.g. `access`, the last-access ticks)
    am2.<store>.lgs.<what>          a LangGraph store's collections (`ChromaStore`: its items, its text rows)

An agent part always ends with its hash and sits behind `.agent.`, so no agent name can produce an internal
name, and two different names collide only if 64 bits of SHA-256 do. The slug never holds a ".", so the
parts cannot run into each other.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata

PREFIX = "am2"  # the naming scheme's version; bump it if the layout of names ever changes
HASH_HEX = 16
SLUG_MAX = 24


def name_digest(name: str) -> str:
    """SHA-256 over the exact name's UTF-8 bytes, in hex (no normalisation: identity is exact)."""
    return hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()


def name_hash(name: str) -> str:
    """The first 16 hex digits of `name_digest`: a short name part."""
    return name_digest(name)[:HASH_HEX]


def slug(name: str) -> str:
    """A readable ASCII rendering of a name, for people browsing a store: accents dropped, anything else
    outside [a-zA-Z0-9] collapsed to "-", at most 24 characters; empty for a name with no Latin letters or
    digits. Never used alone: many names share a slug."""
    ascii_only = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode("ascii")
    return re.sub(r"[^a-zA-Z0-9]+", "-", ascii_only).strip("-")[:SLUG_MAX].rstrip("-")


def name_part(name: str) -> str:
    """`<slug>-<hash>` (or just `<hash>`): one name as one dot-free part of a storage name."""
    readable = slug(name)
    return f"{readable}-{name_hash(name)}" if readable else name_hash(name)


def society_prefix(society: str) -> str:
    """What the name of every collection of one society (its agents' and its own) starts with."""
    return f"{PREFIX}.{name_part(society)}."


def agent_collection(society: str, agent: str) -> str:
    """The Chroma collection of one agent of one society."""
    return f"{society_prefix(society)}agent.{name_part(agent)}"


def internal_collection(society: str, what: str) -> str:
    """A collection the store keeps for itself (`what` is a fixed word of ours, never a user's name)."""
    if not re.fullmatch(r"[a-z]+", what):
        raise ValueError(f"internal collection {what!r}: expected a lowercase word")
    return f"{society_prefix(society)}int.{what}"


def store_collection(store: str, what: str) -> str:
    """A collection of the LangGraph store (`ChromaStore`) named `store` (any Unicode); `what` is a fixed word."""
    if not re.fullmatch(r"[a-z]+", what):
        raise ValueError(f"store collection {what!r}: expected a lowercase word")
    return f"{PREFIX}.{name_part(store)}.lgs.{what}"


def record_key(*parts: str) -> str:
    """A fixed-length id for a tuple of names/texts (a record's access row, a distinct text's vector row):
    unambiguous whatever characters the parts hold, since they are length-prefixed before hashing."""
    digest = hashlib.sha256()
    for part in parts:
        data = part.encode("utf-8", "surrogatepass")
        digest.update(len(data).to_bytes(8, "big"))
        digest.update(data)
    return digest.hexdigest()[:32]
