"""``td2048 watch``: watch a model play in the terminal (being built)."""

from td2048.errors import TD2048Error

HELP = "watch a model play in the terminal"
DESCRIPTION = "Watch a model play in the terminal."


def add_arguments(parser):
    pass


def run(args) -> int:
    raise TD2048Error("not built yet")
