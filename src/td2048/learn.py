"""TD(0) learning of afterstate values: the Python loop that runs it block by block.

The compiled side (greedy play, the TD update, whole blocks of episodes) is in
:mod:`td2048.kernels.episode`; this module validates settings, allocates, and calls one
kernel per block of episodes.

``backward`` updating (the default, as in the course demo) plays the whole episode first and
then updates from the last afterstate to the first, so each target already holds the updated
value of its successor; ``forward`` updates each afterstate online as soon as the next move
is chosen. Either way every feature weight moves by alpha / (tuples x isomorphisms) of the
TD error.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field

import numpy as np

from td2048.config import DEFAULT_ALPHA, DEFAULT_BLOCK, DEFAULT_EPISODES, DEFAULT_MEMORY_LIMIT, DEFAULT_NETWORK
from td2048.errors import TD2048Error
from td2048.games.game2048 import row_table
from td2048.network import Network, parse_network
from td2048.rng import make_rng_state
from td2048.stats import BlockStats

UPDATE_MODES = ("backward", "forward")
MODES = ("play",) + UPDATE_MODES

# 2048 with 4-bit cells: every move spawns a tile worth >= 2 and the tiles sum to at most
# 16 * 32768, so no episode is longer than this many moves.
MAX_EPISODE_MOVES = 16 * 32768 // 2 + 16


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

    def run(self, episodes: int, mode: str = "play", alpha: float = 0.0) -> EpisodeBlock:
        """Play ``episodes`` episodes in one compiled call; ``mode`` is play, backward or forward."""
        kernels = self.network.kernels
        mode_code = {"play": kernels.PLAY, "backward": kernels.BACKWARD, "forward": kernels.FORWARD}[mode]
        scores = np.zeros(episodes, np.int64)
        max_codes = np.zeros(episodes, np.int64)
        moves = np.zeros(episodes, np.int64)
        start = time.perf_counter()
        kernels.run_block(self._table, self.network.weights, self.rng_state, mode_code,
                          alpha / self.network.spec.n_features, self._path_after, self._path_reward,
                          scores, max_codes, moves)
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
    done = 0
    while done < settings.episodes:
        n = min(settings.block, settings.episodes - done)
        block = player.run(n, settings.update, settings.alpha)
        done += n
        yield TrainedBlock(network, BlockStats.from_block(done, block.scores, block.max_codes, block.moves,
                                                          block.seconds, alpha=settings.alpha))
