"""TD(0) learning of afterstate values, and the Python loop that runs it block by block.

The agent plays greedily: from s_t it takes the legal move with the largest r + V(s'), and
learns V on afterstates (the boards right after a slide)::

    s_t --(a_t, r_t)--> s'_t --(new tile)--> s_t+1 --(a_t+1, r_t+1)--> s'_t+1 ...

    V(s'_t) <- V(s'_t) + alpha_split * (r_t+1 + V(s'_t+1) - V(s'_t))      (target 0 at the end)

``backward`` (the default, as in the course demo) plays the whole episode first and then
updates from the last afterstate to the first, so each target already holds the updated
value of its successor; ``forward`` updates each afterstate online as soon as the next move
is chosen. ``alpha_split`` is alpha / (tuples x isomorphisms): every feature weight moves by
that much of the TD error, the demo's convention.

A block of episodes is one compiled call; Python only sees its per-episode scores.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field

import numpy as np

from td2048.config import DEFAULT_ALPHA, DEFAULT_BLOCK, DEFAULT_EPISODES, DEFAULT_MEMORY_LIMIT, \
    DEFAULT_NETWORK, njit
from td2048.errors import TD2048Error
from td2048.games.bitboard import U64, max_code
from td2048.games.game2048 import move, new_game, row_table, spawn_tile
from td2048.network import Network, parse_network, td_update, value
from td2048.rng import make_rng_state
from td2048.stats import BlockStats

PLAY, BACKWARD, FORWARD = 0, 1, 2
UPDATE_MODES = {"backward": BACKWARD, "forward": FORWARD}

# 2048 with 4-bit cells: every move spawns a tile worth >= 2 and the tiles sum to at most
# 16 * 32768, so no episode is longer than this many moves.
MAX_EPISODE_MOVES = 16 * 32768 // 2 + 16


# ---------------------------------------------------------------- kernels

@njit
def best_move(table, weights, plan, n_iso, board):
    """The legal move with the largest r + V(afterstate): (direction or -1, afterstate, r, V)."""
    best_dir = -1
    best_total = -np.inf
    best_after = board
    best_reward = 0
    best_value = 0.0
    for d in range(4):
        after, reward = move(table, board, d)
        if after == board:
            continue
        v = value(weights, plan, n_iso, after)
        if reward + v > best_total:
            best_total = reward + v
            best_dir = d
            best_after = after
            best_reward = reward
            best_value = v
    return best_dir, best_after, best_reward, best_value


@njit
def play_episode(table, weights, plan, n_iso, rng, mode, alpha_split, path_after, path_reward):
    """One whole episode; learns when ``mode`` is BACKWARD or FORWARD. Returns (score, moves, final board)."""
    board = new_game(rng)
    score = 0
    steps = 0
    previous = U64(0)
    while True:
        d, after, reward, after_value = best_move(table, weights, plan, n_iso, board)
        if d < 0:
            break
        if mode == FORWARD and steps > 0:
            td_update(weights, plan, n_iso, previous, reward + after_value, alpha_split)
        elif mode == BACKWARD:
            path_after[steps] = after
            path_reward[steps] = reward
        previous = after
        score += reward
        steps += 1
        board = spawn_tile(after, rng)
    if mode == FORWARD and steps > 0:
        td_update(weights, plan, n_iso, previous, 0.0, alpha_split)
    elif mode == BACKWARD:
        target = 0.0
        for t in range(steps - 1, -1, -1):
            updated = td_update(weights, plan, n_iso, path_after[t], target, alpha_split)
            target = path_reward[t] + updated
    return score, steps, board


@njit
def run_block(table, weights, plan, n_iso, rng, mode, alpha_split, path_after, path_reward,
              out_score, out_max_code, out_moves):
    """``len(out_score)`` episodes in one compiled call; per-episode results go to the out arrays."""
    for e in range(out_score.shape[0]):
        score, steps, final = play_episode(table, weights, plan, n_iso, rng, mode, alpha_split,
                                           path_after, path_reward)
        out_score[e] = score
        out_moves[e] = steps
        out_max_code[e] = max_code(final)


# ---------------------------------------------------------------- Python side

@dataclass
class EpisodeBlock:
    """Per-episode results of one block."""

    scores: np.ndarray
    max_codes: np.ndarray
    moves: np.ndarray
    seconds: float


class Player:
    """Runs blocks of episodes of a network, learning or not, with its own random state."""

    def __init__(self, network: Network, seed: int | None = None, rng_state: np.ndarray | None = None):
        self.network = network
        self.rng_state = make_rng_state(seed) if rng_state is None else rng_state
        self._table = row_table()
        self._path_after = np.zeros(MAX_EPISODE_MOVES, np.uint64)
        self._path_reward = np.zeros(MAX_EPISODE_MOVES, np.int64)

    def run(self, episodes: int, mode: int = PLAY, alpha: float = 0.0) -> EpisodeBlock:
        scores = np.zeros(episodes, np.int64)
        max_codes = np.zeros(episodes, np.int64)
        moves = np.zeros(episodes, np.int64)
        net = self.network
        start = time.perf_counter()
        run_block(self._table, net.weights, net.plan, net.spec.isomorphisms, self.rng_state, mode,
                  alpha / net.spec.n_features, self._path_after, self._path_reward, scores, max_codes, moves)
        return EpisodeBlock(scores, max_codes, moves, time.perf_counter() - start)


@dataclass
class TrainSettings:
    """Everything that defines a training run (saved first in the run directory)."""

    network: str = DEFAULT_NETWORK  # preset name or hex tuples, e.g. "012345,456789"
    isomorphisms: int | None = None  # 1, 4 or 8; None: the preset's default (8 for custom tuples)
    episodes: int = DEFAULT_EPISODES  # episodes to train
    alpha: float = DEFAULT_ALPHA  # learning rate, split over tuples x isomorphisms
    update: str = "backward"  # "backward": after each episode, last move first; "forward": online
    seed: int | None = None  # None: drawn at start and recorded
    block: int = DEFAULT_BLOCK  # episodes per statistics block (one compiled call)
    memory_limit: int = DEFAULT_MEMORY_LIMIT  # bytes of weights allowed
    extra: dict = field(default_factory=dict)

    def validate(self) -> None:
        if self.episodes < 1:
            raise TD2048Error(f"--episodes must be at least 1, not {self.episodes}")
        if self.block < 1:
            raise TD2048Error(f"--block must be at least 1, not {self.block}")
        if not (math.isfinite(self.alpha) and self.alpha > 0):
            raise TD2048Error(f"--alpha must be a positive number, not {self.alpha}")
        if self.update not in UPDATE_MODES:
            raise TD2048Error(f"--update must be one of {', '.join(UPDATE_MODES)}, not {self.update!r}")
        if self.seed is not None and self.seed < 0:
            raise TD2048Error(f"--seed must be >= 0, not {self.seed}")

    def to_dict(self) -> dict:
        return asdict(self)


def train(settings: TrainSettings, network: Network | None = None,
          on_block: Callable[[BlockStats], None] | None = None) -> tuple[Network, list[BlockStats]]:
    """Train a network block by block; ``on_block`` sees each block's statistics as it ends."""
    stats = []
    for block in train_blocks(settings, network):
        stats.append(block.stats)
        if on_block is not None:
            on_block(block.stats)
    return block.network, stats


@dataclass
class TrainedBlock:
    network: Network
    stats: BlockStats


def train_blocks(settings: TrainSettings, network: Network | None = None) -> Iterator[TrainedBlock]:
    """Generator form of :func:`train`: yields after every block (for logging and saving)."""
    settings.validate()
    if settings.seed is None:
        settings.seed = int(np.random.SeedSequence().entropy % (2**63))
    if network is None:
        spec = parse_network(settings.network, settings.isomorphisms)
        network = Network(spec, memory_limit=settings.memory_limit)
    player = Player(network, settings.seed)
    mode = UPDATE_MODES[settings.update]
    done = 0
    while done < settings.episodes:
        n = min(settings.block, settings.episodes - done)
        block = player.run(n, mode, settings.alpha)
        done += n
        yield TrainedBlock(network, BlockStats.from_block(done, block.scores, block.max_codes, block.moves,
                                                          block.seconds, alpha=settings.alpha))
