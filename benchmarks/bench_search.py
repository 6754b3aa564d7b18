"""Expectimax search side by side: td2048 eval --depth N against TDL2048+ -d Np on the same weights.

    python benchmarks/bench_search.py MODEL.td2048 --reference /tmp/tdl/2048 --depths 1,2,3 --games 1000,1000,200
    python benchmarks/bench_search.py MODEL.td2048 --depths 2,3 --games 200,20 --cost    # td2048's cost per move

MODEL must be a 2048 afterstate network over 8 isomorphisms (what TDL2048+ plays): the script
writes it as a TDL2048+ .w file next to a temporary directory and has both programs play the
same number of games from it at each depth, interleaved (each program in a fresh process;
rounds alternate which goes first). It prints, per depth and program, the average score, the
reach rates of 2048..16384 and moves/s, and the ratio of the speeds. --tt picks the
transposition-table setting of both sides: "none" (td2048 --tt-size 0; TDL2048+ without -c,
its default) or a size ("64MiB": td2048 --tt-size 64MiB, TDL2048+ -c 64M). --threads 2 runs
td2048 --threads 2 against TDL2048+ -p 2.

--cost prints, for td2048 alone, the time and the search nodes per move at each depth with
and without the table and with a depth limit (--limit, default 3,3,3,3,2: afterstates with 4 or
more empty cells searched 2 deep).

The reference is not part of td2048: build TDL2048+ from its own source with its own makefile.
"""

from __future__ import annotations

import argparse
import datetime
import json
import platform
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from td2048.stats import reach_rate

TILES = (2048, 4096, 8192, 16384, 32768)
SUMMARY = re.compile(r"^summary\s+\d+ms\s+([0-9.]+)ops", re.MULTILINE)
TOTAL = re.compile(r"^total:\s+avg=(\d+)", re.MULTILINE)
ROW = re.compile(r"^(\d+)\s+(\d+)\s+\d+\s+\d+\s+[0-9.]+%\s+([0-9.]+)%\s*$", re.MULTILINE)


def run_td2048(model: Path, depth: int, games: int, threads: int, tt: str, seed: int,
               limit: str | None = None) -> dict:
    cmd = [sys.executable, "-m", "td2048.cli", "eval", str(model), "--depth", str(depth), "--games", str(games),
           "--threads", str(threads), "--seed", str(seed), "--json", "--tt-size", "0" if tt == "none" else tt]
    if limit:
        cmd += ["--limit", limit]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    result = json.loads(out)
    reach = {t: reach_rate(result["reach"], t) for t in TILES}
    return {"avg": result["avg"], "reach": reach, "moves_per_s": result["moves_per_s"], "moves": result["moves"],
            "games": games, "counts": result.get("search_counts", {})}


def run_reference(binary: str, weights: Path, depth: int, games: int, threads: int, tt: str, seed: int) -> dict:
    # -e BxN: B blocks of N games; with -p 2 each process takes blocks, so two equal blocks
    blocks = f"{threads}x{games // threads}"
    cmd = [binary, "-i", str(weights), "-e", blocks, "-s", str(seed)]
    if depth > 1:
        cmd += ["-d", f"{depth}p"]
    if tt != "none":
        cmd += ["-c", tt.replace("iB", "").replace("B", "")]
    if threads > 1:
        cmd += ["-p", str(threads)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, cwd=weights.parent).stdout
    speed = float(SUMMARY.findall(out)[-1])
    avg = float(TOTAL.findall(out)[-1])
    rows = {int(tile): float(win) / 100 for tile, _count, win in ROW.findall(out.split("summary")[-1])}
    reach = {t: rows.get(t, 1.0 if rows and t < min(rows) else 0.0) for t in TILES}
    return {"avg": avg, "reach": reach, "moves_per_s": speed, "games": games}


