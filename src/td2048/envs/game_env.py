"""The Gymnasium environments: one game (``td2048/2048-v0``, ``td2048/2584-v0``) and many at once.

Both step the compiled rules of training (:mod:`td2048.kernels.env`); the single environment
is the vector one's core with one board, so that board ``i`` of a vector environment reset with
seed ``s`` plays the game of a single environment reset with seed ``s + i``, step for step.

- Observation: the 16 cell codes as a 4x4 ``int8`` array (0 empty; 2048: code k is the tile
  2**k; 2584: code k is the (k+1)-th Fibonacci number), or with ``observation="onehot"`` one
  plane per code, ``uint8[codes, 4, 4]``.
- Actions: 0 up, 1 right, 2 down, 3 left (the course's order).
- Reward: the merge score of the move (the sum of the tiles it makes).
- ``terminated``: no move is legal. There is no truncation unless ``max_episode_steps`` is given.
- ``info["action_mask"]``: ``int8[4]``, 1 for each legal move. An illegal action (one that
  moves no tile) leaves the board as it is, with reward 0 and ``info["illegal"] = True``: the
  agent may try another move, as in the game, and wastes no random draw.
- ``reset(seed=s)`` gives the same games for the same ``s``; ``reset()`` goes on with the
  environment's random stream.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv

from td2048.envs.boards import Boards
from td2048.envs.render import board_rgb, board_text
from td2048.errors import TD2048Error

OBSERVATIONS = ("codes", "onehot")
RENDER_MODES = ["ansi", "rgb_array"]


def _observation_space(boards: Boards, observation: str) -> spaces.Box:
    if observation not in OBSERVATIONS:
        raise TD2048Error(f"observation must be 'codes' or 'onehot', not {observation!r}")
    if observation == "codes":
        return spaces.Box(0, boards.max_code, (4, 4), np.int8)
    return spaces.Box(0, 1, (boards.max_code + 1, 4, 4), np.uint8)


def _onehot(codes: np.ndarray, planes: int) -> np.ndarray:
    """int8[n, 16] codes -> uint8[n, planes, 4, 4]."""
    out = codes.reshape(-1, 1, 4, 4) == np.arange(planes, dtype=np.int8).reshape(1, planes, 1, 1)
    return out.view(np.uint8)


class TileGameEnv(gym.Env):
    """One game of 2048 or 2584 (``game``) on the compiled rules; see the module's docstring."""

    metadata = {"render_modes": RENDER_MODES, "render_fps": 8}

    def __init__(self, game: str = "2048", cells: int | None = None, observation: str = "codes",
                 render_mode: str | None = None):
        if render_mode is not None and render_mode not in RENDER_MODES:
            raise TD2048Error(f"render_mode must be one of {RENDER_MODES} or None, not {render_mode!r}")
        self._boards = Boards(1, game, cells)
        self._action = np.zeros(1, np.int64)  # the step's action, as the kernel takes it
        self.game, self.observation = game, observation
        self.observation_space = _observation_space(self._boards, observation)
        self.action_space = spaces.Discrete(4)
        self.render_mode = render_mode
        self.score = 0
        self.moves = 0
        self._seeded = False

    def _obs(self) -> np.ndarray:
        codes = self._boards.codes
        if self.observation == "onehot":
            return _onehot(codes, self._boards.max_code + 1)[0]
        return codes[0].reshape(4, 4).copy()

    def _info(self) -> dict[str, Any]:
        return {"action_mask": self._boards.masks[0].copy(), "illegal": bool(self._boards.illegal[0]),
                "score": self.score, "moves": self.moves, "max_tile": int(self.tiles.max())}

    @property
    def tiles(self) -> np.ndarray:
        """The board as a 4x4 array of tile values."""
        return self._boards.tiles(0)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        if seed is not None or not self._seeded:
            self._boards.seed([seed])
            self._seeded = True
        self._boards.reset()
        self.score = self.moves = 0
        return self._obs(), self._info()

    def step(self, action):
        if self._boards.pending[0]:
            raise TD2048Error("the game is over (or not started): call reset()")
        if not self.action_space.contains(action):
            raise TD2048Error(f"action must be 0..3 (up, right, down, left), not {action!r}")
        self._action[0] = int(action)
        self._boards.step(self._action)
        reward = int(self._boards.rewards[0])
        if not self._boards.illegal[0]:
            self.score += reward
            self.moves += 1
        return self._obs(), float(reward), bool(self._boards.terminated[0]), False, self._info()

    def render(self):
        if self.render_mode == "ansi":
            return board_text(self.tiles, self.score)
        if self.render_mode == "rgb_array":
            return board_rgb(self._boards.codes[0], self.game)
        return None

    def close(self) -> None:
        self._boards.close()


