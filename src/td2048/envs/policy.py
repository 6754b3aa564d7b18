"""A model trained on the environments, as a policy of packed boards: what :func:`td2048.solve.exact_policy_value`
asks a policy (``choose(boards)``), so that an SB3 or MaskablePPO model gets its exact distance from perfect
play on a solved board.

The boards come packed as the game holds them (a 2048 board: ``uint64``, cell (r, c) in bits 4 (4 r + c) of
the 4x4 frame; a 2584 board: a ``(lo, hi)`` row, the cells' low 4 bits and their fifth bits); each is turned
into the observation the environment gives of it, and its legal moves into the action mask.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable

import numpy as np

from td2048.envs.boards import OBSERVATIONS, Boards, check_choice, check_game, check_size


def board_grids(boards, game: str = "2048", size=None) -> np.ndarray:
    """Packed boards as their cells' codes: ``int8[m, rows, cols]``.

    Parameters
    ----------
    boards : numpy.ndarray
        ``uint64[m]`` (2048) or ``uint64[m, 2]`` (2584: lo, hi).
    game : str
        ``"2048"`` or ``"2584"``.
    size : int or tuple or str or BoardShape or None
        The board (as the environments take it; None: 4x4).

    Returns
    -------
    numpy.ndarray
    """
    shape = check_size(size)
    boards = np.asarray(boards, np.uint64)
    frame = np.array(shape.frame_cells, np.uint64)
    if game == "2584":
        boards = boards.reshape(-1, 2)
        lo, hi = boards[:, :1], boards[:, 1:]
        codes = ((lo >> (np.uint64(4) * frame)) & np.uint64(15)) | (((hi >> frame) & np.uint64(1)) << np.uint64(4))
    else:
        codes = (boards.reshape(-1, 1) >> (np.uint64(4) * frame)) & np.uint64(15)
    return codes.astype(np.int8).reshape(-1, shape.rows, shape.cols)


def legal_masks(grids: np.ndarray, game: str = "2048") -> np.ndarray:
    """Each board's legal moves: ``bool[m, 4]`` (up, right, down, left) of ``int8[m, rows, cols]`` codes.

    A move is legal when a tile can slide into an empty cell next to it that way, or two neighbours in its
    line merge (2048: equal tiles below 32768, the largest of 4-bit cells; 2584: neighbouring Fibonacci
    numbers, or two 1s, below the largest tile of 5-bit cells).
    """
    g = np.asarray(grids, np.int16)

    def mergeable(a, b):
        if game == "2584":
            return (a != 0) & (b != 0) & ((np.abs(a - b) == 1) | ((a == 1) & (b == 1))) & (np.maximum(a, b) < 31)
        return (a != 0) & (a == b) & (a < 15)

    def legal(first, second):  # second slides toward first
        return ((first == 0) & (second != 0)) | mergeable(first, second)

    up = legal(g[:, :-1, :], g[:, 1:, :]).any(axis=(1, 2))
    down = legal(g[:, 1:, :], g[:, :-1, :]).any(axis=(1, 2))
    left = legal(g[:, :, :-1], g[:, :, 1:]).any(axis=(1, 2))
    right = legal(g[:, :, 1:], g[:, :, :-1]).any(axis=(1, 2))
    return np.stack([up, right, down, left], axis=1)


def board_policy(model, game: str = "2048", size=None, observation: str = "onehot_flat", cells: int | None = None,
                 deterministic: bool = True) -> Callable[[np.ndarray], np.ndarray]:
    """A model that acts on the environments' observations, as a policy of packed boards.

    Parameters
    ----------
    model
        Anything with SB3's ``predict(observations, deterministic=...)``: ``PPO``, ``DQN``, sb3-contrib's
        ``MaskablePPO`` (then given each board's legal moves as ``action_masks``).
    game, size, observation, cells
        The environment the model was trained on (``gymnasium.make("td2048/2048-v0", size=3)``: ``"2048"``,
        ``3``, and the defaults).
    deterministic : bool
        The model's most likely move (an exact valuation needs one move per board).

    Returns
    -------
    callable
        ``choose(boards)``: a move per packed board, for :func:`td2048.solve.exact_policy_value`.

    Examples
    --------
    >>> from td2048.solve import exact_policy_value                       # doctest: +SKIP
    >>> exact_policy_value(solution, board_policy(model, size=3))          # doctest: +SKIP
    """
    check_choice("observation", observation, OBSERVATIONS)
    shape = check_size(size)
    cells = check_game(game, cells)
    masked = "action_masks" in inspect.signature(model.predict).parameters

    def choose(boards):
        grids = board_grids(boards, game, shape)
        view = Boards(max(1, len(grids)), game, cells, size=shape)
        view.codes[:len(grids), :shape.n_cells] = grids.reshape(len(grids), -1)
        observations = view.observations(observation, rows=np.arange(len(grids)))
        extra = {"action_masks": legal_masks(grids, game)} if masked else {}
        actions, _ = model.predict(observations, deterministic=deterministic, **extra)
        return np.asarray(actions, np.int64).reshape(-1)

    return choose
