"""A solution's values as the arrays the kernels read: distillation's teacher and an endgame's table.

``td2048 train --teacher SOLUTION`` trains a network toward the exact value of every position it plays
(:func:`td2048.kernels.distill.distill_block`), on perfect play's games and on its own. The greedy player
of a network so trained is about as close to perfect play as that network can get: its exact gap is the
network's share of a learner's gap, and the rest is the learning method's
(``docs/research/perfect-play.md``). ``td2048 eval --endgame TABLE`` lets an endgame's table choose the moves
of its endgame in a network's games (:func:`endgame_arrays`, :mod:`td2048.kernels.endgame`).
"""

from __future__ import annotations

import numpy as np

from td2048.errors import TD2048Error
from td2048.games.keys import EMPTY_SLOT, index_keys
from td2048.games.tiles import tile_value
from td2048.network import aligned_bytes

Teacher = tuple  # (keys, values, starts, tile values, frame cells, symmetries, shape flags, key index)


def teacher_arrays(solution, board, game: str, option: str = "--teacher", index: bool = False) -> Teacher:
    """The arrays through which the kernels read perfect play's values (``teacher_value``).

    Parameters
    ----------
    solution : td2048.solve.Solution
        A solution with its values (:func:`td2048.solve.load_solution`), of ``board`` and ``game``.
    board : BoardShape
        The network's board.
    game : str
        The network's game.
    option : str
        The option that named the solution, for the errors.
    index : bool
        Whether to build a hash index of the keys (:func:`td2048.games.keys.index_keys`): a lookup then reads a
        few slots where a binary search in the keys' layer reads about twenty, for 4 bytes a slot, 1.3 to 2.7 slots
        a position (1 GiB for the 142.6 million positions of 4x3's column endgame, built in seconds). False:
        lookups search the layer.

    Returns
    -------
    tuple
        ``(keys, values, starts, tile_values, frame, perms, shape, slots)``: every position's key, layer after
        layer of tile sum (``uint64[P]``); its expected score under perfect play (``float64[P]``); where the layer
        of tile sum s starts and ends (``starts[s]``, ``starts[s + 1]``); each code's tile value; the board's
        frame cells and symmetries (cell permutations); ``[column shift, row shift, square, 5-bit keys, index
        bits]``; and the keys' hash index (``uint32[2**bits]``; none, ``uint32[0]``, without ``index``).

    Raises
    ------
    TD2048Error
        When the solution is of another board or game, or holds no values.
    """
    if solution.board.name != board.name or solution.game != game:
        raise TD2048Error(f"{option}: the solution is of {solution.game} on {solution.board.name}, the network "
                          f"plays {game} on {board.name}")
    if solution.values is None:
        raise TD2048Error(f"{option}: the solution holds no values")
    # in huge pages: a lookup reads at random in arrays of up to gigabytes (see td2048.network.aligned_bytes)
    positions = sum(len(k) for k in solution.keys)
    keys = np.concatenate([np.asarray(k, np.uint64) for k in solution.keys], out=_huge_array(positions, np.uint64))
    values = np.concatenate([np.asarray(v[:, 0], np.float64) for v in solution.values],
                            out=_huge_array(positions, np.float64))
    top = max(solution.sums)
    counts = np.zeros(top + 2, np.int64)
    for tile_sum, layer in zip(solution.sums, solution.keys, strict=True):
        counts[tile_sum + 1] = len(layer)
    starts = np.cumsum(counts)  # layers are stored in increasing tile sum
    tile_values = np.array([tile_value(game, c) for c in range(32)], np.int64)
    frame = np.array(board.frame_cells, np.int64)
    perms = np.array(board.symmetries, np.int64)
    bits = 0
    slots = np.zeros(0, np.uint32)
    if index and len(keys):
        bits = max(4, int(np.ceil(np.log2(len(keys) / 0.75))))  # at most 3 keys in 4 slots
        slots = _huge_array(1 << bits, np.uint32)
        slots[:] = EMPTY_SLOT
        index_keys(keys, slots, bits)
    shape = np.array([4 * (4 - board.cols), 16 * (4 - board.rows), int(board.square), int(game == "2584"), bits],
                     np.int64)
    return keys, values, starts, tile_values, frame, perms, shape, slots


def _huge_array(n: int, dtype) -> np.ndarray:
    """An array of ``n`` items (contents undefined), in huge pages when large."""
    return aligned_bytes(n * np.dtype(dtype).itemsize, zeroed=False).view(dtype)


def endgame_arrays(solution, board, game: str, wide: bool = False) -> tuple[Teacher, np.ndarray]:
    """The arrays through which the kernels play an endgame's table (:mod:`td2048.kernels.endgame`).

    Parameters
    ----------
    solution : td2048.solve.Solution
        An endgame's solution with its values (``td2048 solve --fixed ... --goal ...``, read with
        ``load_solution(path, endgame=True)``), of ``board`` and ``game``.
    board : BoardShape
        The network's board.
    game : str
        The network's game.
    wide : bool
        Whether the network plays on 5-bit cells (refused: an endgame's kernels read 4-bit boards).

    Returns
    -------
    tuple
        ``(teacher, masks)``: the solution's positions and values as :func:`teacher_arrays` gives them, with their
        hash index (each value the probability of building the goal), and the endgame's masks in every orientation
        of the board (:meth:`td2048.solve.endgame.Endgame.oriented_masks`).

    Raises
    ------
    TD2048Error
        For a solution of the whole game, of another board or game, or without values, or a network on 5-bit
        cells.
    """
    if wide:
        raise TD2048Error("--endgame: endgames are of 2048 on 4-bit cells; this network plays on 5-bit cells")
    if solution.endgame is None:
        raise TD2048Error("--endgame: the solution is of the whole game, not an endgame (td2048 solve --fixed ... "
                          "--goal ...)")
    return teacher_arrays(solution, board, game, "--endgame", index=True), solution.endgame.oriented_masks(board)


def table_nbytes(teacher: Teacher) -> int:
    """The memory a solution's arrays hold (its keys, values and key index), for the memory limits."""
    return teacher[0].nbytes + teacher[1].nbytes + teacher[7].nbytes
