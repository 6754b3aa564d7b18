"""The Gymnasium environments: one game (``td2048/2048-v0``, ``td2048/2584-v0``) and many at once.

Both step the compiled rules of training (:mod:`td2048.kernels.env`), on the 4x4 board or any
other of 2 to 4 rows and columns (``size``); the single environment is the vector one's core with
one board, so that board ``i`` of a vector environment reset with
seed ``s`` plays the game of a single environment reset with seed ``s + i``, step for step.
Their specification (spaces, rewards, ends of episodes, options) is in the classes' docstrings.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv

from td2048.envs.boards import DEFAULT_MAX_ILLEGAL, RENDER_MODES, Boards, check_choice, make_rules
from td2048.envs.render import board_rgb, board_text
from td2048.errors import TD2048Error


def observation_space(boards: Boards, observation: str) -> spaces.Box:
    """The space of one board's observation as ``observation`` ("codes", "onehot" or "onehot_flat")."""
    shape, dtype = boards.observation_shape(observation)
    return spaces.Box(0, boards.max_code if observation == "codes" else 1, shape, dtype)


def check_render_mode(render_mode: str | None) -> None:
    if render_mode is not None:
        check_choice("render_mode", render_mode, RENDER_MODES)


class TileGameEnv(gym.Env):
    """One game of 2048 or 2584 on the compiled rules that training uses.

    Description
    -----------
    The board of [2048](https://play2048.co/) (tiles 2, 4, 8, ...: two equal tiles merge) or of
    2584 (Fibonacci tiles 1, 2, 3, 5, ...: two neighbours in the sequence merge, and so do two 1s):
    4x4, or any of 2 to 4 rows and 2 to 4 columns with ``size`` (``size=3``: 3x3; ``size=(2, 4)``:
    2 rows of 4 cells). Each legal move slides every tile as far as it goes and adds a new tile (a 2
    or a 4 in 2048, a 1 or a 2 in 2584, p = 0.9 and 0.1) on a uniformly chosen empty cell. Registered
    as ``gymnasium.make("td2048/2048-v0")`` and ``gymnasium.make("td2048/2584-v0")``.

    Action Space
    ------------
    ``Discrete(4)``: 0 up, 1 right, 2 down, 3 left. A move that moves no tile is *illegal*: the board
    stays as it is, no tile is added, and ``on_illegal`` says what else happens. The legal moves are
    in ``info["action_mask"]`` and ``action_masks()`` (what sb3-contrib's ``MaskablePPO`` reads).

    Observation Space
    -----------------
    The board's cells as *codes*: 0 for an empty cell; in 2048 code k is the tile 2**k, in 2584 code
    k is the (k+1)-th Fibonacci number (1, 2, 3, 5, ...). ``planes`` is 16 for 2048 on 4-bit cells
    (tiles up to 32768) and 32 on 5-bit cells (2048 with ``cells=5``, and 2584). Below, R x C is the
    board (4x4 unless ``size`` says otherwise).

    - ``"codes"`` (default): ``Box(0, planes - 1, (R, C), int8)``, row by row.
    - ``"onehot"``: ``Box(0, 1, (planes, R, C), uint8)``, plane k marks the cells that hold code k
      (a shape that Stable-Baselines3 takes for an image).
    - ``"onehot_flat"``: ``Box(0, 1, (planes * R * C,), float32)``, the same planes one after the
      other: the one that Stable-Baselines3 (``check_env``, ``MlpPolicy``) and PufferLib take
      without a warning.

    Rewards
    -------
    The merge score of the move: the sum of the tiles that its merges make (0 when nothing merges).
    An illegal move gives 0, or ``-illegal_penalty`` with ``on_illegal="penalty"``.

    Starting State
    --------------
    An empty board with two new tiles. ``reset(seed=s)`` plays the same games for the same ``s``;
    ``reset()`` goes on with the environment's random stream.

    Episode End
    -----------
    - Termination: no move is legal (the game is over); with ``on_illegal="end"``, also an illegal
      move.
    - Truncation: ``max_illegal`` illegal moves in a row (32 unless given), so that no policy, not
      even one that repeats an illegal move forever, plays an endless game; and ``max_episode_steps``
      steps when given (every step counts, legal or not, as Gymnasium's ``TimeLimit`` counts them;
      ``gymnasium.make(..., max_episode_steps=N)`` adds that wrapper, with the same result).

    A step after the end raises an error until ``reset()``.

    Arguments
    ---------
    ``gymnasium.make("td2048/2048-v0", observation="onehot_flat", on_illegal="penalty")`` passes its
    keyword arguments to this class; ``td2048.TileGameEnv(...)`` takes the same. The board is
    ``size``, as in gymnasium-2048 (``size=4``) and Jumanji's ``board_size``, widened to rectangles:
    ``gymnasium.make("td2048/2048-v0", size=3)``, ``size=(2, 4)`` (rows, columns), ``size="3x4"`` or
    a ``td2048.BoardShape``; the attribute ``board`` is that ``BoardShape``.

    Every step's ``info`` holds ``action_mask`` (``int8[4]``, 1 for each legal move), ``illegal``
    (the step's action was illegal), ``score`` (the game's score so far), ``moves`` (its legal moves
    so far) and ``max_tile`` (its largest tile value).

    Parameters
    ----------
    game : {"2048", "2584"}
        The game.
    size : int or tuple of int or str or BoardShape or None
        The board: ``n`` (n x n), ``(rows, cols)``, ``"RxC"`` or a ``BoardShape``, 2 to 4 rows and 2 to 4
        columns; None (the default) is 4x4.
    cells : int or None
        Bits per cell: 4 (2048's default: tiles up to 32768, two of which do not merge; the fastest)
        or 5 (tiles to 2**31; 2584 always).
    observation : {"codes", "onehot", "onehot_flat"}
        The observation (see Observation Space).
    on_illegal : {"ignore", "penalty", "end"}
        What an illegal move does: nothing but count as a step (``"ignore"``), cost
        ``illegal_penalty`` (``"penalty"``), or end the game (``"end"``).
    illegal_penalty : float
        An illegal move's cost with ``on_illegal="penalty"``.
    max_illegal : int
        Illegal moves in a row that truncate the game (``DEFAULT_MAX_ILLEGAL`` is 32).
    max_episode_steps : int or None
        Steps that truncate the game (None: no limit).
    render_mode : {"ansi", "rgb_array"} or None
        ``render()``'s picture: the board as text, or as an RGB array in the game's colours, 100 pixels
        a cell (400x400 for 4x4).

    Raises
    ------
    TD2048Error
        On an option out of its range.

    Version History
    ---------------
    - v0: the compiled rules of training; the legal-move mask in ``info`` and ``action_masks()``;
      illegal moves as ``on_illegal`` says, truncated after ``max_illegal`` in a row (formerly they
      never ended the game); ``max_episode_steps`` counts every step in both environments (formerly
      the vector environment counted legal moves only); the ``"onehot_flat"`` observation; boards
      of other shapes (``size``).
    """

    metadata = {"render_modes": RENDER_MODES, "render_fps": 8}

    def __init__(self, game: str = "2048", cells: int | None = None, observation: str = "codes",
                 on_illegal: str = "ignore", illegal_penalty: float = 1.0, max_illegal: int = DEFAULT_MAX_ILLEGAL,
                 max_episode_steps: int | None = None, render_mode: str | None = None, size=None):
        check_render_mode(render_mode)
        rules = make_rules(on_illegal, illegal_penalty, max_illegal, max_episode_steps)
        self._boards = Boards(1, game, cells, rules=rules, size=size)
        self._action = np.zeros(1, np.int64)  # the step's action, as the kernel takes it
        self.game, self.observation, self.on_illegal = game, observation, on_illegal
        self.board = self._boards.shape  # the BoardShape that size names
        self.observation_space = observation_space(self._boards, observation)
        self.action_space = spaces.Discrete(4)
        self.render_mode = render_mode
        self._seeded = False

    @property
    def score(self) -> int:
        """The game's score so far."""
        return int(self._boards.scores[0])

    @property
    def moves(self) -> int:
        """The game's legal moves so far."""
        return int(self._boards.moves[0])

    @property
    def tiles(self) -> np.ndarray:
        """The board as an array of tile values, rows x columns."""
        return self._boards.tiles(0)

    def _obs(self) -> np.ndarray:
        return self._boards.observations(self.observation)[0]

    def _info(self) -> dict[str, Any]:
        b = self._boards
        return {"action_mask": b.masks[0].copy(), "illegal": bool(b.illegal[0]), "score": int(b.scores[0]),
                "moves": int(b.moves[0]), "max_tile": int(b.max_tiles[0])}

    def action_masks(self) -> np.ndarray:
        """The legal moves of the board now, as sb3-contrib's ``MaskablePPO`` asks for them.

        Returns
        -------
        numpy.ndarray
            ``bool[4]``: True for each legal move (up, right, down, left).
        """
        return self._boards.masks[0].astype(bool)

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        """Start a new game.

        Parameters
        ----------
        seed : int or None
            The seed of this game and the ones after it (None: go on with the environment's random
            stream, seeded from fresh entropy at the first reset).
        options : dict or None
            Unused.

        Returns
        -------
        tuple
            The first observation and the info (see the class's docstring).
        """
        super().reset(seed=seed)
        if seed is not None or not self._seeded:
            self._boards.seed([seed])
            self._seeded = True
        self._boards.reset()
        return self._obs(), self._info()

    def step(self, action) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """Play one move.

        Parameters
        ----------
        action : int
            0 up, 1 right, 2 down, 3 left.

        Returns
        -------
        tuple
            ``(observation, reward, terminated, truncated, info)`` (see the class's docstring).

        Raises
        ------
        TD2048Error
            On an action out of 0..3, or after the game ended (call ``reset()``).
        """
        if self._boards.pending[0]:
            raise TD2048Error("the game is over (or not started): call reset()")
        if not self.action_space.contains(action):
            raise TD2048Error(f"action must be 0..3 (up, right, down, left), not {action!r}")
        self._action[0] = int(action)
        b = self._boards
        b.step(self._action)
        return self._obs(), float(b.rewards[0]), bool(b.terminated[0]), bool(b.truncated[0]), self._info()

    def render(self) -> str | np.ndarray | None:
        """The board as ``render_mode`` asks: text with the score (``"ansi"``), ``uint8[100 R, 100 C, 3]``
        on an R x C board (``"rgb_array"``; 400x400 for 4x4), or None.

        Returns
        -------
        str or numpy.ndarray or None
            The picture.
        """
        if self.render_mode == "ansi":
            return board_text(self.tiles, self.score)
        if self.render_mode == "rgb_array":
            return board_rgb(self._boards.grids()[0], self.game)
        return None

    def close(self) -> None:
        """Release the environment's resources."""
        self._boards.close()


