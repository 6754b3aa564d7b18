"""How far from perfect play TD learning gets on a solved board: the runs and tables of docs/research/perfect-play.md.

    td2048 solve --board 3x3 --out 3x3.solution
    python benchmarks/perfect_gap.py train --solution 3x3.solution --out runs/gap --jobs 2
    python benchmarks/perfect_gap.py search --solution 3x3.solution --out runs/gap --depth 2
    python benchmarks/perfect_gap.py report --solution 3x3.solution --out runs/gap \\
        --plot docs/images/perfect-gap-3x3.png

``train`` runs every method x network (:data:`METHODS`, :data:`NETWORKS`) with ``td2048 train --exact
SOLUTION`` to each of ``--points`` episodes in turn (resumed each time, its greedy policy valued exactly, up
to symmetry, at each), ``--jobs`` at a time, one thread each; a run goes on from where its log ends.
``search`` values each run's final model at a search depth (``td2048 eval --exact --symmetric --depth D``).
``report`` prints Markdown tables: per run, the smallest gap reached and the episodes and training minutes
(valuations not counted) to come within 1% and 0.1% of the optimal expected score; the final models at each
depth searched. ``--plot`` draws the gap against episodes, one line per run.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import subprocess
import sys
from pathlib import Path

# (label, network, extra train options): each trained with the same episodes, blocks and seed
METHODS = {
    "TD(0)": (),
    "TD(0), alpha 0.025": ("--alpha", "0.025"),
    "TC": ("--tc",),
    "OTD": ("--optimistic", "10000"),
}
# label -> its options: the board's two presets, and two 7-cell tuples clamped at 1024 (which loses nothing on
# 3x3: perfect play reaches 1024 in 1% of games and never 2048), 11**7 weights a table
NETWORKS = {"3x3": ("--network", "3x3"), "2x6": ("--network", "2x6"),
            "2x7": ("--network", "0123456,0123467", "--clamp", "10")}
THRESHOLDS = (0.2, 0.01, 0.001)


def runs(only: list[str] | None = None, ppo: bool = False) -> list[tuple[str, str, tuple[str, ...]]]:
    out = [(f"{method} {network}", network, net + options) for network, net in NETWORKS.items()
           for method, options in METHODS.items()]
    if ppo:
        out.append(("MaskablePPO", "", ()))
    return [r for r in out if not only or r[0] in only]


def slug(label: str) -> str:
    return "".join(ch if ch.isalnum() else "-" for ch in label).strip("-").replace("--", "-")


def td2048(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "td2048.cli", *map(str, args)], capture_output=True, text=True)


def train(args) -> None:
    """Each run trained to each of ``--points`` episodes in turn (a resume each time: one thread, so the same
    run as uninterrupted) and valued exactly at each (``--exact``, valued after the last block)."""
    points = sorted(int(float(x)) for x in args.points.split(","))

    def one(run):
        label, network, options = run
        where = args.out / slug(label)
        done = json.loads((where / "log.jsonl").read_text().splitlines()[-1])["episodes"] \
            if (where / "log.jsonl").exists() else 0
        for target in points:
            if target <= done:
                continue
            if done == 0:
                r = td2048("train", "--board", args.board, *options, "--episodes", target,
                           "--block", args.block, "--seed", args.seed, "--exact", args.solution, "--exact-every",
                           10**9, "--out", where, "--quiet")
            else:
                r = td2048("train", "--resume", where, "--episodes", target, "--quiet")
            if r.returncode:
                return f"{label}: exit {r.returncode} at {target:,} episodes: {r.stderr.strip()[-300:]}"
            done = target
            print(f"{label}: {target:,} episodes", flush=True)
        return f"{label}: done"

    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for line in pool.map(one, runs(args.only)):
            print(line, flush=True)


def search(args) -> None:
    for label, _, _ in runs(args.only):
        where = args.out / slug(label)
        out = where / f"depth{args.depth}.json"
        if out.exists() or not (where / "model.td2048").exists():
            continue
        r = td2048("eval", where / "model.td2048", "--exact", args.solution, "--symmetric", "--depth", args.depth,
                   "--threads", args.threads, "--json")
        if r.returncode:
            print(f"{label}: exit {r.returncode} {r.stderr.strip()[-300:]}", flush=True)
            continue
        out.write_text(r.stdout.strip().splitlines()[-1] + "\n")
        print(f"{label} depth {args.depth}: {json.loads(out.read_text())['expected_score']:,.2f}", flush=True)


def ppo(args) -> None:
    """MaskablePPO on the environments (a vector of 64 boards, ``--threads`` torch threads), valued exactly (as
    the boards are, not up to symmetry: its network is not symmetric) after each of ``--minutes`` of training;
    its log is written as a run's, one line a valuation."""
    import time

    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import VecMonitor, VecNormalize

    from td2048.envs.policy import board_policy
    from td2048.envs.sb3 import TileGameSB3VecEnv
    from td2048.solve import exact_policy_value, load_solution

    torch.set_num_threads(args.threads)
    solution = load_solution(args.solution)
    where = args.out / "MaskablePPO"
    where.mkdir(parents=True, exist_ok=True)
    size = solution.board.name
    boards = TileGameSB3VecEnv(64, game=solution.game, size=size)
    boards.seed(args.seed)
    monitor = VecMonitor(boards)
    env = VecNormalize(monitor, norm_obs=False, norm_reward=True)  # scores of hundreds: PPO's value scale
    model = MaskablePPO("MlpPolicy", env, n_steps=256, batch_size=2048, n_epochs=4, learning_rate=3e-4,
                        policy_kwargs={"net_arch": [256, 256]}, seed=args.seed)
    choose = board_policy(model, solution.game, size)
    trained = 0.0
    with (where / "log.jsonl").open("w") as log:
        for minutes in sorted(float(m) for m in args.minutes.split(",")):
            started = time.perf_counter()
            while trained + time.perf_counter() - started < 60 * minutes:
                model.learn(64 * 256 * 4, reset_num_timesteps=False)
            block = time.perf_counter() - started
            trained += block
            value = exact_policy_value(solution, choose)
            optimum = value.optimal_expected_score
            figures = {"expected_score": value.expected_score, "optimal_expected_score": optimum,
                       "loss": value.loss, "loss_share": value.loss / optimum,
                       "optimal_move_share": value.optimal_move_share, "moves": value.moves,
                       "positions": value.positions, "reach": {str(t): p for t, p in value.reach.items()}}
            line = {"episodes": int(monitor.episode_count), "steps": int(model.num_timesteps), "seconds": block,
                    "exact": figures}
            log.write(json.dumps(line) + "\n")
            log.flush()
            print(f"MaskablePPO: {minutes:g} min, {model.num_timesteps:,} steps: {value.expected_score:,.2f}",
                  flush=True)


