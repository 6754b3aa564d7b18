"""MkDocs hook: the command-line reference, generated from td2048's own argparse parser.

A page that holds the line ``<!-- td2048-cli -->`` gets, in its place, one section per command:
its description, its usage line and a table of its arguments (help texts and defaults as
``td2048 COMMAND --help`` prints them). The options are written once, in ``td2048.cli``.
"""

from __future__ import annotations

import argparse
import html

MARKER = "<!-- td2048-cli -->"


def _cell(text: str) -> str:
    return html.escape(" ".join(text.split())).replace("|", "\\|")


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
    usage = " ".join(parser.format_usage().split())
    lines = [f"## td2048 {name}", ""]
    if parser.description:
        lines += ["```text", parser.description.rstrip(), "```", ""]
    lines += ["```text", usage.removeprefix("usage: "), "```", "", "| argument | what it does |", "|---|---|"]
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        lines.append(f"| {_names(action)} | {_cell(action.help or '')} |")
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
