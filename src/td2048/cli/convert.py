"""``td2048 convert``: between td2048 model files and the course demo's binary weight files."""

from __future__ import annotations

import argparse
from pathlib import Path

from td2048.errors import TD2048Error
from td2048.io.demo import read_demo_weights, write_demo_weights
from td2048.io.model import EXTENSION, load_model, save_model

HELP = "convert between .td2048 models and the course demo's .bin weight files"
DESCRIPTION = """\
Convert a model between td2048's .td2048 format and the course demo's binary weight file
(.bin: u64 feature count, then per feature its name, entry count and float32 weights).
The direction follows the extensions: IN.bin -> OUT.td2048 imports a network trained
with the demo (8 isomorphisms, the tuples from the feature names); IN.td2048 -> OUT.bin
exports one the demo can load.
"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("input", type=Path, help="IN.td2048 or IN.bin")
    p.add_argument("output", type=Path, help="OUT.bin or OUT.td2048")


def run(args: argparse.Namespace) -> int:
    src, dst = args.input.suffix.lower(), args.output.suffix.lower()
    if src == ".bin" and dst == EXTENSION:
        network = read_demo_weights(args.input)
        save_model(args.output, network, training={"converted_from": str(args.input)})
    elif src == EXTENSION and dst == ".bin":
        network, _ = load_model(args.input)
        write_demo_weights(args.output, network)
    else:
        raise TD2048Error(f"cannot tell the direction from {args.input.name} -> {args.output.name}: "
                          f"one side must be {EXTENSION}, the other .bin")
    print(f"{args.input} -> {args.output}: {network.spec.describe()}")
    return 0
