"""``td2048 COMMAND ...``: parse, dispatch, and the one error boundary.

Exit codes: 0 success, 1 a check that failed, 2 bad input or usage. A :class:`TD2048Error`
becomes one line on stderr and its ``exit_code`` (2; 1 for a run whose weights diverged); so does an
argparse error (no usage dump), with a "did you mean ...?" for a mistyped command, option or choice.
Plain ``td2048`` lists the commands (exit 2).
"""

from __future__ import annotations

import argparse
import difflib
import sys

from td2048.cli import analyze, bench, convert, judge, plot, replay, serve, solve, sweep, train, watch
from td2048.cli import eval as eval_command
from td2048.errors import TD2048Error
from td2048.version import __version__

COMMANDS = {"train": train, "eval": eval_command, "analyze": analyze, "plot": plot, "judge": judge,
            "convert": convert, "bench": bench, "watch": watch, "replay": replay, "sweep": sweep, "serve": serve,
            "solve": solve}


def did_you_mean(words: list[str], known) -> str:
    """The close matches of mistyped words among the known ones, as the end of an error message.

    Parameters
    ----------
    words : list of str
        What was typed: commands, options (``--name`` or ``--name=value``) or option values.
    known : iterable of str
        What would have been understood.

    Returns
    -------
    str
        ``"; did you mean --episodes?"`` (with ``(for WORD)`` after each match when several words have
        one), or ``""`` when none is close.
    """
    known = list(known)
    matches = [(word, close[0]) for word in words
               if (close := difflib.get_close_matches(word.split("=", 1)[0], known, n=1))]
    if not matches:
        return ""
    if len(matches) == 1:
        return f"; did you mean {matches[0][1]}?"
    return "; did you mean " + ", ".join(f"{match} (for {word})" for word, match in matches) + "?"


class OneLineParser(argparse.ArgumentParser):
    """Usage errors as one line and exit code 2, with a "did you mean ...?" for a mistyped command, option or
    choice (as Python 3.14's ``suggest_on_error``, which Python 3.11 lacks)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.suggest_on_error = False  # Python 3.14's own: this class suggests, once, on every Python
        self.commands: dict[str, argparse.ArgumentParser] = {}  # the subcommands' parsers, by name

    def error(self, message):
        sys.stderr.write(f"{self.prog}: error: {message} (see {self.prog} --help)\n")
        sys.exit(2)

    def _check_value(self, action, value):
        try:
            super()._check_value(action, value)
        except argparse.ArgumentError as e:
            choices = list(action.choices)
            if not isinstance(value, str) or not all(isinstance(c, str) for c in choices):
                raise
            raise argparse.ArgumentError(action, e.message + did_you_mean([value], choices)) from None

    def parse_args(self, args=None, namespace=None):
        namespace, extras = self.parse_known_args(args, namespace)
        if extras:  # told by the command's parser, with its options as the ones meant
            parser = self.commands.get(getattr(namespace, "command", None), self)
            options = [option for action in parser._actions for option in action.option_strings]
            unknown = [word for word in extras if word.startswith("-")]
            parser.error(f"unrecognized arguments: {' '.join(extras)}{did_you_mean(unknown, options)}")
        return namespace


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="td2048", description="TD learning of n-tuple networks for 2048.")
    parser.add_argument("--version", action="version", version=f"td2048 {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=OneLineParser)
    for name, module in COMMANDS.items():
        p = sub.add_parser(name, help=module.HELP, description=module.DESCRIPTION,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
        module.add_arguments(p)
        p.set_defaults(run=module.run)
    parser.commands = sub.choices
    return parser


def command_list() -> str:
    """What plain ``td2048`` prints: the usage, then every command with its one-line purpose."""
    width = max(map(len, COMMANDS))
    lines = [f"  {name:{width}}  {module.HELP}" for name, module in COMMANDS.items()]
    return ("usage: td2048 COMMAND [OPTIONS] (td2048 COMMAND --help: its options; td2048 --version)\n\ncommands:\n"
            + "\n".join(lines) + "\n")


def main(argv: list[str] | None = None) -> int:
    if not (sys.argv[1:] if argv is None else argv):  # plain td2048: what it can do, as a usage error
        sys.stderr.write(command_list())
        return 2
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except TD2048Error as e:
        sys.stderr.write(f"td2048 {args.command}: error: {e}\n")
        return e.exit_code
    except KeyboardInterrupt:
        sys.stderr.write(f"td2048 {args.command}: interrupted\n")
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
