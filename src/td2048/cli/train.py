"""``td2048 train``: TD(0) training with the block table on stdout and a run directory on disk."""

from __future__ import annotations

import argparse
import datetime as dt
import os
import shlex
import signal
import sys
import time
from pathlib import Path

from td2048.cli import invoked_as
from td2048.cli.options import (
    add_board_argument,
    add_game_argument,
    add_network_arguments,
    merge_seconds_arg,
    nonnegative_float_arg,
    nonnegative_int_arg,
    positive_float_arg,
    positive_int_arg,
    score_at_arg,
    share_at_arg,
    tile_at_arg,
)
from td2048.cli.progress import Progress
from td2048.cli.run_text import next_steps, run_header
from td2048.config import (
    DEFAULT_ALPHA,
    DEFAULT_BLOCK,
    DEFAULT_EPISODES,
    DEFAULT_SNAPSHOT_EVERY,
    DEFAULT_SYNC_SECONDS,
)
from td2048.errors import TD2048Error
from td2048.games.shape import BoardShape
from td2048.games.tiles import WIN_TILE
from td2048.io.model import read_model
from td2048.io.rundir import STARTS
from td2048.learning_options import TARGETS
from td2048.machine import available_memory
from td2048.presets import default_network
from td2048.recipes import peak_memory, recipe, recipes
from td2048.settings import MERGE_OFF, TrainSettings
from td2048.spec import METHODS, WEIGHT_BITS, WEIGHT_LIMIT, WEIGHT_STEP, format_bytes
from td2048.start_over import MAX_STARTS

EXACT_OFF = "off"  # --exact's word, with --resume, for no more exact valuations
SAME_REQUEST_SECONDS = 1.0  # signals this close together are one request to stop

