"""Ids built from names: one escape, so that no two names, and no name and a delimiter, ever make the same id.

Ids of events, records and samples are composed from agents' (and runs', seed files') names with delimiters:

    c{cycle}-r{round}-{agent}[#{n}]     an agent's event of a round (n from 2: its further events that round)
    c{cycle}-r{round}#world#{n}         an event of the world itself (a threshold firing)
    c{cycle}-end                        the echo of a cycle's end
    reflection-c{cycle}-r{round}-{agent}
    seed-{file}-{i}
    {event id}@{holder}                 one holder's record of an event (holder `*`: the public copy)
    {run}[@{branch}]/c{cycle}/r{round}/{agent}   a sample

A name enters an id only through `id_part`, which percent-escapes (as URLs do: `%` and the UTF-8 bytes in hex)
`%`, the delimiters `@ # / *` and every character `str.isprintable` refuses (controls, line and paragraph
separators, invisible format characters such as U+200B), and keeps every other character. So an ordinary name
reads as itself (`Zoé`, `Old Tom`, `李`), `a@b` becomes `a%40b`, `Mira\\u200b` becomes `Mira%E2%80%8B`.
The escape is reversible (`urllib.parse.unquote`), so two different names never share a part, and a part never
holds a delimiter, so a record id splits at its last `@` into its event and its holder.
"""

from __future__ import annotations

from urllib.parse import quote

RESERVED = frozenset("%@#/*")  # the escape character, the delimiters above, and the public holder `*`
PUBLIC_HOLDER = "*"  # the holder of a public record's copy; an agent named `*` is `%2A` in ids


def id_part(name: str) -> str:
    """A name as one part of an id: itself, except `%`, `@`, `#`, `/`, `*` and unprintable characters, each
    percent-escaped (its UTF-8 bytes)."""
    return "".join(_escaped(ch) if ch in RESERVED or not ch.isprintable() else ch for ch in name)


def _escaped(ch: str) -> str:
    return quote(ch, safe="", errors="surrogatepass")


def event_id(cycle: int, round_: int, owner: str, n: int = 1) -> str:
    """The id of the `n`th event an agent (`owner`) caused in a round; `owner` "" for the world's own events."""
    base = f"c{cycle}-r{round_}-{id_part(owner)}" if owner else f"c{cycle}-r{round_}#world"
    return base if n == 1 and owner else f"{base}#{n}"


def reflection_id(cycle: int, round_: int, agent: str) -> str:
    """An agent's reflection of a round (one at most)."""
    return f"reflection-c{cycle}-r{round_}-{id_part(agent)}"


def seed_id(file: str, index: int) -> str:
    """The `index`th seed memory of a seed file (by its name without `.yaml`)."""
    return f"seed-{id_part(file)}-{index}"


def echo_id(cycle: int) -> str:
    """The memory every agent keeps of how a cycle ended."""
    return f"c{cycle}-end"


def record_id(event: str, holder: str | None) -> str:
    """One holder's record of an event (holder None: the public copy, `@*`). The holder's part holds no `@` and is
    never a bare `*`, so whatever the event's id holds (a plug-in world's own), no two (event, holder) pairs share
    a record id."""
    return f"{event}@{PUBLIC_HOLDER if holder is None else id_part(holder)}"


def sample_id(run: str, cycle: int, round_: int, agent: str, branch: str = "") -> str:
    """One agent's turn of a round of a run (a fork's own rounds name its branch)."""
    fork = f"@{id_part(branch)}" if branch else ""
    return f"{id_part(run)}{fork}/c{cycle}/r{round_}/{id_part(agent)}"