class TileGameVectorEnv(VectorEnv):
    """``num_envs`` games of 2048 or 2584 stepped in one compiled call, with Gymnasium's ``VectorEnv`` API.

    Description
    -----------
    The games of [`TileGameEnv`][td2048.envs.game_env.TileGameEnv], many at once:
    ``gymnasium.make_vec("td2048/2048-v0", num_envs=N)`` builds this class (no Python loop over the
    boards: one compiled call a step, on ``num_threads`` threads). Board ``i`` of an environment reset
    with seed ``s`` plays, step for step, the game of a ``TileGameEnv`` reset with seed ``s + i``; the
    rules, the options and what they do are the single environment's. For Stable-Baselines3, use
    [`TileGameSB3VecEnv`][td2048.envs.sb3.TileGameSB3VecEnv], the same boards behind SB3's ``VecEnv``.

    Action Space
    ------------
    ``MultiDiscrete([4] * num_envs)``: one move per board, 0 up, 1 right, 2 down, 3 left
    (``single_action_space`` is ``Discrete(4)``). ``action_masks()`` and ``infos["action_mask"]``
    give the legal moves.

    Observation Space
    -----------------
    The single environment's observation for each board, stacked: on an R x C board (4x4 unless
    ``size`` says otherwise), ``(num_envs, R, C)`` int8 codes, ``(num_envs, planes, R, C)`` uint8
    one-hot planes or ``(num_envs, planes * R * C)`` float32.

    Rewards
    -------
    Each board's merge score (0 or ``-illegal_penalty`` for an illegal move), float64.

    Starting State
    --------------
    Every board starts a game at ``reset()``. ``reset(seed=s)`` seeds board ``i`` with ``s + i``;
    ``reset(seed=[s0, s1, ...])`` gives each board its own seed. ``reset(options={"reset_mask": m})``
    starts new games on the boards where the bool array ``m`` is True and leaves the others as they
    are (Gymnasium's convention).

    Episode End
    -----------
    As in the single environment, board by board (termination when no move is legal; truncation
    after ``max_illegal`` illegal moves in a row or ``max_episode_steps`` steps). The autoreset is
    Gymnasium's "next step" mode: the step after a board's game ended starts its next game (that
    step's action is ignored, its reward is 0, and the board's ``terminated`` and ``truncated`` are
    False).

    Arguments
    ---------
    ``gymnasium.make_vec("td2048/2048-v0", num_envs=4096, observation="onehot_flat")`` passes its
    keyword arguments to this class; ``td2048.TileGameVectorEnv(...)`` takes the same
    (``size=3`` for 3x3 boards, as in ``TileGameEnv``).

    ``infos`` follows Gymnasium's vector convention: for each key of the single environment's info
    an array over the boards (``action_mask`` ``int8[n, 4]``, ``illegal`` ``bool[n]``, ``score``,
    ``moves``, ``max_tile`` ``int64[n]``), and ``"_" + key`` a bool array of the boards that have it
    (all of them).

    Parameters
    ----------
    num_envs : int
        The number of boards.
    game : {"2048", "2584"}
        The game.
    size : int or tuple of int or str or BoardShape or None
        The board (see ``TileGameEnv``; None: 4x4).
    cells : int or None
        Bits per cell (see ``TileGameEnv``).
    observation : {"codes", "onehot", "onehot_flat"}
        The observation of each board.
    on_illegal : {"ignore", "penalty", "end"}
        What an illegal move does (see ``TileGameEnv``).
    illegal_penalty : float
        An illegal move's cost with ``on_illegal="penalty"``.
    max_illegal : int
        Illegal moves in a row that truncate a board's game.
    max_episode_steps : int or None
        Steps that truncate a board's game (every step counts, legal or not; None: no limit).
    num_threads : int
        Threads that step disjoint ranges of the boards (it pays from some thousands of boards).
    copy : bool
        False: ``step`` and ``reset`` hand out the environment's own arrays, which the next step
        overwrites (faster, for agents that read them at once).
    render_mode : {"ansi", "rgb_array"} or None
        ``render()`` gives a tuple of every board's picture.

    Raises
    ------
    TD2048Error
        On an option out of its range.

    Version History
    ---------------
    - v0: as ``TileGameEnv``'s; ``reset(options={"reset_mask": ...})`` resets only the boards
      asked for; the infos hold ``score``, ``moves`` and ``max_tile`` as the single environment's do;
      boards of other shapes (``size``).
    """

    metadata = {"render_modes": RENDER_MODES, "render_fps": 8, "autoreset_mode": AutoresetMode.NEXT_STEP}

    def __init__(self, num_envs: int = 1, game: str = "2048", cells: int | None = None, observation: str = "codes",
                 on_illegal: str = "ignore", illegal_penalty: float = 1.0, max_illegal: int = DEFAULT_MAX_ILLEGAL,
                 max_episode_steps: int | None = None, num_threads: int = 1, copy: bool = True,
                 render_mode: str | None = None, size=None):
        check_render_mode(render_mode)
        rules = make_rules(on_illegal, illegal_penalty, max_illegal, max_episode_steps)
        self._boards = Boards(num_envs, game, cells, num_threads, rules, size)
        self.num_envs, self.game, self.observation, self.on_illegal = num_envs, game, observation, on_illegal
        self.board = self._boards.shape  # the BoardShape that size names
        self.single_observation_space = observation_space(self._boards, observation)
        self.single_action_space = spaces.Discrete(4)
        self.observation_space = gym.vector.utils.batch_space(self.single_observation_space, num_envs)
        self.action_space = spaces.MultiDiscrete(np.full(num_envs, 4))
        self.render_mode = render_mode
        self.max_episode_steps = max_episode_steps
        self._all = np.ones(num_envs, np.bool_)
        self._seeded = False
        self.copy = copy  # False: step returns the environment's own arrays, overwritten by the next step
        self._obs_buffer = None if copy else self._boards.observations(observation)
        if not copy and observation == "codes":  # the boards' own cells, with no copy at all
            self._obs_buffer = self._boards.grids()

    def _out(self, array: np.ndarray) -> np.ndarray:
        return array.copy() if self.copy else array

    def _obs(self) -> np.ndarray:
        if self._obs_buffer is not None and self.observation == "codes":
            return self._obs_buffer
        return self._boards.observations(self.observation, out=self._obs_buffer)

    def _infos(self) -> dict[str, Any]:
        b = self._boards
        return {"action_mask": self._out(b.masks), "_action_mask": self._all, "illegal": self._out(b.illegal),
                "_illegal": self._all, "score": self._out(b.scores), "_score": self._all,
                "moves": self._out(b.moves), "_moves": self._all, "max_tile": self._out(b.max_tiles),
                "_max_tile": self._all}

    def action_masks(self) -> np.ndarray:
        """The legal moves of every board now.

        Returns
        -------
        numpy.ndarray
            ``bool[num_envs, 4]``: True for each legal move (up, right, down, left).
        """
        return self._boards.masks.astype(bool)

    def reset(self, *, seed: int | list[int | None] | None = None,
              options: dict | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        """Start new games on every board, or on the boards that ``options["reset_mask"]`` names.

        Parameters
        ----------
        seed : int or list of (int or None) or None
            ``s``: board ``i`` is seeded with ``s + i``; a list: one seed per board (None: go on with
            its random stream); None: every board goes on with its random stream (fresh entropy at
            the first reset). With a reset mask, only the boards reset take their seeds.
        options : dict or None
            ``{"reset_mask": bool[num_envs]}``: the boards to reset (all when not given).

        Returns
        -------
        tuple
            The observations and the infos of every board.

        Raises
        ------
        TD2048Error
            On a seed list or a reset mask of the wrong length, or an unknown option.
        """
        super().reset(seed=seed if isinstance(seed, int) else None)  # the base class takes an int only
        n = self.num_envs
        options = dict(options or {})
        mask = options.pop("reset_mask", None)
        if options:
            raise TD2048Error(f"reset takes the option reset_mask only, not {', '.join(map(repr, options))}")
        if mask is not None:
            mask = np.asarray(mask)
            if mask.shape != (n,) or mask.dtype != np.bool_:
                raise TD2048Error(f"reset_mask must be a bool array of {n}, not {mask.dtype}{list(mask.shape)}")
        if isinstance(seed, int | np.integer):
            seed = [int(seed) + i for i in range(n)]
        if seed is not None:
            if len(seed) != n:
                raise TD2048Error(f"reset(seed=...) needs one seed per environment ({n}), not {len(seed)}")
            which = np.arange(n) if mask is None else np.flatnonzero(mask)
            self._boards.seed([seed[i] for i in which if seed[i] is not None],
                              [i for i in which if seed[i] is not None])
        if not self._seeded:  # boards with no seed yet: fresh entropy
            given = set() if seed is None else {i for i in range(n) if seed[i] is not None}
            rest = [i for i in range(n) if i not in given]
            self._boards.seed([None] * len(rest), rest)
            self._seeded = True
        self._boards.reset(mask)
        return self._obs(), self._infos()

    def step(self, actions) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Play one move on every board (or start a board's next game, the step after its game ended).

        Parameters
        ----------
        actions : array of int
            ``num_envs`` moves, 0 up, 1 right, 2 down, 3 left.

        Returns
        -------
        tuple
            ``(observations, rewards, terminated, truncated, infos)``, arrays over the boards.

        Raises
        ------
        TD2048Error
            On actions of the wrong shape or out of 0..3.
        """
        b = self._boards
        b.step(b.check_actions(actions))
        return self._obs(), self._out(b.rewards), self._out(b.terminated), self._out(b.truncated), self._infos()

    def render(self) -> tuple | None:
        """Every board's picture as ``render_mode`` asks (see ``TileGameEnv``), or None.

        Returns
        -------
        tuple or None
            One picture per board.
        """
        if self.render_mode == "ansi":
            return tuple(board_text(self._boards.tiles(i), int(self._boards.scores[i])) for i in range(self.num_envs))
        if self.render_mode == "rgb_array":
            grids = self._boards.grids()
            return tuple(board_rgb(grids[i], self.game) for i in range(self.num_envs))
        return None

    def close_extras(self, **kwargs) -> None:
        """Release the environment's threads (``close()`` calls this).

        Parameters
        ----------
        **kwargs
            Unused (Gymnasium passes ``close()``'s keyword arguments on).
        """
        self._boards.close()