HELP = "train an n-tuple network by TD learning (afterstate or state values)"
DESCRIPTION = """\
Train an n-tuple network for 2048 (or 2584, --game 2584) by TD(0) learning of afterstate values.

Each episode is played greedily (argmax over legal moves of reward + V(afterstate)), then
the afterstates are updated toward r' + V(next afterstate), 0 at the end of the game.
With --method state, V values the states after the new tile instead: a move is chosen by
reward + E[V(next state)], the expectation over every empty cell and both new tiles
(p 0.9 / 0.1), and a state is updated toward r + V(next state), 0 for the last state.
That costs one evaluation per empty cell and tile: several times slower per move.
The learning rate is split evenly over all features: every feature weight moves by
alpha / (tuples x isomorphisms) of the TD error (the course demo's convention; with the
4x6 network and 8 isomorphisms, alpha 0.1 is 0.1/32 per weight).

On the small boards (2x2, 2x3, 2x4, 3x3 and their transposes) and 4x3 a run that names no
--network trains the board's recipe (td2048.recipes): the network, method and length that come
closest to perfect play from play alone (on 2x2 and 2x3 a whole-board network with --target
expected, alpha 1 and optimistic values: perfect play, or within 0.01% of it; on 2x4 the whole
board with expected targets for every move, on two threads; on 3x3 the same on the whole board
clamped at 512, 3.73 GiB, started from a 2x6 network pretrained by TD(0), --pretrain, or where
that does not fit the memory free, on one tuple of 8 of the 9 cells, 382 MiB; on 4x3 TC on six
7-cell tuples in two stages, 8.43 GiB, its start checked, or where that does not fit, on the
board's 4x6 and two 7-cell tuples); an option given overrides its part, and --episodes alone
shortens a pretraining in proportion.

Every --block episodes the block table is printed: episodes so far, avg and max score,
then per tile the share of the block's games that reached it and (in brackets) the share
that ended with it as the largest tile. On a terminal a progress bar runs below it.

The run directory holds settings.json, log.jsonl (one JSON object a block),
snapshot.td2048 (every 5 minutes, --snapshot-every), progress.png and, at the end,
model.td2048, which holds all the snapshot held and replaces it: a finished run keeps one
copy of its weights. Ctrl-C or SIGTERM finishes the block, saves, and tells how to resume;
a run killed in any other way resumes from its last snapshot with --resume DIR, and a
finished run trains on from its model with --resume DIR --episodes N. A run whose weights
diverge (a step too large: they are checked at most once a minute) stops with exit code 1 and
writes none of them. At the end, the commands to evaluate, watch, serve and plot the model are
printed.

With one thread, runs with the same --seed give identical weights, bit for bit.
With --threads N, N episodes are played at once, with every method: faster, but not
reproducible. The threads write the network's own weights (and TC's accumulators), without
locks, as TDL2048+'s do, and learn as much per episode as one thread; TD can instead learn
on a copy of the weights per thread, merged every --merge-every seconds. N may exceed the
cores.

With --ray [ADDRESS] --workers K, one run spreads over the nodes of a Ray cluster: each worker
learns on --threads threads of its own, and every --sync-every seconds the workers merge what they
changed (on the workers themselves; see td2048.kernels.exchange for the rule) and all go on from the
merged weights.
This process logs the blocks and writes the snapshots and the model; --resume works as above.

On a board small enough to solve (td2048 solve --board 2x3 --out FILE), --exact FILE values the
network's greedy policy exactly every --exact-every blocks and after the last (on --threads threads,
from the merged weights with --ray): the block table shows its expected score and the gap to the
optimum, and the log line an "exact" object (td2048 plot draws it against the optimum).
"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_game_argument(p, default=None)
    add_board_argument(p, default=None)
    add_network_arguments(p, default=None, memory_default=None)
    p.add_argument("--episodes", type=positive_int_arg, default=None,
                   help=f"episodes to train in all, counting those already done when resuming "
                        f"(default {DEFAULT_EPISODES})")
    p.add_argument("--alpha", type=positive_float_arg, default=None,
                   help=f"learning rate, split over tuples x isomorphisms (default {DEFAULT_ALPHA})")
    p.add_argument("--update", choices=("backward", "forward"), default=None,
                   help="backward: update after each episode from its end (default); forward: online")
    p.add_argument("--seed", type=nonnegative_int_arg, default=None,
                   help="random seed (default: drawn and recorded in settings.json)")
    p.add_argument("--block", type=positive_int_arg, default=None,
                   help=f"episodes per statistics block (default {DEFAULT_BLOCK})")
    p.add_argument("--threads", type=positive_int_arg, default=None,
                   help="episodes played at once (default 1), with every method: faster, but not reproducible. "
                        "The threads write the weights (and TC's accumulators) themselves, without locks")
    p.add_argument("--merge-every", type=merge_seconds_arg, default=None, metavar="SECONDS",
                   help="with --threads, TD on copies: each thread learns on a copy of the weights, and the "
                        "copies are merged every SECONDS of training (default: no copies, one table; TC always "
                        "shares the table). Copies write no memory that another thread writes, but learn less per "
                        "episode, optimistic TD markedly so. 'off': one table, as by default; with --resume, a run "
                        "made on copies goes on on one table")
    p.add_argument("--snapshot-every", default=None, metavar="N|TIME",
                   help=f"snapshot every N episodes, or every TIME of training such as 30s, 5m, 1h "
                        f"(default {DEFAULT_SNAPSHOT_EVERY})")
    p.add_argument("--lambda", dest="lam", type=float, default=None, metavar="L",
                   help="TD(lambda): targets are lambda-returns computed backward at the end of each episode "
                        "(0 = TD(0), the default; 1 = Monte-Carlo returns); needs --update backward")
    p.add_argument("--nstep", type=positive_int_arg, default=None, metavar="N",
                   help="n-step returns instead: r_t+1 + ... + r_t+n + V(s'_t+n) (1 = TD(0)); needs --update backward")
    p.add_argument("--alpha-schedule", default=None, metavar="SCHEDULE",
                   help="const (default); step:0.1@0,0.05@500000 (alpha from an episode on); invsqrt:T "
                        "(alpha / sqrt(1 + episodes / T)); the alpha of each block is in the log")
    p.add_argument("--explore", default=None, metavar="SCHEDULE",
                   help="epsilon-greedy exploration: const:0.01, linear:0.1:0:50000 (0.1 to 0 over 50,000 "
                        "episodes) or exp:1:0.0005:5000 (exp(-0.0005 n) for 5,000 episodes). Convention: "
                        "on-policy, explored moves are learned from as played (targets follow the moves made). "
                        "Greedy targets at explored moves (Q-learning style) made the 4x6 weights diverge "
                        "(see the experiments in docs/benchmarks/experiments.md)")
    p.add_argument("--method", choices=METHODS, default=None,
                   help="what V values: afterstate (after the move; default) or state (after the new tile, moves "
                        "chosen by the expectation over new tiles); recorded in the model")
    p.add_argument("--weight-bits", type=int, choices=WEIGHT_BITS, default=None,
                   help="32 (default): float32 weights; 16: whole steps of one point in 16 bits (half the memory, "
                        "faster on large networks; TD on 2048's afterstate values, one table); models are saved "
                        "as float32 either way")
    p.add_argument("--target", choices=TARGETS, default=None,
                   help="what an update moves V toward: sample (default), the next move's r + V (TD(0)); expected, "
                        "the mean over every new tile, with its probability, of the best move's r + V, each update "
                        "moving V by exactly alpha x the error (a whole-board network at alpha 1 from --optimistic "
                        "values learns perfect play: real-time dynamic programming); expected-all, the same for every "
                        "legal move's afterstate of each position played, not only the played one's (4x the work a "
                        "move; needs --update forward); ranked, expected targets for the played move, and each "
                        "position's moves ranked by their expected targets: the best one must lead each other by "
                        "what that one loses against it (a hinge loss on the moves, which greedy play needs; 4x the "
                        "work a move; needs --update forward; best started from a trained --init). No --lambda or "
                        "--nstep")
    p.add_argument("--teacher", default=None, metavar="SOLUTION",
                   help="distillation: a solution file of the run's board and game (td2048 solve --out); each "
                        "position played moves toward perfect play's exact value, by exactly --alpha x the error. "
                        "The greedy player so trained shows how close to perfect play the network can get")
    p.add_argument("--teacher-moves", type=float, default=None, metavar="P",
                   help="with --teacher: the share of episodes that follow perfect play's moves; the others follow "
                        "the network's own (default 0.5)")
    p.add_argument("--teacher-loss", choices=("value", "regret"), default=None,
                   help="with --teacher: what the network learns from the solution: value (default), each move's "
                        "afterstate moves toward its exact value; regret, only how it ranks the moves: perfect "
                        "play's move must lead each other move by what that move loses against it (a "
                        "cost-sensitive hinge loss; with --teacher-moves 0 it is learned on the network's own "
                        "games, where its sum bounds the player's exact gap). Start from a trained --init")
    p.add_argument("--endgame", default=None, metavar="TABLE",
                   help="an endgame's table of the run's board (td2048 solve --fixed ... --goal ...): in the "
                        "training games it chooses the moves of its endgame, as eval --endgame does, and the network "
                        "learns from them as played, so that its values before the endgame learn what the table "
                        "makes of it (the block's table gets an endgame line: the table's moves and episodes)")
    p.add_argument("--endgame-starts", type=float, default=None, metavar="Q",
                   help="with --endgame: the share of the episodes (of those not restarted) that start from the "
                        "endgame's start, its fixed tiles in an orientation drawn at random and two new tiles, so "
                        "that the table's games and the play after its goal are trained from the first block on "
                        "(left out of the block's statistics, as restarts are; default 0)")
    p.add_argument("--pretrain", default=None, metavar="NETWORK:EPISODES",
                   help="first train NETWORK (a preset or hex tuples of the board) by TD(0) for EPISODES episodes, in "
                        "the run directory's pretrain/, then start every weight of this run's network of one tuple "
                        "(the whole board, or most of it) from that network's value of the position that reads it: a "
                        "start close to the values, where --optimistic gives every position one value (e.g. "
                        "2x6:3000000 on 3x3)")
    p.add_argument("--optimistic", type=nonnegative_float_arg, default=None, metavar="V",
                   help="optimistic TD (OTD): every board starts at value V, each weight at V / (tuples x "
                        "isomorphisms), TDL2048+'s =V/norm (e.g. 320000): unseen boards look good and get tried")
    p.add_argument("--tc", action="store_true", default=None,
                   help="temporal coherence from the first episode: each weight's rate is |its accumulated "
                        "error| / its accumulated |error|, times --tc-alpha")
    p.add_argument("--tc-from", default=None, metavar="EPISODE|P%",
                   help="temporal coherence from this episode, or this share of --episodes, on (OTD then TC: "
                        "--optimistic 320000 --tc-from 90%%); before it, plain TD with --alpha")
    p.add_argument("--tc-alpha", type=positive_float_arg, default=None, metavar="A",
                   help="TC's meta rate, split over the features as --alpha is (default 1.0, TDL2048+'s)")
    p.add_argument("--tc-start-rate", type=float, default=None, metavar="R",
                   help="each weight's first TC rate, 0 < R <= 1. Default: after a TD phase (--tc-from) or from "
                        "--init's weights, --alpha / --tc-alpha (0.1), so TC goes on at the TD phase's step with no "
                        "fall at the switch; TC from the first episode of fresh weights, 1. R = 1 is TDL2048+'s "
                        "start (the first TC step is --tc-alpha's whole step). A model's own accumulators are kept")
    p.add_argument("--tc-records", action="store_true", default=None,
                   help="TC learns on records, each weight beside its two accumulators (one cache line an update, "
                        "TDL2048+'s layout; 3x the weights' memory more while it learns): faster on threads where "
                        "moving cache lines between cores is dear and the L3 cache large, slower where the L3 is "
                        "small (see the Scaling page); the same learning either way")
    p.add_argument("--stages", default=None, metavar="TILES",
                   help="multistage: one set of weights per stage; a board is in stage k once k thresholds are "
                        "on it: 16384 (2 stages), 8192,16384 (3), 16384+8192 (both tiles; TDL2048+'s 24576)")
    p.add_argument("--no-promotion", dest="promote", action="store_false", default=None,
                   help="multistage: a new stage starts from the initial weights, not from the previous stage's")
    p.add_argument("--promote-at", type=positive_int_arg, default=None, metavar="EPISODE",
                   help="multistage: the stages learn apart from fresh weights until this episode (of each start), "
                        "where each stage after the first becomes a copy of the one before it, its TC rates fresh at "
                        "--alpha / --tc-alpha (0.1, as after learned weights): promotion once the first stage plays "
                        "well, not at the first board of a stage")
    p.add_argument("--restarts", type=float, default=None, metavar="P",
                   help="start this share of episodes (0 <= P < 1) from boards kept from earlier games: each "
                        "game from the start keeps its first board with --restart-tile (the statistics count "
                        "only games from the start)")
    p.add_argument("--restart-tile", type=positive_int_arg, default=None, metavar="TILE",
                   help="the tile whose first board a game keeps for restarts (default: the first --stages "
                        "threshold's largest tile, else 2048, 2584 in 2584)")
    p.add_argument("--restart-beside", type=positive_int_arg, default=None, metavar="TILE",
                   help="with --restarts: a game keeps its first board that holds, beside the --restart-tile, a "
                        "second tile of at least TILE (e.g. 1024 beside a 2048), so that restarts begin nearer "
                        "the next tile (Jaskowski's carousel shaping)")
    p.add_argument("--start-over-below", type=score_at_arg, default=None, metavar="SCORE[@EPISODE]",
                   help="throw a start away when its block that ends at EPISODE (default: --start-over-at) "
                        "averages below SCORE, and start over from fresh weights (its random stream goes on), at "
                        "most --max-starts starts in all, the last kept whatever it scores; the starts thrown away "
                        "are logged in starts.jsonl. For methods whose starts split into good and bad ones, as the "
                        "4x3 recipe's do")
    p.add_argument("--start-over-without", type=tile_at_arg, default=None, metavar="TILE[@EPISODE]",
                   help="throw a start away, as --start-over-below does, when no game of its first EPISODE "
                        "episodes (default: --start-over-at) built TILE (restarted games left out); with both, a "
                        "start passes both, each at its episode (e.g. 11200@50000 and 4096@100000: a start that "
                        "averages too little is thrown away at 50,000 episodes, not played on to 100,000)")
    p.add_argument("--start-over-corner-below", type=share_at_arg, default=None, metavar="SHARE[@EPISODE]",
                   help="with --restarts: throw a start away, as --start-over-below does, when less than SHARE "
                        "(0 to 1) of the boards kept for restarts in its block that ends at EPISODE (default: "
                        "--start-over-at) hold their largest tile in a corner: the games build their restart tile "
                        "off the corners (on 4x3 such starts never build a 4096; the log's \"corner\" is each "
                        "block's share)")
    p.add_argument("--start-over-at", type=positive_int_arg, default=None, metavar="EPISODE",
                   help="with a start check: the episode, of each start, where a check that names no episode of "
                        "its own is made (a block ends there; default: the first block's end)")
    p.add_argument("--max-starts", type=positive_int_arg, default=None, metavar="N",
                   help=f"with a start check: the most starts the run makes, the last kept whatever it scores "
                        f"(default: {MAX_STARTS})")
    p.add_argument("--time-limit", default=None, metavar="TIME",
                   help="train at most TIME (90s, 30m, 1.5h) of training: the blocks' time, the starts thrown away "
                        "included, not the time to start, snapshot or save; the run ends at --episodes or there, "
                        "whichever comes first, its last block cut to fit at the pace of the block before "
                        "(default: no limit). A resumed run goes on to its limit: give a larger one, or 'off'")
    p.add_argument("--ray", nargs="?", const="", default=None, metavar="ADDRESS",
                   help="train on Ray workers: a new local Ray instance, or the cluster at ADDRESS ('auto', "
                        "host:6379, ray://host:10001); each worker learns on --threads threads of its own and the "
                        "workers sync every --sync-every seconds; needs pip install 'td2048[ray]'")
    p.add_argument("--workers", type=positive_int_arg, default=None, metavar="K",
                   help="with --ray: worker processes (default: the cluster's CPUs / --threads)")
    p.add_argument("--sync-every", type=positive_float_arg, default=None, metavar="SECONDS",
                   help=f"with --ray: seconds of learning between syncs of the workers (default "
                        f"{DEFAULT_SYNC_SECONDS:g})")
    p.add_argument("--exact", default=None, metavar="SOLUTION",
                   help="a solution file of the run's board and game (td2048 solve --out): every --exact-every "
                        "blocks and after the last, the network's greedy policy is valued exactly against it; the "
                        "expected score and the gap to the optimum go into the block table and the log's \"exact\" "
                        "object. With --resume, another file of the same board and game may be given, or 'off'")
    p.add_argument("--exact-every", type=positive_int_arg, default=None, metavar="N",
                   help="with --exact: blocks between exact valuations (default 1)")
    p.add_argument("--init", default=None, metavar="MODEL", help="start from a trained model instead of zeros")
    p.add_argument("--out", type=Path, default=None,
                   help="run directory (default runs/NETWORK-DATE-TIME); must not hold a run already")
    p.add_argument("--resume", type=Path, default=None, metavar="DIR",
                   help="continue the run in DIR from its last snapshot, or from its model once it finished or was "
                        "stopped (--episodes N to train a finished run further; options given override its "
                        "settings)")
    p.add_argument("--quiet", action="store_true", help="print nothing but errors")


_SETTING_OPTIONS = ("game", "cells", "network", "isomorphisms", "clamp", "episodes", "alpha", "update", "seed", "block",
                    "threads", "snapshot_every", "memory_limit", "init", "lam", "nstep", "alpha_schedule",
                    "explore", "method", "weight_bits", "merge_every", "optimistic", "stages", "promote", "promote_at",
                    "tc_from", "tc_alpha", "tc_start_rate", "tc_records", "restarts", "restart_tile", "restart_beside",
                    "sync_every", "board", "exact", "exact_every", "target", "teacher", "teacher_moves", "teacher_loss",
                    "endgame", "endgame_starts", "pretrain", "start_over_below", "start_over_without",
                    "start_over_corner_below", "start_over_at", "max_starts", "time_limit")


class _Output:
    """print for the run's tables; if the reader goes away (``td2048 train ... | head``), training
    goes on silently to its end and saves, rather than dying with the pipe and losing the run."""

    def __init__(self, quiet: bool):
        self.quiet = quiet

    def __call__(self, *args, **kwargs) -> None:
        if self.quiet:
            return
        try:
            print(*args, **kwargs)
        except BrokenPipeError:
            self.quiet = True
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())  # nothing left to flush into the closed pipe at exit
            os.close(devnull)


class _StopRequest:
    """Ctrl-C or SIGTERM: finish the running block, save, and exit cleanly. A second one stops at once, unless it
    comes within :data:`SAME_REQUEST_SECONDS` of the first: ``timeout`` and service managers signal the process
    and then its group, one request arriving twice, which must not lose the run's last minutes."""

    def __init__(self):
        self.requested = False
        self.when = 0.0

    def __call__(self, signum, frame):
        if self.requested:
            if time.monotonic() - self.when < SAME_REQUEST_SECONDS:
                return
            raise KeyboardInterrupt  # a second Ctrl-C stops at once
        self.requested, self.when = True, time.monotonic()
        sys.stderr.write("\ntd2048 train: stopping after this block (Ctrl-C again to abort at once)\n")


