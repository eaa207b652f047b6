"""Two defects that reach training prompts through memory, measured for a dataset card: memory lines that
repeat a clause (a reflection quoting the same gist twice), and agents' names written in lower case."""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel

MEMORY_LINE = re.compile(r"^- \(cycle \d+, round \d+\)(?: \([^)]*\))? (.*)$", re.MULTILINE)
CLAUSE = re.compile(r"[;:.!?]\s+")


class TextQuality(BaseModel):
    memory_lines: int
    repeated_clause_lines: int
    name_mentions: int
    lowercased_names: int


def repeats_a_clause(text: str) -> bool:
    """Whether any clause of the text (split at ; : . ! ?) of four words or more appears twice."""
    clauses = [c.strip(" .").lower() for c in CLAUSE.split(text)]
    long = [c for c in clauses if len(c.split()) >= 4]
    return len(set(long)) < len(long)


def text_quality(rows: list[dict[str, Any]]) -> TextQuality:
    """Over every message of the rows: memory lines that repeat a clause, and mentions of the rows' agents whose
    name is written all in lower case (a name that is itself lower case is not counted)."""
    names = sorted({str(r["agent"]) for r in rows if str(r["agent"]) != str(r["agent"]).lower()})
    pattern = re.compile(r"\b(" + "|".join(re.escape(n) for n in names) + r")\b", re.IGNORECASE) if names else None
    lines = repeated = mentions = lowered = 0
    for row in rows:
        for message in row["messages"]:
            content = str(message["content"])
            for memory in MEMORY_LINE.findall(content):
                lines += 1
                repeated += repeats_a_clause(memory)
            if pattern is not None:
                for found in pattern.findall(content):
                    mentions += 1
                    lowered += found == found.lower()
    return TextQuality(
        memory_lines=lines, repeated_clause_lines=repeated, name_mentions=mentions, lowercased_names=lowered
    )


def quality_lines(quality: TextQuality) -> list[str]:
    def share(part: int, whole: int) -> str:
        return f"{part} of {whole} ({part / whole:.1%})" if whole else "none to count"

    return [
        f"- memory lines in prompts that repeat a clause: {share(quality.repeated_clause_lines, quality.memory_lines)}",
        f"- agents' names written in lower case: {share(quality.lowercased_names, quality.name_mentions)}",
    ]
