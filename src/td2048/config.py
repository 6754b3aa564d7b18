"""Numba flags and project-wide defaults, in one place.

Every hot loop is compiled with :data:`njit`: ``cache=True`` so that a second run starts in
well under a second, ``boundscheck=False`` and no ``fastmath`` (TD updates must be
bit-for-bit reproducible from a seed), and ``no_cfunc_wrapper``: no kernel is taken as a C function
pointer (a first-class function value), so no function compiled builds that wrapper (a first compile is
the shorter for it: see the speed page).
"""

NJIT_OPTIONS = {"cache": True, "nogil": True, "boundscheck": False, "fastmath": False, "error_model": "numpy",
                "no_cfunc_wrapper": True}


def njit(*args, **overrides):
    """``numba.njit`` with the project's options; use as ``@njit`` or ``@njit(inline="always")``."""
    import numba  # here, not at the top: the CLI reads the defaults below before it knows it needs a kernel

    options = {**NJIT_OPTIONS, **overrides}
    if args and callable(args[0]):
        return numba.njit(**options)(args[0])
    return numba.njit(*args, **options)


DEFAULT_ALPHA = 0.1
DEFAULT_TC_ALPHA = 1.0  # temporal coherence's meta rate (TDL2048+'s)
DEFAULT_NETWORK = "4x6"
DEFAULT_EPISODES = 100_000
DEFAULT_BLOCK = 1000
# A snapshot costs training time (writing the weights evicts the caches, which then refill): every 5
# minutes that is a small share of a run, and a crash loses at most 5 minutes.
DEFAULT_SNAPSHOT_EVERY = "5m"
DEFAULT_CLAMP_2584 = 21  # the course's suggestion: 4x6 at 4 x 22**6 float32 (1.7 GiB)
DEFAULT_MEMORY_LIMIT = 2 * 1024**3  # 2 GiB of weights, the course's limit
# 2048 with 4-bit cells: every move spawns a tile worth >= 2 and the tiles sum to at most
# 16 * 32768, so no episode is longer than this many moves.
MAX_EPISODE_MOVES = 16 * 32768 // 2 + 16
WIDE_MAX_EPISODE_MOVES = 1 << 20  # 2584 and wide boards: far longer than any game played (a safety valve)
DEFAULT_SYNC_SECONDS = 1.0  # train --ray: seconds of learning between syncs of the workers
DEFAULT_SHARD_SIZE = 50  # games per shard on Ray: at depth 2, seconds of work against Ray's milliseconds per task
REPLAY_MAX_GAMES = 100  # games on a replay page unless asked (about 25 bytes per move)
JUDGE_SIGNIFICANCE = 0.001  # the judge's tests of the environment (td2048.judge holds the quantiles for it)