def _recipe_that_fits(board: str, game: str, quiet: bool = True) -> dict:
    """The board's best recipe that fits the memory free now, said in a line when it is not the best one.

    Raises
    ------
    TD2048Error
        When the board has recipes and none fits: one line with a command that does.
    """
    plans = recipes(board, game)
    free = available_memory()
    if not plans or free is None:
        return plans[0] if plans else {}
    plan = recipe(board, game, memory=free)
    if not plan:
        smallest = min(plans, key=lambda p: peak_memory(p, board, game))
        raise TD2048Error(f"the {board} recipes need {format_bytes(peak_memory(smallest, board, game))} of memory "
                          f"and {format_bytes(free)} is free: name a smaller network, e.g. td2048 train --board "
                          f"{board} --network {default_network(BoardShape.parse(board))}")
    if plan != plans[0] and not quiet:
        best = plans[0]
        print(f"# the {board} recipe (network {best['network']}) holds up to "
              f"{format_bytes(peak_memory(best, board, game))} and {format_bytes(free)} of memory is free: "
              f"training the recipe that fits, network {plan['network']} "
              f"({format_bytes(peak_memory(plan, board, game))} at most)", flush=True)
    return plan


def _new_settings(given: dict, quiet: bool = True) -> TrainSettings:
    """The settings of a new run, checked."""
    if "init" in given:  # train the game, and the kind of values, the model was made for
        header = read_model(given["init"])[0]
        given.setdefault("game", header.get("game", "2048"))
        given.setdefault("method", header.get("method", "afterstate"))
    if "network" not in given and "init" not in given:  # each board has its own default network: its recipe's
        board = BoardShape.parse(given.get("board", "4x4"))
        plan = _recipe_that_fits(board.name, given.get("game", "2048"), quiet)
        if "teacher" in given:  # distillation measures the recipe's network, not its way of learning
            kept = ("network", "clamp", "isomorphisms", "memory_limit")
            plan = {key: value for key, value in plan.items() if key in kept}
        if "episodes" in given and "pretrain" in plan and "pretrain" not in given:  # a pretraining in proportion
            network, episodes = plan["pretrain"].rsplit(":", 1)
            share = min(1.0, given["episodes"] / plan["episodes"])
            plan["pretrain"] = f"{network}:{max(1000, round(int(episodes) * share))}"
        for key, value in plan.items():
            given.setdefault(key, value)
        given.setdefault("network", default_network(board))
    settings = TrainSettings(**given)
    if settings.init is not None and "network" not in given:
        settings.network = None  # taken from the model
    settings.validate()
    return settings


