"""Stable-Baselines3's ``VecEnv`` over the compiled boards: SB3's algorithms (PPO, sb3-contrib's
MaskablePPO, ...) step thousands of games in one compiled call.

Needs stable-baselines3 (``pip install 'td2048[rl]'``); nothing else in td2048 imports it.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any

import numpy as np

try:
    from stable_baselines3.common.vec_env import VecEnv
except ImportError as e:  # pragma: no cover - the rl extra is missing
    raise ImportError("td2048.envs.sb3 needs stable-baselines3: pip install 'td2048[rl]'") from e

from gymnasium import spaces

from td2048.envs.boards import DEFAULT_MAX_ILLEGAL, Boards, make_rules
from td2048.envs.game_env import check_render_mode, observation_space
from td2048.envs.render import board_rgb
from td2048.errors import TD2048Error


class TileGameSB3VecEnv(VecEnv):
    """``num_envs`` games of 2048 or 2584 behind Stable-Baselines3's ``VecEnv``, stepped in one compiled call.

    Description
    -----------
    The games of [`TileGameEnv`][td2048.envs.game_env.TileGameEnv], as SB3's algorithms take them:
    ``PPO("MlpPolicy", TileGameSB3VecEnv(64))``. It gives what SB3's ``DummyVecEnv`` over 64
    ``TileGameEnv`` would, seed for seed and step for step, without a Python loop over the games.

    Action Space
    ------------
    ``Discrete(4)`` per game (SB3's vector environments name the space of one environment): 0 up,
    1 right, 2 down, 3 left. ``env_method("action_masks")`` gives each game's legal moves, as
    sb3-contrib's ``MaskablePPO`` asks for them (``bool[4]`` each).

    Observation Space
    -----------------
    One game's observation (see ``TileGameEnv``); ``step`` and ``reset`` give ``num_envs`` of them
    stacked. The default, ``"onehot_flat"`` (``float32[planes * R * C]`` on an R x C board, 4x4
    unless ``size`` says otherwise), is the one that SB3 takes without a warning.

    Rewards
    -------
    Each game's merge score, as float32 (0, or ``-illegal_penalty``, for an illegal move).

    Starting State
    --------------
    ``reset()`` starts every game. Seeds as SB3 passes them: ``seed(s)`` before ``reset()`` seeds
    game ``i`` with ``s + i`` (the game of ``TileGameEnv().reset(seed=s + i)``); a reset with no seed
    set goes on with each game's random stream.

    Episode End
    -----------
    As in ``TileGameEnv`` (termination when no move is legal; truncation after ``max_illegal``
    illegal moves in a row or ``max_episode_steps`` steps), with SB3's "reset in the same step":
    ``dones[i]`` is True at the step that ends game ``i``, the observation returned for it is
    already the first of its next game, and ``infos[i]`` holds ``terminal_observation`` (the last
    observation of the game that ended) and ``TimeLimit.truncated`` (it was cut, not over).

    Arguments
    ---------
    ``infos[i]`` is empty at the steps that end no game (with ``full_infos=False``); at a game's end
    it holds, besides the two keys above, the single environment's info of that last step:
    ``score``, ``moves``, ``max_tile`` (of the game that ended), ``illegal`` and ``action_mask``.
    With ``full_infos=True`` every step's ``infos[i]`` holds those five keys and
    ``TimeLimit.truncated``, as ``DummyVecEnv`` gives them (building them costs more than the
    compiled step). Wrap the environment in SB3's ``VecMonitor`` for episode statistics in SB3's
    logs and for ``evaluate_policy``.

    Parameters
    ----------
    num_envs : int
        The number of games.
    game : {"2048", "2584"}
        The game.
    size : int or tuple of int or str or BoardShape or None
        The board (see ``TileGameEnv``: ``size=3`` is 3x3, ``size=(2, 4)`` 2 rows of 4; None: 4x4).
    cells : int or None
        Bits per cell (see ``TileGameEnv``).
    observation : {"onehot_flat", "codes", "onehot"}
        Each game's observation.
    on_illegal : {"ignore", "penalty", "end"}
        What an illegal move does (see ``TileGameEnv``).
    illegal_penalty : float
        An illegal move's cost with ``on_illegal="penalty"``.
    max_illegal : int
        Illegal moves in a row that truncate a game.
    max_episode_steps : int or None
        Steps that truncate a game (every step counts, legal or not; None: no limit).
    num_threads : int
        Threads that step disjoint ranges of the games.
    full_infos : bool
        Every step's info holds the single environment's keys (else only the steps that end a game).
    render_mode : {"rgb_array"} or None
        ``render()`` tiles the games' pictures into one image (SB3's ``VecEnv.render``).

    Raises
    ------
    TD2048Error
        On an option out of its range.

    Version History
    ---------------
    - v0: first version; boards of other shapes (``size``).
    """

    def __init__(self, num_envs: int = 1, game: str = "2048", cells: int | None = None,
                 observation: str = "onehot_flat", on_illegal: str = "ignore", illegal_penalty: float = 1.0,
                 max_illegal: int = DEFAULT_MAX_ILLEGAL, max_episode_steps: int | None = None, num_threads: int = 1,
                 full_infos: bool = False, render_mode: str | None = None, size=None):
        check_render_mode(render_mode)
        if render_mode == "ansi":
            raise TD2048Error("render_mode must be 'rgb_array' or None (SB3 tiles the games' images)")
        rules = make_rules(on_illegal, illegal_penalty, max_illegal, max_episode_steps)
        self._boards = Boards(num_envs, game, cells, num_threads, rules, size)
        self.game, self.observation, self.on_illegal = game, observation, on_illegal
        self.board = self._boards.shape  # the BoardShape that size names
        self.max_episode_steps = max_episode_steps
        self.full_infos = bool(full_infos)
        self.render_mode = render_mode
        self._seeded = False
        self._actions = self._boards.no_actions
        super().__init__(num_envs, observation_space(self._boards, observation), spaces.Discrete(4))

    # --- SB3's VecEnv API ---------------------------------------------------------------------------------------

    def reset(self) -> np.ndarray:
        """Start a new game on every board, with the seeds given by ``seed()`` since the last reset.

        Returns
        -------
        numpy.ndarray
            The first observation of every game.
        """
        seeds = self._seeds
        given = [i for i, s in enumerate(seeds) if s is not None]
        if given:
            self._boards.seed([seeds[i] for i in given], given)
        if not self._seeded:
            rest = [i for i, s in enumerate(seeds) if s is None]
            self._boards.seed([None] * len(rest), rest)
            self._seeded = True
        self._boards.reset()
        self._reset_seeds()
        self._reset_options()
        self.reset_infos = [self._info(i) for i in range(self.num_envs)]
        return self._obs()

    def step_async(self, actions: np.ndarray) -> None:
        """Take the moves of the next ``step_wait``.

        Parameters
        ----------
        actions : numpy.ndarray
            ``num_envs`` moves, 0 up, 1 right, 2 down, 3 left.

        Raises
        ------
        TD2048Error
            On actions of the wrong shape or out of 0..3.
        """
        self._actions = self._boards.check_actions(np.asarray(actions).reshape(-1))

    def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        """Play the moves of ``step_async``; the games that end start anew in the same step.

        Returns
        -------
        tuple
            ``(observations, rewards, dones, infos)``: ``float32`` rewards, ``bool`` dones, a list of
            dicts (see the class's docstring).
        """
        b = self._boards
        b.step(self._actions)
        rewards = b.rewards.astype(np.float32)
        dones = b.terminated | b.truncated
        obs = self._obs()
        infos = self._full_infos() if self.full_infos else [{} for _ in range(self.num_envs)]
        ended = np.flatnonzero(dones)
        if ended.size:
            finals = obs[ended]
            cut = (b.truncated[ended] & ~b.terminated[ended]).tolist()
            for j, i in enumerate(ended.tolist()):
                info = infos[i] if self.full_infos else self._info(i)
                info["terminal_observation"] = finals[j]
                info["TimeLimit.truncated"] = cut[j]
                infos[i] = info
            b.start_pending()
            obs[ended] = b.observations(self.observation, rows=ended)
            for i in ended.tolist():
                self.reset_infos[i] = self._info(i)
        return obs, rewards, dones, infos

    def close(self) -> None:
        """Release the boards' threads."""
        self._boards.close()

    def get_attr(self, attr_name: str, indices=None) -> list[Any]:
        """An attribute of some games: ``action_masks`` (the method), ``score``, ``moves``, ``max_tile``,
        ``tiles`` per game, or a setting that every game shares (``render_mode``, ``game``, ...).

        Parameters
        ----------
        attr_name : str
            The attribute.
        indices : int or iterable of int or None
            The games (all when None).

        Returns
        -------
        list
            One value per game.

        Raises
        ------
        AttributeError
            On a name that the games do not have.
        """
        games = list(self._get_indices(indices))
        per_game = self._per_game(attr_name)
        if per_game is not None:
            return [per_game(i) for i in games]
        if attr_name.startswith("_") or attr_name not in _SHARED:
            raise AttributeError(f"the games have no attribute {attr_name!r}")
        return [getattr(self, attr_name)] * len(games)

    def set_attr(self, attr_name: str, value: Any, indices=None) -> None:
        """Not supported: the games share their settings, fixed when the environment is made.

        Parameters
        ----------
        attr_name : str
            The attribute.
        value : Any
            Its value.
        indices : int or iterable of int or None
            The games.

        Raises
        ------
        TD2048Error
            Always.
        """
        raise TD2048Error(f"cannot set {attr_name!r}: the games' settings are fixed when the environment is made")

    def env_method(self, method_name: str, *method_args, indices=None, **method_kwargs) -> list[Any]:
        """Call a game's method: ``action_masks`` (``bool[4]`` per game, for MaskablePPO) or ``render``.

        Parameters
        ----------
        method_name : str
            ``"action_masks"`` or ``"render"``.
        *method_args
            Unused.
        indices : int or iterable of int or None
            The games (all when None).
        **method_kwargs
            Unused.

        Returns
        -------
        list
            One result per game.

        Raises
        ------
        AttributeError
            On another method name.
        """
        if method_name == "action_masks":
            masks = self._boards.masks.astype(bool)
            return list(masks if indices is None else masks[list(self._get_indices(indices))])
        if method_name == "render":
            return [self._image(i) for i in self._get_indices(indices)]
        raise AttributeError(f"the games have no method {method_name!r}")

    def env_is_wrapped(self, wrapper_class, indices=None) -> list[bool]:
        """No game is wrapped (wrap this environment in ``VecMonitor`` for episode statistics).

        Parameters
        ----------
        wrapper_class : type
            A Gymnasium wrapper class.
        indices : int or iterable of int or None
            The games.

        Returns
        -------
        list of bool
            False for each game.
        """
        return [False] * len(list(self._get_indices(indices)))

    def get_images(self) -> Sequence[np.ndarray | None]:
        """Every game's picture (``uint8[100 R, 100 C, 3]`` on an R x C board) with ``render_mode="rgb_array"``.

        Returns
        -------
        list
            One picture per game (None each without that render mode).
        """
        if self.render_mode != "rgb_array":
            return [None] * self.num_envs
        return [self._image(i) for i in range(self.num_envs)]

    def action_masks(self) -> np.ndarray:
        """The legal moves of every game now.

        Returns
        -------
        numpy.ndarray
            ``bool[num_envs, 4]``: True for each legal move (up, right, down, left).
        """
        return self._boards.masks.astype(bool)

    # --- the boards' views ---------------------------------------------------------------------------------------

    def _obs(self) -> np.ndarray:
        return self._boards.observations(self.observation)

    def _info(self, i: int) -> dict[str, Any]:
        b = self._boards
        return {"action_mask": b.masks[i].copy(), "illegal": bool(b.illegal[i]), "score": int(b.scores[i]),
                "moves": int(b.moves[i]), "max_tile": int(b.max_tiles[i])}

    def _full_infos(self) -> list[dict[str, Any]]:
        b = self._boards
        cut = (b.truncated & ~b.terminated).tolist()
        return [{"action_mask": m, "illegal": i, "score": s, "moves": n, "max_tile": t, "TimeLimit.truncated": c}
                for m, i, s, n, t, c in zip(b.masks.copy(), b.illegal.tolist(), b.scores.tolist(), b.moves.tolist(),
                                            b.max_tiles.tolist(), cut)]

    def _per_game(self, name: str):
        b = self._boards
        getters = {"action_masks": lambda i: partial(_game_masks, b, i), "score": lambda i: int(b.scores[i]),
                   "moves": lambda i: int(b.moves[i]), "max_tile": lambda i: int(b.max_tiles[i]),
                   "tiles": b.tiles}
        return getters.get(name)

    def _image(self, i: int) -> np.ndarray:
        return board_rgb(self._boards.grids()[i], self.game)


_SHARED = {"render_mode", "game", "board", "observation", "on_illegal", "max_episode_steps", "observation_space",
           "action_space", "metadata", "num_envs", "full_infos"}


def _game_masks(boards: Boards, i: int) -> np.ndarray:
    return boards.masks[i].astype(bool)
