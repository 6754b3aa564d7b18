"""Documentation that cannot rot: every Python block of the README and the docs runs, and every ``td2048``
command line in them parses with the real parser. The built site (``mkdocs build --strict``) is tested in
``test_docs_site.py``.

Python blocks run with Sybil, top to bottom, one namespace per page (a tutorial's blocks build on each
other), in a fresh working directory. A block that must not run (it trains for hours) is preceded by
``<!-- skip: next -->``, Sybil's own marker.
"""

from __future__ import annotations

import argparse
import re
import shlex
from pathlib import Path

import pytest
from sybil import Sybil
from sybil.parsers.markdown import PythonCodeBlockParser, SkipParser

from td2048.cli.__main__ import build_parser

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
SHELL_FENCE = re.compile(r"^```(?:sh|bash|console|shell)\s*\n(.*?)^```", re.S | re.M)
PYTHON_FENCE = re.compile(r"^```python\s*$", re.M)


def page_id(path: Path) -> str:
    return str(path.relative_to(ROOT))


def command_lines(text: str) -> list[str]:
    """The ``td2048 ...`` commands in a page's shell blocks, continuation lines joined, one per command."""
    commands = []
    for block in SHELL_FENCE.findall(text):
        for line in block.replace("\\\n", " ").splitlines():
            line = line.strip().removeprefix("$ ")
            try:
                words = shlex.split(line, comments=True)
            except ValueError:
                continue
            command: list[str] | None = None
            for word in [*words, ";"]:
                if word in (";", "&&", "||", "|", "&") or word.endswith(";"):
                    if command is not None:
                        commands.append(shlex.join(command))
                    command = None
                elif command is not None:
                    command.append(word)
                elif word == "td2048" or word.endswith("/td2048"):
                    command = []
    return commands


def all_command_lines() -> list[tuple[str, str]]:
    return [(page_id(path), line) for path in PAGES for line in command_lines(path.read_text())]


@pytest.mark.parametrize(("page", "line"), all_command_lines(), ids=lambda v: v if "/" in v or "." in v else None)
def test_command_line_parses(page, line):
    parser = build_parser()
    try:
        args = parser.parse_args(shlex.split(line))
    except SystemExit as e:
        assert e.code == 0, f"{page}: `td2048 {line}` does not parse"
        return
    assert isinstance(args, argparse.Namespace)


def test_the_pages_hold_command_lines():
    """The extraction finds the README's set-up commands (a guard against a pattern that finds nothing)."""
    readme = command_lines((ROOT / "README.md").read_text())
    assert any(line.startswith("train") for line in readme), readme


PYTHON_PAGES = [path for path in PAGES if PYTHON_FENCE.search(path.read_text())]


@pytest.mark.parametrize("path", PYTHON_PAGES, ids=page_id)
def test_python_blocks_run(path, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    document = Sybil(parsers=[PythonCodeBlockParser(), SkipParser()]).parse(path)
    examples = list(document)
    assert examples, path
    for example in examples:
        example.evaluate()



def test_the_readme_test_command_is_what_ci_runs():
    """The README's test command is one script that sets up a fresh machine itself, and CI runs exactly it."""
    blocks = [block.strip() for block in SHELL_FENCE.findall((ROOT / "README.md").read_text())]
    assert "scripts/test.sh" in blocks, blocks
    ci = [line for line in (ROOT / ".ci" / "run").read_text().splitlines() if line and not line.startswith("#")]
    assert ci[-1] == "exec scripts/test.sh", ci
    script = (ROOT / "scripts" / "test.sh").read_text()
    for need in ("apt-get install", "sudo", "python3 -m venv .venv", "pip install", "exec .venv/bin/python -m pytest"):
        assert need in script, need