def curve(where: Path) -> list[dict]:
    """The run's valuations: episodes, training seconds up to them, and the exact figures."""
    points, seconds = [], 0.0
    for line in (where / "log.jsonl").read_text().splitlines():
        block = json.loads(line)
        seconds += block["seconds"]
        if "exact" in block:
            points.append({**block["exact"], "episodes": block["episodes"], "training_seconds": seconds})
    return points


def first_within(points: list[dict], share: float) -> dict | None:
    return next((p for p in points if p["loss_share"] <= share), None)


def report(args) -> None:
    rows = [(label, curve(args.out / slug(label))) for label, _, _ in runs(args.only, ppo=True)
            if (args.out / slug(label) / "log.jsonl").exists()]
    print("| Method, network | Episodes (training minutes) | Exact score (gap) at the end | Smallest gap | "
          + " | ".join(f"Episodes (minutes) to {100 * t:g}%" for t in THRESHOLDS) + " |")
    print("|---|---:|---:|---:|" + "---:|" * len(THRESHOLDS))
    for label, points in rows:
        if not points:
            continue
        last, best = points[-1], min(points, key=lambda p: p["loss_share"])
        reached = []
        for t in THRESHOLDS:
            p = first_within(points, t)
            reached.append("not reached" if p is None else f"{p['episodes']:,} ({p['training_seconds'] / 60:.1f})")
        print(f"| {label} | {last['episodes']:,} ({last['training_seconds'] / 60:.1f}) "
              f"| {last['expected_score']:,.2f} ({100 * last['loss_share']:.2f}%) "
              f"| {100 * best['loss_share']:.2f}% at {best['episodes']:,} | " + " | ".join(reached) + " |")
    depths = sorted({int(p.stem[5:]) for label, _, _ in runs(args.only)
                     for p in (args.out / slug(label)).glob("depth*.json")})
    if depths:
        print()
        print("| Method, network (at the end) | " + " | ".join(f"Depth {d}" for d in depths) + " |")
        print("|---|" + "---:|" * len(depths))
        for label, _ in rows:
            if not any((args.out / slug(label) / f"depth{d}.json").exists() for d in depths):
                continue
            cells = []
            for d in depths:
                f = args.out / slug(label) / f"depth{d}.json"
                if f.exists():
                    data = json.loads(f.read_text())
                    share = data["loss"] / data["optimal_expected_score"]
                    cells.append(f"{data['expected_score']:,.2f} ({100 * share:.2f}%)")
                else:
                    cells.append("")
            print(f"| {label} | " + " | ".join(cells) + " |")
        print()
        print("Loss a game by stage (tile sum), as a share of the optimal expected score:")
        print()
        for d in depths:
            for label, _, _ in runs(args.only):
                f = args.out / slug(label) / f"depth{d}.json"
                if not f.exists():
                    continue
                data = json.loads(f.read_text())
                optimum = data["optimal_expected_score"]
                cells = " ".join(f"{st['from']}-{st['to'] - 1}: {100 * st['loss'] / optimum:.2f}%"
                                 for st in data["loss_by_stage"])
                print(f"- {label}, depth {d}: {cells}")
    if args.plot:
        plot(rows, args.plot)