def strength_row(name: str, depth: int, r: dict) -> str:
    reach = " | ".join(f"{100 * r['reach'][t]:.1f}%" for t in TILES)
    return f"| {depth} | {name} | {r['games']} | {r['avg']:,.0f} | {reach} | {r['moves_per_s']:,.0f} |"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model", type=Path)
    p.add_argument("--reference", default=None, help="TDL2048+'s 2048 binary (built from its source)")
    p.add_argument("--depths", default="1,2,3")
    p.add_argument("--games", default="1000,1000,200", help="games per depth (one number: the same for all)")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--tt", default="none", help='"none" or a size for both programs, e.g. 64MiB')
    p.add_argument("--rounds", type=int, default=1, help="rounds per depth (speeds: median and range)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--cost", action="store_true", help="td2048's cost per move with and without table and limits")
    p.add_argument("--limit", default="3,3,3,3,2")
    args = p.parse_args()
    depths = [int(d) for d in args.depths.split(",")]
    games = [int(g) for g in args.games.split(",")]
    games = games * len(depths) if len(games) == 1 else games
    print(f"# {args.model}, {platform.node()}, {platform.processor() or platform.machine()}, "
          f"{datetime.date.today()}; tt {args.tt}, threads {args.threads}")

    if args.cost:
        print("\n| depth | table | limit | ms per move | search nodes per move | table hits |")
        print("|---|---|---|---|---|---|")
        for depth, n in zip(depths, games, strict=True):
            for tt, limit in (("none", None), ("64MiB", None), ("64MiB", args.limit)):
                if depth == 1 and (tt != "none" or limit):
                    continue
                r = run_td2048(args.model, depth, n, args.threads, tt, args.seed, limit)
                counts = r["counts"]
                nodes = counts.get("nodes", 0) / max(1, r["moves"])
                hits = counts.get("tt_hits", 0) / max(1, counts.get("tt_probes", 0))
                print(f"| {depth} | {tt} | {limit or '-'} | {1000 * args.threads / r['moves_per_s']:.3f} | "
                      f"{nodes:,.1f} | {100 * hits:.1f}% |", flush=True)
        return 0

    weights = None
    if args.reference:
        from td2048.io.model import load_model
        from td2048.io.tdl import write_tdl_weights

        workdir = Path(tempfile.mkdtemp(prefix="bench_search_"))
        weights = workdir / "model.w"
        network, _ = load_model(args.model)
        write_tdl_weights(weights, network)
        del network
    print("\n| depth | program | games | avg | " + " | ".join(str(t) for t in TILES) + " | moves/s |")
    print("|---|---|---|---|" + "---|" * len(TILES) + "---|")
    ratios = []
    for depth, n in zip(depths, games, strict=True):
        ours, theirs = [], []
        for k in range(args.rounds):
            order = ("td2048", "ref") if k % 2 == 0 else ("ref", "td2048")
            for who in order:
                if who == "td2048":
                    ours.append(run_td2048(args.model, depth, n, args.threads, args.tt, args.seed + k))
                elif weights is not None:
                    theirs.append(run_reference(args.reference, weights, depth, n, args.threads, args.tt,
                                                args.seed + k))
        print(strength_row("td2048", depth, ours[-1]), flush=True)
        if theirs:
            print(strength_row("TDL2048+", depth, theirs[-1]), flush=True)
            per_round = [a["moves_per_s"] / b["moves_per_s"] for a, b in zip(ours, theirs, strict=True)]
            ratios.append((depth, statistics.median(per_round), min(per_round), max(per_round),
                           statistics.median(a["moves_per_s"] for a in ours),
                           statistics.median(b["moves_per_s"] for b in theirs)))
    if ratios:
        print("\n| depth | td2048 moves/s | TDL2048+ moves/s | ratio (median, range) |")
        print("|---|---|---|---|")
        for depth, med, lo, hi, a, b in ratios:
            print(f"| {depth} | {a:,.0f} | {b:,.0f} | {med:.2f} ({lo:.2f}-{hi:.2f}) |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
