"""``td2048 replay``: replay recorded games as an HTML page (being built)."""

from td2048.errors import TD2048Error

HELP = "replay recorded games as an HTML page"
DESCRIPTION = "Replay recorded games as an HTML page."


def add_arguments(parser):
    pass


def run(args) -> int:
    raise TD2048Error("not built yet")
