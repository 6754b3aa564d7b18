"""Perfect play's exact score distribution on a solved board beside learned players': the research page's staircase.

    td2048 solve --board 3x3 --out 3x3.solution
    td2048 train --board 3x3 --network 2x6 --episodes 3000000 --block 100000 --seed 1 --out runs/best33
    td2048 train --board 3x3 --seed 1 --out runs/recipe33        # the board's recipe
    python benchmarks/score_staircase.py --solution 3x3.solution --model "TD(0), 2x6=runs/best33/model.td2048" \\
        --model "the recipe=runs/recipe33/model.td2048" --at-least 1000,3000,6000,8000 \\
        --plot docs/images/score-staircase-3x3.png

Prints a Markdown table (expected score, median, most likely score, P(score >= X) for each X) of perfect play
(the expected score's aim) and of each model's greedy player, all exact (``exact_policy_value(...,
distribution=True)``, up to symmetry for a network with all the board's isomorphisms); ``--plot`` draws each
one's P(score >= x) against x.
"""

from __future__ import annotations

import argparse
import sys


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--solution", required=True, help="the board's solution file")
    parser.add_argument("--model", action="append", default=[], metavar="LABEL=PATH", help="a model (repeatable)")
    parser.add_argument("--at-least", default="1000,3000,6000", help="the thresholds X of P(score >= X)")
    parser.add_argument("--plot", default=None, metavar="PNG", help="draw the staircases there")
    args = parser.parse_args(argv)

    import numpy as np

    from td2048.io.model import load_model
    from td2048.play import Agent
    from td2048.search_settings import parse_search
    from td2048.solve import PERFECT_PLAY, agent_policy, exact_policy_value, load_solution
    from td2048.threads import solver_threads

    solution = load_solution(args.solution)
    thresholds = [int(x) for x in args.at_least.split(",")]
    players = [("perfect play", PERFECT_PLAY, True)]
    for entry in args.model:
        label, path = entry.split("=", 1)
        network, _ = load_model(path)
        agent = Agent(network, parse_search(1, 0, None, None, network.game), 0, solver_threads())
        players.append((label, agent_policy(agent), network.spec.symmetric))
    print("| player | expected score | median | most likely | " + " | ".join(f"P(>= {x:,})" for x in thresholds)
          + " |")
    print("|---|---|---|---|" + "---|" * len(thresholds))
    curves = []
    for label, policy, symmetric in players:
        value = exact_policy_value(solution, policy, symmetric=symmetric, distribution=True)
        score = value.score
        cells = " | ".join(f"{100 * score.at_least(x):.2f}%" for x in thresholds)
        print(f"| {label} | {value.expected_score:,.2f} | {score.median:,} | {score.mode:,} | {cells} |", flush=True)
        survival = 1.0 - np.concatenate([[0.0], np.cumsum(score.probabilities)[:-1]])
        curves.append((label, score.scores, survival))
    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(8, 4.5))
        for label, scores, survival in curves:
            ax.step(scores, survival, where="post", label=label)
        ax.set_xlabel("final score x")
        ax.set_ylabel("P(score >= x)")
        ax.set_ylim(0, 1.02)
        # up to where every curve is below 1 in 10,000 (the longest tails are that rare)
        ax.set_xlim(0, max(float(s[min(int(np.searchsorted(-v, -1e-4)), len(s) - 1)])
                           for _, s, v in curves) * 1.05)
        ax.grid(alpha=0.3)
        ax.legend()
        ax.set_title(f"{solution.game} on {solution.board.name}: the final score's distribution, exactly")
        fig.tight_layout()
        fig.savefig(args.plot, dpi=110)
        print(f"wrote {args.plot}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