def run(args: argparse.Namespace) -> int:
    given = {k: getattr(args, k) for k in _SETTING_OPTIONS if getattr(args, k) is not None}
    for check in ("start_over_below", "start_over_without", "start_over_corner_below"):  # VALUE[@EPISODE]
        if check in given:
            given[check], at = given[check]
            if at is not None:
                given[f"{check}_at"] = at
    if args.tc:
        if args.tc_from is not None:
            raise TD2048Error("--tc is TC from the first episode; --tc-from starts it later: give one of them")
        given["tc_from"] = "0"
    if args.resume is not None and args.out is not None and args.out.resolve() != args.resume.resolve():
        raise TD2048Error("--out and --resume name different directories")
    if args.ray is None and (args.workers is not None or args.sync_every is not None):
        raise TD2048Error("--workers and --sync-every are for training on Ray workers: add --ray [ADDRESS]")
    if args.ray is not None and args.tc_records:
        raise TD2048Error("--tc-records is for TC on this machine's threads: Ray workers' TC flags the weights it "
                          "changes for their syncs, on the network's own arrays")
    if args.merge_every == MERGE_OFF:  # one table: the default of a new run, a change for a resumed one
        given["merge_every"] = None
    elif args.merge_every is not None and args.resume is None:
        if given.get("threads", 1) < 2:
            raise TD2048Error("--merge-every gives TD's threads a copy of the weights each: add --threads N (N >= 2)")
        if given.get("tc_from") == "0":
            raise TD2048Error("--merge-every is for TD on copies; with --tc every episode is TC, whose threads "
                              "share one table")
    if args.exact is not None and args.exact.strip().lower() == EXACT_OFF:
        if args.resume is None:
            raise TD2048Error("--exact off stops a resumed run's exact valuations: a new run has none to stop")
        if args.exact_every is not None:
            raise TD2048Error("--exact off stops the exact valuations: leave out --exact-every")
        given["exact"] = given["exact_every"] = None
    if args.time_limit is not None and args.time_limit.strip().lower() == "off":
        if args.resume is None:
            raise TD2048Error("--time-limit off lifts a resumed run's limit: a new run has none to lift")
        given["time_limit"] = None
    if args.ray is not None:
        given["workers"] = args.workers or 1  # set from the cluster once connected
    elif args.resume is not None:
        given["workers"] = 0  # a run trained on Ray goes on in this process
    settings = None if args.resume is not None else _new_settings(given, quiet=args.quiet)
    from td2048.run import TrainingRun, local_learner  # the options are good: now the compiled code

    factory, connected = local_learner, False
    if args.ray is not None:
        factory, connected = _connect_ray(args, given)
        if settings is not None:
            settings.workers = given["workers"]
    try:
        if settings is None:
            training = TrainingRun.resume(args.resume, given, learner_factory=factory)
        else:
            name = settings.spec().name if settings.network else "init"
            name = f"{settings.game}-{name}" if settings.game != "2048" else name
            out = args.out or Path("runs") / f"{name.replace('/', '-')}-{dt.datetime.now():%Y%m%d-%H%M%S}"
            training = TrainingRun.create(out, settings, learner_factory=factory)
        return _train(args, training, factory)
    finally:
        if connected:
            import ray

            ray.shutdown()


