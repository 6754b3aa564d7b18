"""MkDocs hook: the command-line reference, generated from td2048's own argparse parser.

A page that holds the line ``<!-- td2048-cli -->`` gets, in its place, one section per command:
its description, its usage line and a table of its arguments (help texts and defaults as
``td2048 COMMAND --help`` prints them). The options are written once, in ``td2048.cli``.
"""

from __future__ import annotations

import argparse
import html

MARKER = "<!-- td2048-cli -->"


def _escape(text: str) -> str:
    """Plain text as Markdown that shows it as it is (help texts hold ``**``, ``_`` and ``|``)."""
    text = html.escape(" ".join(text.split()), quote=False)
    for char in "\\`*_[]|":
        text = text.replace(char, "\\" + char)
    return text


def _formatter(parser: argparse.ArgumentParser) -> argparse.HelpFormatter:
    return argparse.HelpFormatter(parser.prog, width=76)


def _names(action: argparse.Action) -> str:
    if not action.option_strings:
        return f"`{action.metavar or action.dest}`"
    metavar = ""
    if action.nargs != 0:
        if action.metavar:
            metavar = f" {action.metavar}"
        elif action.choices:
            metavar = " {" + ",".join(str(c) for c in action.choices) + "}"
        else:
            metavar = f" {action.dest.upper()}"
    return ", ".join(f"`{name}{metavar}`" for name in action.option_strings)


def _command_section(name: str, parser: argparse.ArgumentParser) -> str:
    formatter = _formatter(parser)
    formatter.add_usage(parser.usage, parser._actions, parser._mutually_exclusive_groups, prefix="")
    lines = [f"## td2048 {name}", "", "```text", formatter.format_help().strip(), "```", ""]
    for paragraph in (parser.description or "").split("\n\n"):
        if paragraph.strip():
            lines += [_escape(paragraph), ""]
    lines += ["| argument | what it does |", "|---|---|"]
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction) or action.help == argparse.SUPPRESS:
            continue
        help_text = _formatter(parser)._expand_help(action) if action.help else ""
        lines.append(f"| {_names(action)} | {_escape(help_text)} |")
    return "\n".join(lines) + "\n"


def cli_reference() -> str:
    """Markdown for every command of ``td2048``, in the order ``td2048 --help`` lists them."""
    from td2048.cli.__main__ import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return "\n".join(_command_section(name, p) for name, p in sub.choices.items())


def on_page_markdown(markdown: str, page, **_kwargs) -> str:
    if MARKER in markdown:
        markdown = markdown.replace(MARKER, cli_reference())
    return markdown
