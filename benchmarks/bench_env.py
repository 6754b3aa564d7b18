"""Environment steps per second: td2048's Gymnasium environments side by side with gymnasium-2048, and
td2048's Stable-Baselines3 vector environment against SB3's DummyVecEnv and SubprocVecEnv.

    python benchmarks/bench_env.py [--rounds 3] [--reference-python /tmp/g2048venv/bin/python]
    python benchmarks/bench_env.py --sb3 [--rounds 3] [--seconds 1]   # needs the rl extra

td2048: the single environment (``gymnasium.make``, with Gymnasium's wrappers, and the bare env:
its Python cost per ``step`` call in microseconds) and the compiled vector environment at
N = 1, 256, 4096 on 1 and 2 threads, each both as the kernel alone and through the full ``step``
with a random legal action per board (chosen in NumPy from the action masks, counted in the
time). The reference, ``gymnasium-2048`` (PyPI), must live in a separate virtual environment
(never a td2048 dependency): give its python with ``--reference-python``; it has no action masks,
so it steps random actions, legal or not, through its single env and Gymnasium's SyncVectorEnv.
Rounds are interleaved (td2048, then the reference), and each figure is the median over rounds.

``--sb3``: steps per second through SB3's ``VecEnv.step`` at 4, 64 and 1,024 games, of
``TileGameSB3VecEnv``, ``DummyVecEnv`` over ``TileGameEnv`` and ``SubprocVecEnv`` (one forked process a
game: at most ``--max-processes``), all with the ``onehot_flat`` observation; the actions are random
legal moves, chosen from the masks (``env_method("action_masks")``, as MaskablePPO reads them) outside
the timing. Every environment is built first, then the rounds go through them in turn.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import time

import gymnasium as gym
import numpy as np

import td2048  # noqa: F401  (registers the environments)

SECONDS = 1.0  # per measurement (--seconds)

# a uniformly chosen legal move from an action mask, in a few NumPy operations a batch: the mask's 4 bytes
# as one word, multiplied so that its bits gather in bits 24..27 (move a at bit 27 - a), then
# PICK[bits, k] for k uniform in 0..11 (12 = lcm(1, 2, 3, 4)) is a legal move, each as likely
PICK = np.zeros((16, 12), np.int64)
for bits in range(1, 16):
    legal = [a for a in range(4) if bits >> (3 - a) & 1]
    PICK[bits] = (legal * 12)[:12]


def random_legal(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    words = masks.view(np.uint32).reshape(-1).astype(np.uint64)
    bits = (words * np.uint64(0x08040201) >> np.uint64(24)) & np.uint64(0xF)
    return PICK[bits.astype(np.int64), rng.integers(0, 12, len(bits))]


REFERENCE = r"""
import json, sys, time
import gymnasium as gym, gymnasium_2048  # noqa: F401
SECONDS = float(sys.argv[1])
out = {}
env = gym.make("gymnasium_2048/TwentyFortyEight-v0")
env.reset(seed=1)
steps, start = 0, time.perf_counter()
while time.perf_counter() - start < SECONDS:
    _, _, terminated, truncated, _ = env.step(env.action_space.sample())
    steps += 1
    if terminated or truncated:
        env.reset()
out["single"] = steps / (time.perf_counter() - start)
for n in (1, 256, 4096):
    envs = gym.make_vec("gymnasium_2048/TwentyFortyEight-v0", num_envs=n, vectorization_mode="sync")
    envs.reset(seed=1)
    steps, start = 0, time.perf_counter()
    while time.perf_counter() - start < SECONDS:
        envs.step(envs.action_space.sample())
        steps += n
    out[f"vector {n}"] = steps / (time.perf_counter() - start)
