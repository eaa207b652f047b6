"""The README is a short front door whose quick starts run as written, and the manual's links lead somewhere.

Every ```bash / ```shell / ```python block of README.md is run, in order, one temporary directory per section
(a quick start's later block may use what its earlier one wrote). The directory stands in for a checkout after
`make run`: `.venv` in it is the virtualenv running these tests, whose bin/ also comes first on PATH. The only
lines not run are the few named in COVERED_ELSEWHERE, each with the test that runs it instead. The Studio quick
start's client runs against a real `langgraph dev` server, started the way tests/test_studio.py starts one.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import REPO

README = REPO / "README.md"
MAX_LINES = 150
RUNNABLE = {"bash", "shell", "python"}
KNOWN_FENCES = RUNNABLE | {"text"}  # output samples and diagrams are ```text; nothing else is allowed
BLOCK_TIMEOUT_S = 180
STUDIO_SECTION = "Quick start: LangGraph Studio"
STUDIO_URL = "http://127.0.0.1:2024"  # the Studio client's server in the README; replaced by the test server's

# Lines of a README shell block that this file does not run, because another test runs them: the exact command
# (a trailing `# comment` aside) -> (the covering test's node id, why it is covered there and not here).
COVERED_ELSEWHERE: dict[str, tuple[str, str]] = {
    "make run": (
        "tests/test_make_run.py::test_make_run_completes_and_prints_the_summary",
        "runs `make run` itself (the install, then the 12-heir society through 2 cycles); minutes, not seconds",
    ),
    "make test": (
        "tests/test_readme.py::test_quick_start",
        "`make test` is pytest over tests/, this file included: the suite running is that line working",
    ),
    "make studio": (
        "tests/test_studio_command.py::test_run_output_is_not_watched_but_code_is",
        "runs `amphoreus studio`, the server `make studio` starts, until it is ready; a server that never exits",
    ),
}


@dataclass(frozen=True)
class Block:
    section: str  # the `## ` heading the block sits under
    language: str
    code: str
    line: int  # 1-based line of the opening fence


def readme_blocks(text: str) -> list[Block]:
    """The fenced code blocks of a Markdown text, with the `## ` section each sits in."""
    blocks: list[Block] = []
    section, language, start = "", "", 0
    fence: str | None = None
    body: list[str] = []
    for number, line in enumerate(text.splitlines(), 1):
        if fence is None:
            if line.startswith("## "):
                section = line[3:].strip()
            elif match := re.match(r"^(\s*)(`{3,})(.*)$", line):
                fence, language, start, body = match.group(2), match.group(3).strip(), number, []
        elif line.strip().startswith(fence):
            blocks.append(Block(section, language, "\n".join(body) + "\n", start))
            fence = None
        else:
            body.append(line)
    assert fence is None, f"README.md:{start}: a code block is never closed"
    return blocks


BLOCKS = readme_blocks(README.read_text(encoding="utf-8"))
SECTIONS = list(dict.fromkeys(b.section for b in BLOCKS if b.language in RUNNABLE))


def command_of(line: str) -> str:
    """A shell line without its trailing comment, as matched against COVERED_ELSEWHERE."""
    return line.split("#", 1)[0].strip()


def runnable_shell(code: str) -> str:
    """The block as bash runs it: a line another test covers becomes a no-op that says which test."""
    lines = []
    for line in code.splitlines():
        covered = COVERED_ELSEWHERE.get(command_of(line))
        lines.append(f": covered by {covered[0]}" if covered else line)
    return "\n".join(lines) + "\n"


def block_env() -> dict[str, str]:
    """A user's shell after `source .venv/bin/activate`, offline; no AMPHOREUS_* setting of ours leaks in."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AMPHOREUS_")}
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env.update(HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false", ANONYMIZED_TELEMETRY="False")
    return env


def checkout_stand_in(where: Path) -> Path:
    """An empty directory with `.venv` linked to this virtualenv: what the README's commands run in."""
    venv = Path(sys.prefix)
    if not (venv / "bin" / "activate").is_file():
        pytest.skip("the README's commands run in a virtualenv (`make test` makes one); this is not one")
    where.mkdir(parents=True, exist_ok=True)
    (where / ".venv").symlink_to(venv, target_is_directory=True)
    return where


def run_block(block: Block, cwd: Path, replace: dict[str, str] | None = None, source: str = "README.md") -> str:
    """Run one block (bash with -euo pipefail, or Python in a fresh interpreter) of `source` and return its stdout;
    fail with its output unless it exits 0 within the timeout. `replace` rewrites exact strings of the code first
    (the Studio server's URL)."""
    code = block.code
    for old, new in (replace or {}).items():
        assert old in code, f"{source}:{block.line}: expected {old!r} in the block"
        code = code.replace(old, new)
    if block.language == "python":
        argv = [sys.executable, "-c", code]
    else:
        argv = ["bash", "-euo", "pipefail", "-c", runnable_shell(code)]
    try:
        done = subprocess.run(argv, cwd=cwd, env=block_env(), capture_output=True, text=True, timeout=BLOCK_TIMEOUT_S)
    except subprocess.TimeoutExpired as error:
        partial = error.stdout.decode(errors="replace") if isinstance(error.stdout, bytes) else error.stdout or ""
        pytest.fail(f"{source}:{block.line} ({block.language}) ran past {BLOCK_TIMEOUT_S}s:\n{partial}")
    output = done.stdout + done.stderr
    assert done.returncode == 0, f"{source}:{block.line} ({block.language}) exited {done.returncode}:\n{output}"
    return done.stdout


def test_readme_is_short() -> None:
    """A front door, not the manual: the manual lives in docs/."""
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= MAX_LINES, f"README.md has {len(lines)} lines; at most {MAX_LINES}: move the rest to docs/"


def test_every_code_block_is_a_known_language() -> None:
    """Commands are only in blocks this file runs; anything else (output, diagrams) is ```text."""
    unknown = [(b.line, b.language) for b in BLOCKS if b.language not in KNOWN_FENCES]
    assert not unknown, f"README.md blocks with a language this test neither runs nor knows: {unknown}"
    assert [b for b in BLOCKS if b.language in RUNNABLE], "the README has no quick start to run"


def test_lines_covered_elsewhere_name_real_tests() -> None:
    """Each line not run here is in the README, and the test said to cover it exists, so no exemption is stale
    or points at nothing."""
    shell_lines = {command_of(line) for b in BLOCKS if b.language in {"bash", "shell"} for line in b.code.splitlines()}
    for command, (node, why) in COVERED_ELSEWHERE.items():
        assert command in shell_lines, f"{command!r} is exempt but no README shell block has it"
        assert why
        path, _, name = node.partition("::")
        test_file = REPO / path
        assert test_file.is_file(), f"{command!r}: {path} does not exist"
        tree = ast.parse(test_file.read_text(encoding="utf-8"))
        names = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}
        assert name in names, f"{command!r}: {node} is not a test in {path}"


