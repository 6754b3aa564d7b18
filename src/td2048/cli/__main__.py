"""``td2048 COMMAND ...``: parse, dispatch, and the one error boundary.

Exit codes: 0 success, 1 a check that failed, 2 bad input or usage. A :class:`TD2048Error`
becomes one line on stderr; so does an argparse error (no usage dump).
"""

from __future__ import annotations

import argparse
import sys

from td2048.cli import analyze, bench, convert, judge, plot, replay, serve, sweep, train, watch
from td2048.cli import eval as eval_command
from td2048.errors import TD2048Error
from td2048.version import __version__

COMMANDS = {"train": train, "eval": eval_command, "analyze": analyze, "plot": plot, "judge": judge,
            "convert": convert, "bench": bench, "watch": watch, "replay": replay, "sweep": sweep, "serve": serve}


class OneLineParser(argparse.ArgumentParser):
    """Usage errors as one line and exit code 2."""

    def error(self, message):
        sys.stderr.write(f"{self.prog}: error: {message} (see {self.prog} --help)\n")
        sys.exit(2)


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="td2048", description="TD learning of n-tuple networks for 2048.")
    parser.add_argument("--version", action="version", version=f"td2048 {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=OneLineParser)
    for name, module in COMMANDS.items():
        p = sub.add_parser(name, help=module.HELP, description=module.DESCRIPTION,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
        module.add_arguments(p)
        p.set_defaults(run=module.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except TD2048Error as e:
        sys.stderr.write(f"td2048 {args.command}: error: {e}\n")
        return 2
    except KeyboardInterrupt:
        sys.stderr.write(f"td2048 {args.command}: interrupted\n")
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