print(json.dumps(out))
"""


def timed(step, per_call: int) -> float:
    """Steps per second of calling ``step`` for about SECONDS."""
    step()  # compiled already; the first call warms the caches
    calls, start = 0, time.perf_counter()
    while time.perf_counter() - start < SECONDS:
        for _ in range(16):
            step()
        calls += 16
    return calls * per_call / (time.perf_counter() - start)


def kernel_only(boards, rng) -> float:
    """Steps per second of the compiled step alone (random legal actions chosen outside the timing)."""
    spent = steps = 0
    while spent < SECONDS:
        actions = random_legal(boards.masks, rng)
        start = time.perf_counter()
        boards.step(actions)
        spent += time.perf_counter() - start
        steps += boards.n
    return steps / spent


def td2048_round() -> dict[str, float]:
    out = {}
    rng = np.random.default_rng(0)
    for name, env in (("single (gym.make)", gym.make("td2048/2048-v0")),
                      ("single (bare env)", gym.make("td2048/2048-v0").unwrapped)):
        state = {"info": env.reset(seed=1)[1]}

        def step(env=env, state=state):
            action = int(random_legal(state["info"]["action_mask"], rng)[0])
            _, _, terminated, _, state["info"] = env.step(action)
            if terminated:
                state["info"] = env.reset()[1]

        out[name] = timed(step, 1)
    for n in (1, 256, 4096):
        for threads in (1, 2):
            envs = gym.make_vec("td2048/2048-v0", num_envs=n, num_threads=threads)
            boards = envs._boards
            _, infos = envs.reset(seed=1)
            out[f"vector {n}, {threads} thread(s), kernel"] = kernel_only(boards, rng)
            state = {"infos": infos}

            def step(envs=envs, state=state):
                state["infos"] = envs.step(random_legal(state["infos"]["action_mask"], rng))[4]

            out[f"vector {n}, {threads} thread(s), step"] = timed(step, n)
            envs.close()
    return out


def sb3_table(rounds: int, max_processes: int) -> None:
    """Steps per second through SB3's VecEnv API (see the module's docstring), printed as a Markdown table."""
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    from td2048.envs.sb3 import TileGameSB3VecEnv

    sizes = (4, 64, 1024)
    kinds = ("TileGameSB3VecEnv", "DummyVecEnv", "SubprocVecEnv")

    def single():
        return td2048.TileGameEnv(observation="onehot_flat")

    envs = {}
    for n in sizes:
        envs["TileGameSB3VecEnv", n] = TileGameSB3VecEnv(n)
        envs["DummyVecEnv", n] = DummyVecEnv([single] * n)
        if n <= max_processes:
            envs["SubprocVecEnv", n] = SubprocVecEnv([single] * n, start_method="fork")
    for env in envs.values():
        env.seed(1)
        env.reset()
    rng = np.random.default_rng(0)
    results = {key: [] for key in envs}
    for _ in range(rounds):
        for key, env in envs.items():
            spent = steps = 0
            while spent < SECONDS:
                masks = np.stack(env.env_method("action_masks")).astype(np.int8)
                actions = random_legal(masks, rng)
                start = time.perf_counter()
                env.step(actions)
                spent += time.perf_counter() - start
                steps += env.num_envs
            results[key].append(steps / spent)
    for env in envs.values():
        env.close()
    print(f"| games | {' | '.join(kinds)} |\n|---|{'---|' * len(kinds)}")
    for n in sizes:
        cells = [f"{statistics.median(results[k, n]):,.0f}" if (k, n) in results else "-" for k in kinds]
        print(f"| {n:,} | {' | '.join(cells)} |")
    ratios = {n: [a / b for a, b in zip(results["TileGameSB3VecEnv", n], results["DummyVecEnv", n])] for n in sizes}
    print("\nTileGameSB3VecEnv / DummyVecEnv (median, min-max over rounds): " + ", ".join(
        f"{n:,}: {statistics.median(r):,.0f}x ({min(r):,.0f}-{max(r):,.0f})" for n, r in ratios.items()))


def main() -> None:
    global SECONDS
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=SECONDS, help="time per measurement")
    parser.add_argument("--reference-python", default=None, help="python of a venv with gymnasium-2048")
    parser.add_argument("--sb3", action="store_true", help="the SB3 table instead (needs the rl extra)")
    parser.add_argument("--max-processes", type=int, default=64, help="SubprocVecEnv's largest size (--sb3)")
    args = parser.parse_args()
    SECONDS = args.seconds
    if args.sb3:
        sb3_table(args.rounds, args.max_processes)
        return
    ours, theirs = [], []
    for _ in range(args.rounds):
        ours.append(td2048_round())
        if args.reference_python:
            r = subprocess.run([args.reference_python, "-c", REFERENCE, str(SECONDS)], capture_output=True, text=True,
                               check=True)
            theirs.append(json.loads(r.stdout.strip().splitlines()[-1]))
    print(f"| td2048 | steps/s (median of {args.rounds}) |\n|---|---|")
    for key in ours[0]:
        print(f"| {key} | {statistics.median(r[key] for r in ours):,.0f} |")
    bare = statistics.median(r["single (bare env)"] for r in ours)
    print(f"\nbare single env: {1e6 / bare:.2f} us per step call (random legal action included)")
    if theirs:
        print("\n| gymnasium-2048 (random actions) | steps/s | td2048 / it |\n|---|---|---|")
        pairs = {"single": "single (gym.make)", "vector 1": "vector 1, 1 thread(s), step",
                 "vector 256": "vector 256, 1 thread(s), step", "vector 4096": "vector 4096, 1 thread(s), step"}
        for key, mine in pairs.items():
            ratios = [o[mine] / t[key] for o, t in zip(ours, theirs)]
            print(f"| {key} | {statistics.median(t[key] for t in theirs):,.0f} | "
                  f"{statistics.median(ratios):,.0f} ({min(ratios):,.0f}-{max(ratios):,.0f}) |")


if __name__ == "__main__":
    main()