def test_the_sections_with_code_are_the_quick_starts() -> None:
    """The Studio section is run by its own test (it needs a server); the others by test_quick_start."""
    assert STUDIO_SECTION in SECTIONS, SECTIONS
    assert any(b.section == STUDIO_SECTION and b.language == "python" for b in BLOCKS)


@pytest.mark.parametrize(
    "section", [s for s in SECTIONS if s != STUDIO_SECTION], ids=lambda s: re.sub(r"\W+", "-", s.lower()).strip("-")
)
def test_quick_start(section: str, tmp_path: Path) -> None:
    """Every runnable block of the section, in order, in one directory: each exits 0 as written."""
    cwd = checkout_stand_in(tmp_path / "checkout")
    for block in (b for b in BLOCKS if b.section == section and b.language in RUNNABLE):
        run_block(block, cwd)


@pytest.mark.slow
def test_studio_quick_start_against_langgraph_dev(tmp_path: Path) -> None:
    """The Studio client snippet against a real `langgraph dev` serving this project's graphs, started as
    tests/test_studio.py starts one; only the server's URL in the snippet is changed, to the test server's port."""
    studio = pytest.importorskip("tests.test_studio")
    if not studio.LANGGRAPH.exists():
        pytest.skip("langgraph-cli[inmem] is not installed (pip install -e .[dev])")
    cwd = checkout_stand_in(tmp_path / "checkout")
    port = studio.free_port()
    url = f"http://127.0.0.1:{port}"
    log = tmp_path / "langgraph-dev.log"
    with open(log, "wb") as sink:
        process = subprocess.Popen(
            [str(studio.LANGGRAPH), "dev", "--port", str(port), "--host", "127.0.0.1", "--no-browser", "--no-reload"],
            cwd=REPO,
            env=studio.server_env(tmp_path / "memory", tmp_path / "runs"),
            stdin=subprocess.DEVNULL,
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            studio.wait_ready(url, process, studio.READY_TIMEOUT_S)
            outputs = [
                run_block(block, cwd, replace={STUDIO_URL: url} if block.language == "python" else None)
                for block in BLOCKS
                if block.section == STUDIO_SECTION and block.language in RUNNABLE
            ]
        except BaseException:
            sys.stderr.write(log.read_text(encoding="utf-8", errors="replace")[-6000:])
            raise
        finally:
            studio.stop(process)
    assert len(outputs[-1].splitlines()) == 6, f"three agents, two rounds: one line per turn\n{outputs[-1]}"


def relative_links(markdown: Path) -> list[str]:
    """The targets of `](target)` links outside code blocks that are neither web addresses nor `#anchors`."""
    text = re.sub(r"```.*?```", "", markdown.read_text(encoding="utf-8"), flags=re.S)
    targets = re.findall(r"\]\(([^)\s]+)\)", text)
    return [t for t in targets if not t.startswith(("http://", "https://", "#", "mailto:"))]


@pytest.mark.parametrize(
    "page", [README, *sorted((REPO / "docs").glob("*.md"))], ids=lambda p: str(p.relative_to(REPO))
)
def test_relative_links_lead_to_files(page: Path) -> None:
    """A moved or renamed page must not leave links into nothing (anchors are not checked)."""
    broken = [t for t in relative_links(page) if not (page.parent / t.split("#", 1)[0]).exists()]
    assert not broken, f"{page.relative_to(REPO)}: links to missing files: {broken}"