class TileGameVectorEnv(VectorEnv):
    """``num_envs`` games stepped in one compiled call (``num_threads`` threads share them), with the
    Gymnasium "next step" autoreset: the step after a game's end starts a new game (its action is
    ignored, its reward is 0). Infos hold ``action_mask`` (int8[n, 4]) and ``illegal`` (bool[n]).
    ``copy=False`` (as Gymnasium's own vector environments offer) hands out the environment's own
    arrays, which the next step overwrites: faster for agents that read them at once."""

    metadata = {"render_modes": RENDER_MODES, "render_fps": 8, "autoreset_mode": AutoresetMode.NEXT_STEP}

    def __init__(self, num_envs: int = 1, game: str = "2048", cells: int | None = None, observation: str = "codes",
                 num_threads: int = 1, max_episode_steps: int | None = None, copy: bool = True,
                 render_mode: str | None = None):
        if render_mode is not None and render_mode not in RENDER_MODES:
            raise TD2048Error(f"render_mode must be one of {RENDER_MODES} or None, not {render_mode!r}")
        if max_episode_steps is not None and (not isinstance(max_episode_steps, int) or max_episode_steps < 1):
            raise TD2048Error(f"max_episode_steps must be a positive integer or None, not {max_episode_steps!r}")
        self._boards = Boards(num_envs, game, cells, num_threads)
        self.num_envs, self.game, self.observation = num_envs, game, observation
        self.single_observation_space = _observation_space(self._boards, observation)
        self.single_action_space = spaces.Discrete(4)
        self.observation_space = gym.vector.utils.batch_space(self.single_observation_space, num_envs)
        self.action_space = spaces.MultiDiscrete(np.full(num_envs, 4))
        self.render_mode = render_mode
        self.max_episode_steps = max_episode_steps
        self._steps = np.zeros(num_envs, np.int64)
        self._truncated = np.zeros(num_envs, np.bool_)
        self._all = np.ones(num_envs, np.bool_)
        self._seeded = False
        self.copy = copy  # False: step returns the environment's own arrays, overwritten by the next step

    def _out(self, array: np.ndarray) -> np.ndarray:
        return array.copy() if self.copy else array

    def _obs(self) -> np.ndarray:
        codes = self._boards.codes
        if self.observation == "onehot":
            return _onehot(codes, self._boards.max_code + 1)
        return self._out(codes.reshape(self.num_envs, 4, 4))

    def _infos(self) -> dict[str, Any]:
        b = self._boards
        return {"action_mask": self._out(b.masks), "_action_mask": self._all, "illegal": self._out(b.illegal),
                "_illegal": self._all}

    def reset(self, *, seed: int | list[int | None] | None = None, options: dict | None = None):
        super().reset(seed=seed if isinstance(seed, int) else None)  # the base class takes an int only
        if isinstance(seed, int):
            seed = [seed + i for i in range(self.num_envs)]
        if seed is not None:
            if len(seed) != self.num_envs:
                raise TD2048Error(f"reset(seed=...) needs one seed per environment ({self.num_envs}), "
                                  f"not {len(seed)}")
            self._boards.seed(seed)
            self._seeded = True
        elif not self._seeded:
            self._boards.seed([None] * self.num_envs)
            self._seeded = True
        self._boards.reset()
        self._steps[:] = 0
        return self._obs(), self._infos()

    def step(self, actions):
        b = self._boards
        if self.max_episode_steps is not None:  # a truncated game starts anew at the next step, as an ended one
            b.pending |= self._truncated
        starting = b.pending.copy() if self.max_episode_steps is not None else None
        b.step(b.check_actions(actions))
        if self.max_episode_steps is not None:
            self._steps[starting] = 0
            self._steps[~starting & ~b.illegal] += 1
            np.logical_and(self._steps >= self.max_episode_steps, ~b.terminated, out=self._truncated)
        return (self._obs(), self._out(b.rewards), self._out(b.terminated), self._out(self._truncated),
                self._infos())

    def render(self):
        if self.render_mode == "ansi":
            return tuple(board_text(self._boards.tiles(i)) for i in range(self.num_envs))
        if self.render_mode == "rgb_array":
            return tuple(board_rgb(self._boards.codes[i], self.game) for i in range(self.num_envs))
        return None

    def close_extras(self, **kwargs) -> None:
        self._boards.close()
