"""What an endgame's entry is worth by what its free cells hold: perfect play's chance of the goal.

    td2048 solve --board 4x3 --fixed 0=2048,3=1024,6=512 --goal 6=1024 --out runs/column.endgame
    python benchmarks/endgame_chances.py runs/column.endgame

Reads every position of an endgame's table (``td2048 solve --fixed ... --goal ...``; 2048 on 4-bit cells) and,
of those whose free cells (the board less one of each fixed tile) hold no tile as large as the smallest fixed
one (the goal's last merge not begun), groups them by their largest free tile and prints a Markdown table: how
many positions, the largest and the median of perfect play's probability of the goal, and the share above one
half. Positions are counted up to symmetry, as the table holds them, each once, however often games meet it.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

BINS = 100  # the median is read from a histogram of the probabilities in steps of 1 / BINS


def chances(table) -> dict[int, dict[str, float]]:
    """Per largest free tile code: positions, max and median probability of the goal, share above one half."""
    cells = table.board.frame_cells
    fixed = [code for _, code in table.endgame.fixed]
    smallest = min(fixed)
    hist: dict[int, np.ndarray] = {}
    best: dict[int, float] = {}
    above: dict[int, int] = {}
    for keys, values in zip(table.keys, table.values, strict=True):
        if len(keys) == 0:
            continue
        keys = np.asarray(keys, np.uint64)
        p = np.asarray(values, np.float64).reshape(len(keys), -1)[:, 0]
        codes = np.stack([((keys >> np.uint64(4 * c)) & np.uint64(15)).astype(np.int64) for c in cells], axis=1)
        free = codes.copy()
        kept = np.ones(len(keys), bool)
        for code in fixed:  # one of each fixed tile is not free (in whichever cell the key's orientation puts it)
            first = np.argmax(free == code, axis=1)
            kept &= free[np.arange(len(keys)), first] == code
            free[np.arange(len(keys)), first] = 0
        top = free.max(axis=1)
        kept &= top < smallest
        for code in np.unique(top[kept]):
            chosen = p[kept & (top == code)]
            bins = np.minimum((chosen * BINS).astype(np.int64), BINS)
            hist[int(code)] = hist.get(int(code), np.zeros(BINS + 1, np.int64)) + np.bincount(bins, minlength=BINS + 1)
            best[int(code)] = max(best.get(int(code), 0.0), float(chosen.max()))
            above[int(code)] = above.get(int(code), 0) + int((chosen > 0.5).sum())
    out = {}
    for code in sorted(hist):
        h = hist[code]
        cumulative = np.cumsum(h) / h.sum()
        out[code] = {"positions": int(h.sum()), "max": best[code],
                     "median": float(np.searchsorted(cumulative, 0.5)) / BINS,
                     "above half": above[code] / float(h.sum())}
    return out


def share(x: float) -> str:
    """A share as a percentage, "<0.1%" where it rounds to 0 without being 0."""
    return "<0.1%" if 0 < x < 0.0005 else f"{x:.1%}"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("table", help="an endgame's table (td2048 solve --fixed ... --goal ... --out TABLE)")
    args = parser.parse_args(argv)
    from td2048.solve import load_solution

    table = load_solution(args.table, endgame=True, verify=False)
    print(f"{table.endgame.describe()}: perfect play's chance of the goal by the largest free tile")
    print()
    print("| largest free tile | positions | best chance | median | share above 50% |")
    print("|---:|---:|---:|---:|---:|")
    for code, row in chances(table).items():
        print(f"| {2 ** code if code else '(none)'} | {row['positions']:,} | {row['max']:.1%} | "
              f"~{row['median']:.0%} | {share(row['above half'])} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