def _connect_ray(args: argparse.Namespace, given: dict):
    """Connect to Ray for --ray; ``given["workers"]`` becomes --workers or the cluster's CPUs / threads.
    Returns (the learner factory, whether this call connected)."""
    from td2048.distributed.cluster import connect_ray
    from td2048.distributed.ray_train import ray_learner

    threads = given.get("threads", 1)
    if args.resume is not None and "threads" not in given:
        threads = _saved_setting(args.resume, "threads", 1)
    local_cpus = None
    if not args.ray and args.workers is not None:  # a local instance: room for every worker asked for
        local_cpus = max(os.cpu_count() or 1, args.workers * threads)
    connected = connect_ray(args.ray or None, local_cpus)
    if args.workers is None:
        import ray

        given["workers"] = max(1, int(ray.cluster_resources().get("CPU", 1)) // threads)
    return ray_learner, connected


def _saved_setting(directory: Path, key: str, default):
    """A setting of the run in ``directory`` (its settings.json), or ``default``."""
    import json

    from td2048.io.rundir import SETTINGS

    try:
        return json.loads((directory / SETTINGS).read_text()).get(key, default)
    except (OSError, ValueError):
        return default


def _train(args: argparse.Namespace, training, factory) -> int:
    """Train ``training`` (after its pretraining, if any) to its end or to Ctrl-C, printing the block tables."""
    settings, out = training.settings, training.directory
    say = _Output(quiet=args.quiet)
    stop = _StopRequest()
    previous = {s: signal.signal(s, stop) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        pretraining = training.pretraining(factory)
        if pretraining is not None:
            verb = f"pretraining, resuming at episode {pretraining.done}" if pretraining.done else "pretraining"
            say(run_header(pretraining, verb), flush=True)
            _blocks(args, pretraining, say, stop)
            if stop.requested and pretraining.done < pretraining.settings.episodes:
                say(f"# stopped after {pretraining.done} episodes of pretraining, saved in {pretraining.directory}")
                say(f"# resume with: {invoked_as()} train --resume {shlex.quote(str(out))}")
                return 0
        verb = f"resuming at episode {training.done}" if args.resume and training.done else "train"
        say(run_header(training, verb), flush=True)
        note = training.network.spec.repeats_note()
        if note and not args.quiet:
            print(f"td2048 train: note: {note}", file=sys.stderr, flush=True)
        if settings.pretrain is not None and training.done == 0:
            spec = training.network.spec
            say(f"# starting the {spec.n_weights:,} weights from the values of network "
                f"{settings.pretrain_plan()[0]} (one pass over the table)", flush=True)
        model = _blocks(args, training, say, stop)
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
        if settings.workers:
            training.learner.close()

    if stop.requested and training.done < settings.episodes:
        say(f"# stopped after {training.done} episodes; model saved to {model}")
        say(f"# resume with: {invoked_as()} train --resume {shlex.quote(str(out))}")
    else:
        done = f"# done: {training.done} episodes"
        if training.done < settings.episodes:  # not stopped: the time limit ended it
            spent = (f"{training.seconds:.1f} seconds" if training.seconds < 120
                     else f"{training.seconds / 60:.1f} minutes")
            done += f" in the time limit of {settings.time_limit} ({spent} of training)"
        if training.plot_error is None:
            say(f"{done}; model saved to {model}, curves in {out / 'progress.png'}")
        else:
            say(f"{done}; model saved to {model}")
        say("\n".join(next_steps(model, out, plot=training.plot_error is None)))
    return 0


def _blocks(args: argparse.Namespace, training, say: _Output, stop: _StopRequest) -> Path:
    """Train a run's blocks, each a table printed, until its end or ``stop``; save and return its model."""
    progress = Progress(training.settings.episodes, training.done, enabled=not args.quiet and sys.stdout.isatty(),
                        win_tile=WIN_TILE[training.settings.game])
    for stats in training.blocks(stop=lambda: stop.requested):
        progress.clear()
        say(stats.table(), flush=True)
        if stats.extra.get("start_over"):
            say(f"# start {training.start - 1}: {stats.extra['start_over']}; starting over from fresh weights "
                f"(start {training.start} of at most {training.settings.max_starts}; the blocks thrown away are in "
                f"{training.directory / STARTS})\n", flush=True)
            progress = Progress(training.settings.episodes, 0, enabled=progress.enabled,
                                win_tile=WIN_TILE[training.settings.game])
            continue
        if stats.extra.get("promoted"):
            say(f"# episode {stats.episodes}: each stage after the first is now a copy of the one before it "
                "(--promote-at)\n", flush=True)
        progress.update(stats)
    progress.clear()
    saturated = training.network.saturated_weights()
    if saturated:  # 16-bit weights held at the limit: the network may want 32 bits
        say(f"# {saturated} weights reached the 16-bit limit (+-{WEIGHT_LIMIT * WEIGHT_STEP:,g} points) and were "
            "held there: --weight-bits 32 holds them\n", flush=True)
    return training.finish()