def plot(rows, path: Path) -> None:
    import math

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    fig, ax = plt.subplots(figsize=(9, 4.8), dpi=110)
    colors = {method: f"C{i}" for i, method in enumerate(METHODS)}
    styles = {network: style for network, style in zip(NETWORKS, (":", "-", "--"), strict=False)}
    for label, points in rows:
        if not points:
            continue
        method, _, network = label.rpartition(" ")
        ax.plot([p["episodes"] for p in points], [100 * p["loss_share"] for p in points], label=label,
                color=colors.get(method, "black"), linestyle=styles.get(network, "-"), marker="o", markersize=3)
    ax.set_xscale("log")
    ax.set_yscale("log")
    # the axis fitted to the curves (a log axis from 0.1% would squeeze them into its top fifth): a threshold's
    # line only where it falls among them
    gaps = [100 * p["loss_share"] for _, points in rows for p in points]
    low, high = min(gaps) / 1.15, max(gaps) * 1.15
    ax.set_ylim(low, high)
    for t in THRESHOLDS:
        if low < 100 * t < high:
            ax.axhline(100 * t, color="grey", linewidth=0.6, linestyle=":")
    # labels all along the data: on an axis under a decade and a half (which may hold no decade's label) every
    # minor tick is labelled, with one more at 1.5 (15%, under 3x3's 20%); on a longer one 2, 3, 5 and 7
    labelled = (2, 3, 5, 7)
    if math.log10(high / low) < 1.5:
        labelled = (1.5, 2, 3, 4, 5, 6, 7, 8)
        ax.yaxis.set_minor_locator(matplotlib.ticker.LogLocator(subs=(*labelled, 9)))
    ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}%"))
    ax.yaxis.set_minor_formatter(matplotlib.ticker.FuncFormatter(
        lambda v, _: f"{v:g}%" if round(v / 10 ** math.floor(math.log10(v)), 1) in labelled else ""))
    ax.set_xlabel("episodes")
    ax.set_ylabel("exact gap to perfect play (% of the optimum)")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    ax.grid(alpha=0.3, which="both")
    fig.tight_layout()
    tmp = path.with_suffix(".tmp.png")
    fig.savefig(tmp)
    tmp.replace(path)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    for name in ("train", "search", "report", "ppo"):
        q = sub.add_parser(name)
        q.add_argument("--solution", type=Path, required=True)
        q.add_argument("--out", type=Path, required=True)
        q.add_argument("--only", nargs="*", help="run labels (default: every run)")
    t = sub.choices["train"]
    t.add_argument("--board", default="3x3")
    t.add_argument("--points", default="1e4,3e4,1e5,3e5,1e6,3e6",
                   help="the episodes at which each run is valued (multiples of --block)")
    t.add_argument("--block", type=int, default=10_000)
    t.add_argument("--seed", type=int, default=1)
    t.add_argument("--jobs", type=int, default=2)
    s = sub.choices["search"]
    s.add_argument("--depth", type=int, default=2)
    s.add_argument("--threads", type=int, default=2)
    sub.choices["report"].add_argument("--plot", type=Path)
    sub.choices["ppo"].add_argument("--minutes", default="2.5,5,10", help="training minutes at which to value it")
    sub.choices["ppo"].add_argument("--seed", type=int, default=1)
    sub.choices["ppo"].add_argument("--threads", type=int, default=1, help="torch's threads")
    args = p.parse_args()
    {"train": train, "search": search, "report": report, "ppo": ppo}[args.command](args)


if __name__ == "__main__":
    main()
