"""Commits a reader can scan: a subject of at most 72 characters, a blank line, then a body (the why, the figures).

Usage: python tools/commit_subjects.py [--base REV] [--message FILE]
  (exit 1 and one `commit: problem` line per fault, else exit 0)

Checks the commits after BASE on the current branch (merge commits, whose messages git writes, are left out).
Older history is not checked: its subjects were written before the rule. `--message FILE` checks one message
instead, so the script also serves as a `commit-msg` hook (`ln -s ../../tools/commit_subjects.py
.git/hooks/commit-msg` passes the message file as the first argument).

On a clone that lacks BASE (a shallow clone, or another repository's history) the commits of the clone dated
after BASE's commit time are checked, and the output says so; outside a git work tree nothing is checked, and it
says that too. Neither is an error.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

BASE = "9b5a815"  # the tip of main when the rule was made
BASE_TIME = 1795858573  # its commit time (Unix seconds), for clones that lack it
MAX_SUBJECT = 72


def problems(message: str) -> list[str]:
    """What is wrong with one commit message (comment lines, as git strips them, left out)."""
    lines = [line for line in message.strip("\n").splitlines() if not line.startswith("#")]
    subject = lines[0] if lines else ""
    found = []
    if not subject.strip():
        return ["empty subject"]
    if len(subject) > MAX_SUBJECT:
        found.append(f"subject is {len(subject)} characters (at most {MAX_SUBJECT})")
    if len(lines) > 1 and lines[1].strip():
        found.append("no blank line after the subject")
    if not any(line.strip() for line in lines[1:]):
        found.append("no body (say why, and any figures)")
    return found


def git(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], capture_output=True, text=True, check=False)


def commits(base: str) -> tuple[list[tuple[str, str]], str]:
    """(short hash, message) of the commits to check, newest first, and a line saying what was checked."""
    if git("rev-parse", "--is-inside-work-tree").returncode != 0:
        return [], "not inside a git work tree: no commits checked"
    if git("rev-parse", "--verify", "--quiet", "HEAD").returncode != 0:
        return [], "no commits yet: nothing checked"
    if git("cat-file", "-e", f"{base}^{{commit}}").returncode == 0:
        selection, said = [f"{base}..HEAD"], f"commits after {base}"
    else:
        shallow = git("rev-parse", "--is-shallow-repository").stdout.strip() == "true"
        why = "not in this shallow clone" if shallow else "not in this clone"
        selection = ["HEAD", f"--since={BASE_TIME + 1}"]
        said = f"{base} is {why}: commits dated after it"
    out = git("log", "--no-merges", "--format=%h%x00%B%x1e", *selection)
    if out.returncode != 0:
        return [], f"git log failed ({out.stderr.strip().splitlines()[0] if out.stderr.strip() else out.returncode})"
    found = []
    for record in filter(str.strip, out.stdout.split("\x1e")):
        short, _, message = record.strip("\n").partition("\x00")
        found.append((short, message))
    return found, said


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("message_file", nargs="?", type=Path, help=argparse.SUPPRESS)  # as a commit-msg hook
    parser.add_argument("--message", type=Path, help="check this commit message file instead of the history")
    parser.add_argument("--base", default=BASE, help=f"check the commits after this one (default {BASE})")
    args = parser.parse_args(argv)
    if file := args.message or args.message_file:
        faults = problems(file.read_text("utf-8"))
        for fault in faults:
            print(f"commit message: {fault}", file=sys.stderr)
        return 1 if faults else 0
    found, said = commits(args.base)
    faults = [f"{short}: {p}" for short, message in found for p in problems(message)]
    for fault in faults:
        print(fault)
    print(f"commit subjects: {len(found)} checked ({said}), {len(faults)} problem(s)")
    return 1 if faults else 0


if __name__ == "__main__":
    sys.exit(main())
