"""``td2048 train``: TD(0) training with the block table on stdout and a run directory on disk."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import signal
import sys
from pathlib import Path

from td2048 import __version__
from td2048.cli.options import add_network_arguments, nonnegative_int_arg, positive_float_arg, positive_int_arg
from td2048.config import DEFAULT_ALPHA, DEFAULT_BLOCK, DEFAULT_EPISODES
from td2048.errors import TD2048Error
from td2048.io.atomic import ensure_writable_dir, write_text_atomic
from td2048.io.weights import save_weights
from td2048.learn import TrainSettings, train_blocks
from td2048.network import Network, parse_network

HELP = "train an n-tuple network by TD(0) on afterstates"
DESCRIPTION = """\
Train an n-tuple network for 2048 by TD(0) learning of afterstate values.

Each episode is played greedily (argmax over legal moves of reward + V(afterstate)), then
the afterstates are updated toward r' + V(next afterstate), 0 at the end of the game.
The learning rate is split evenly over all features: every feature weight moves by
alpha / (tuples x isomorphisms) of the TD error (the course demo's convention; with the
4x6 network and 8 isomorphisms, alpha 0.1 is 0.1/32 per weight).

Every --block episodes the block table is printed: episodes so far, avg and max score,
then per tile the share of the block's games that reached it and (in brackets) the share
that ended with it as the largest tile.

The run directory holds settings.json, log.jsonl (one JSON object a block) and, at the
end (or when stopped with Ctrl-C), weights.npz (format: see the README).
Runs with the same --seed give identical weights.
"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_network_arguments(p)
    p.add_argument("--episodes", type=positive_int_arg, default=DEFAULT_EPISODES,
                   help=f"episodes to train (default {DEFAULT_EPISODES})")
    p.add_argument("--alpha", type=positive_float_arg, default=DEFAULT_ALPHA,
                   help=f"learning rate, split over tuples x isomorphisms (default {DEFAULT_ALPHA})")
    p.add_argument("--update", choices=("backward", "forward"), default="backward",
                   help="backward: update after each episode from its end (default); forward: online")
    p.add_argument("--seed", type=nonnegative_int_arg, default=None,
                   help="random seed (default: drawn and recorded in settings.json)")
    p.add_argument("--block", type=positive_int_arg, default=DEFAULT_BLOCK,
                   help=f"episodes per statistics block (default {DEFAULT_BLOCK})")
    p.add_argument("--out", type=Path, default=None,
                   help="run directory (default runs/NETWORK-DATE-TIME); must not hold a run already")
    p.add_argument("--quiet", action="store_true", help="print nothing but errors")


class _StopRequest:
    """Ctrl-C or SIGTERM: finish the running block, save, and exit cleanly."""

    def __init__(self):
        self.requested = False

    def __call__(self, signum, frame):
        if self.requested:  # a second Ctrl-C stops at once
            raise KeyboardInterrupt
        self.requested = True
        sys.stderr.write("\ntd2048 train: stopping after this block (Ctrl-C again to abort at once)\n")


def run(args: argparse.Namespace) -> int:
    settings = TrainSettings(network=args.network, isomorphisms=args.isomorphisms, episodes=args.episodes,
                             alpha=args.alpha, update=args.update, seed=args.seed, block=args.block,
                             memory_limit=args.memory_limit)
    settings.validate()
    spec = parse_network(settings.network, settings.isomorphisms)
    spec.check_memory(settings.memory_limit)
    out = args.out or Path("runs") / f"{spec.name.replace('/', '-')}-{dt.datetime.now():%Y%m%d-%H%M%S}"
    out = ensure_writable_dir(out)
    log_path = out / "log.jsonl"
    if log_path.exists() and log_path.stat().st_size > 0:
        raise TD2048Error(f"{out} already holds a run (log.jsonl); choose another --out")
    network = Network(spec, memory_limit=settings.memory_limit)
    if settings.seed is None:
        import numpy as np
        settings.seed = int(np.random.SeedSequence().entropy % (2**63))
    started = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    write_text_atomic(out / "settings.json", json.dumps(
        {**settings.to_dict(), "network_spec": spec.to_dict(), "game": "2048", "td2048": __version__,
         "started": started}, indent=2) + "\n")

    say = (lambda *a, **k: None) if args.quiet else print
    say(f"# td2048 {__version__} train: {spec.describe()}; alpha {settings.alpha}, {settings.update} updates, "
        f"seed {settings.seed}, {settings.episodes} episodes -> {out}", flush=True)

    stop = _StopRequest()
    previous = {s: signal.signal(s, stop) for s in (signal.SIGINT, signal.SIGTERM)}
    episodes_done = 0
    try:
        with open(log_path, "a", encoding="utf-8") as log:
            for block in train_blocks(settings, network):
                episodes_done = block.stats.episodes
                log.write(json.dumps(block.stats.to_json()) + "\n")
                log.flush()
                say(block.stats.table(), flush=True)
                if stop.requested:
                    break
    except OSError as e:
        raise TD2048Error(f"cannot write {log_path}: {e.strerror or e}") from None
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)

    weights_path = out / "weights.npz"
    save_weights(weights_path, network, episodes=episodes_done, alpha=settings.alpha, update=settings.update,
                 seed=settings.seed, td2048=__version__, date=dt.datetime.now(dt.UTC).isoformat())
    if stop.requested:
        say(f"# stopped after {episodes_done} episodes; weights saved to {weights_path}")
    else:
        say(f"# done: {episodes_done} episodes; weights saved to {weights_path}")
    return 0
