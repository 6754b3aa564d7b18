"""``td2048 convert``: between td2048 model files, the course demo's weight files and TDL2048+'s."""

from __future__ import annotations

import argparse
from pathlib import Path

from td2048.cli.options import require_4x4
from td2048.errors import TD2048Error
from td2048.io.demo import read_demo_weights, write_demo_weights
from td2048.io.model import EXTENSION, load_model, save_model
from td2048.io.tdl import read_tdl_weights, write_tdl_weights

HELP = "convert between .td2048 models, the course demo's .bin and TDL2048+'s .w weight files"
DESCRIPTION = """\
Convert a model between td2048's .td2048 format and another program's weight file; the
direction follows the extensions, one side being .td2048:
  .bin  the course demo's (u64 feature count, then per feature its name, entry count and
        float32 weights)
  .w    TDL2048+'s (its 4x6patt is td2048's 4x6, 8x6patt its 8x6, or any list of hex
        patterns); play it there with: 2048 -n 4x6patt -i FILE.w -e 1000 (-d 2p for search);
        a TC run's accumulators (TDL2048+'s -a 1.0) come along both ways
Imported networks are 2048 afterstate networks over 8 isomorphisms; exported ones must be.
From .td2048 to .td2048 with --playing: a model for playing only, without TC's accumulators
(a third of the size; training on from it starts TC afresh).
"""

READERS = {".bin": read_demo_weights, ".w": read_tdl_weights}
WRITERS = {".bin": write_demo_weights, ".w": write_tdl_weights}


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("input", type=Path, help="IN.td2048 (or IN.td2048.xz, compressed), IN.bin or IN.w")
    p.add_argument("output", type=Path, help="OUT.bin, OUT.w or OUT.td2048")
    p.add_argument("--playing", action="store_true",
                   help=".td2048 to .td2048: drop what only training needs (TC's accumulators)")


def _kind(path: Path) -> str:
    """The format a file name says: its extension; a compressed model (``.td2048.xz``) reads as a model."""
    suffixes = [s.lower() for s in path.suffixes[-2:]]
    return EXTENSION if suffixes == [EXTENSION, ".xz"] else path.suffix.lower()


def run(args: argparse.Namespace) -> int:
    src, dst = _kind(args.input), args.output.suffix.lower()
    if src in READERS and dst == EXTENSION:
        network = READERS[src](args.input)
        save_model(args.output, network, training={"converted_from": str(args.input)})
    elif src == dst == EXTENSION and args.playing:
        network, header = load_model(args.input)
        network.accumulators = None
        save_model(args.output, network, training={**header.get("training", {}), "playing_copy_of": str(args.input)})
    elif src == EXTENSION and dst in WRITERS:
        network, _ = load_model(args.input)
        require_4x4(network, f"{dst} files (the course demo's and TDL2048+'s weights) hold networks")
        WRITERS[dst](args.output, network)
    else:
        raise TD2048Error(f"cannot tell the direction from {args.input.name} -> {args.output.name}: "
                          f"one side must be {EXTENSION}, the other .bin or .w (or both {EXTENSION} with --playing)")
    tc = ", with TC's accumulators" if network.accumulators is not None else ""
    print(f"{args.input} -> {args.output}: {network.spec.describe(network.game)}{tc}")
    return 0
