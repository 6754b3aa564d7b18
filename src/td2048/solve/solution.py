"""A solved board, in memory or in a solution file.

The file (``td2048 solve --out FILE``), all numbers little-endian::

    bytes 0-7      b"TD2048S\\n"                       the magic
    bytes 8-15     uint64 H                            the header's length
    H bytes        the header, JSON in UTF-8, padded with spaces so that the payload starts at a
                   multiple of 64 bytes
    payload        layer by layer, the largest tile sum first (the order the solver finishes them):
                   keys:   the layer's positions x uint64, sorted
                   values: the layer's positions x columns x float64, row by row, in the keys' order

The header::

    {"format": "td2048-solution", "version": 2, "board": "3x3", "game": "2048",
     "layers": [[tile_sum, positions], ...],   # tile sum increasing (the payload holds them decreasing)
     "positions": N,
     "columns": ["score"],                      # the values' columns; with --reach: "score", 2, 4, 8, ...
     "tiles": [2, 4, ...],                      # every tile a position holds
     "expected_score": X, "reach": {"2": p, ...},   # the start's
     "payload_bytes": B, "sha256": "..."}       # of the payload

An endgame's file (``td2048 solve --fixed ... --goal ...``, :mod:`td2048.solve.endgame`) adds
``"endgame": {"fixed": [[cell, tile], ...], "goal": [cell, tile]}``; its one column, ``"goal"``, is each
position's probability of building the goal, and ``expected_score`` holds the start's.

By default a position's values are its expected score under perfect play (all that ``eval --exact``,
``train --exact``, ``serve --solution`` and ``--teacher`` read); ``td2048 solve --reach`` adds each tile's
reach probability. A key is a position's least symmetric board (:mod:`td2048.games.keys`): for 2048 the
packed frame board, for 2584 the board's cells at 5 bits each. The reader maps the file (``mmap``) and
refuses, in one line, a file that is not a solution, one of an older format, a truncated or altered one
(its length, its checksum), or one of another board or game than asked.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import mmap
import os
from functools import cached_property
from pathlib import Path

import numpy as np

from td2048.errors import TD2048Error
from td2048.games.shape import as_shape
from td2048.games.tiles import tile_value
from td2048.io.atomic import atomic_open
from td2048.solve.endgame import Endgame

MAGIC = b"TD2048S\n"
FORMAT = "td2048-solution"
VERSION = 2
ALIGN = 64
_BLOCK = 1 << 24  # bytes read at a time when checking a file's checksum
_FLUSH = 1 << 26  # bytes written between asking the system to start writing them out


class Solution:
    """Every reachable position of a board, up to symmetry, with its values under perfect play.

    Parameters
    ----------
    board : BoardShape or str
        The board.
    game : str
        ``"2048"`` or ``"2584"``.
    sums : list of int
        The layers' tile sums, increasing.
    keys : list of numpy.ndarray
        Each layer's sorted keys.
    values : list of numpy.ndarray or None
        Each layer's values ``[positions, columns]``: column 0 the expected score, and where held (a solve
        that keeps its values, a file written with reach) column c >= 1 the probability of ever holding a
        tile of code >= c; None when they were not kept.
    start : numpy.ndarray
        The start's values (the mean over the start positions, by probability): the expected score, then
        each tile's reach.
    seconds : float
        The time the solve took.
    counts : list of int or None
        The layers' sizes, where ``keys`` is None (a solve that kept neither keys nor values).
    endgame : Endgame or None
        The endgame solved (:mod:`td2048.solve.endgame`): each value is then the probability of building its
        goal; None for the whole game.
    """

    def __init__(self, board, game, sums, keys, values, start, seconds: float = 0.0, counts=None, endgame=None):
        self.board = as_shape(board)
        self.game = game
        self.sums = [int(s) for s in sums]
        self.keys = keys
        self.values = values
        self.start = np.asarray(start, np.float64)
        self.seconds = seconds
        self.counts = [int(c) for c in counts] if counts is not None else [len(k) for k in keys]
        self.endgame = endgame

    @property
    def positions(self) -> int:
        """The number of positions (up to symmetry)."""
        return int(sum(self.counts))

    @property
    def aims(self) -> int:
        """The start's values: the expected score and each tile's reach."""
        return len(self.start)

    @property
    def columns(self) -> int:
        """The values held for each position: 1 (the expected score), or :attr:`aims` (with each tile's reach);
        0 without values."""
        if self.values is None:
            return 0
        return int(self.values[0].shape[1]) if len(self.values) else self.aims

    @property
    def expected_score(self) -> float:
        """The optimal expected score from the start."""
        return float(self.start[0])

    @property
    def goal_probability(self) -> float:
        """An endgame's: the probability of building the goal from the start (its fixed tiles and two new tiles on
        the free cells) under the play that maximises it."""
        if self.endgame is None:
            raise TD2048Error("a whole board's solution has no goal: its start's value is expected_score")
        return probability(self.start[0])

    @property
    def tiles(self) -> list[int]:
        """The tile of each reach column (columns 1, 2, ...)."""
        return [tile_value(self.game, c) for c in range(1, self.aims)]

    @property
    def reach(self) -> dict[int, float]:
        """From the start, for each tile t, the probability of ever holding a tile >= t under the play
        that maximises it."""
        return {t: probability(self.start[c]) for c, t in enumerate(self.tiles, start=1)}

    @cached_property
    def rules(self):
        from td2048.solve.layers import Rules

        return Rules(self.board, self.game, self.endgame)

    def _codes(self, board) -> list[int]:
        """A position's cell codes, row-major, checked against this solution's board and game."""
        codes = getattr(board, "codes", board)
        if hasattr(board, "shape") and hasattr(board, "game"):
            if as_shape(board.shape) != self.board or board.game != self.game:
                raise TD2048Error(f"this solution is of {self.game} on {self.board.name}, not {board.game} on "
                                  f"{as_shape(board.shape).name}")
        codes = [int(c) for c in np.asarray(codes).reshape(-1)]
        if len(codes) != self.board.n_cells:
            raise TD2048Error(f"a {self.board.name} board has {self.board.n_cells} cells, not {len(codes)}")
        if self.values is None:
            raise TD2048Error("this solution holds no values (solve with keep_values=True, or read a file)")
        top = 16 if self.endgame is not None else self.aims  # an endgame has one column, not one per code
        if min(codes) < 0 or max(codes) >= top:  # past the largest code any position holds
            raise TD2048Error("the start does not reach this position")
        return codes

    def _rows(self, tile_sum: int, keys: np.ndarray) -> np.ndarray | None:
        """The values of the positions of ``keys`` (all of one tile sum), ``[len(keys), aims]``; None when the
        solution lacks one of them."""
        if tile_sum not in self.sums:
            return None
        i = self.sums.index(tile_sum)
        layer = self.keys[i]
        if len(layer) == 0:
            return None
        at = np.minimum(np.searchsorted(layer, keys), len(layer) - 1)
        if not (layer[at] == keys).all():
            return None
        return np.asarray(self.values[i][at], np.float64)

    def value(self, board) -> np.ndarray:
        """A position's values.

        Parameters
        ----------
        board : Board or sequence of int
            A :class:`~td2048.games.board.Board` of this board and game, or its cell codes, row-major.

        Returns
        -------
        numpy.ndarray
            ``[columns]``: the expected score, then where the solution holds them each tile's reach
            probability (see :attr:`tiles`).

        Raises
        ------
        TD2048Error
            For a board of another shape or game, a position that the start does not reach, or a solution
            without values.
        """
        codes = self._codes(board)
        rows = self._rows(self.rules.tile_sum(codes), self.rules.keys_of([codes]))
        if rows is None:
            raise TD2048Error("the start does not reach this position")
        return rows[0]

    def move_values(self, board) -> np.ndarray:
        """The exact value of each move of a position: its expected score under perfect play after it.

        Q*(s, a) = r(s, a) + the expectation, over the new tile (each empty cell equally likely; the small
        tile with probability :data:`~td2048.solve.chance.P_SMALL`, the big one with
        :data:`~td2048.solve.chance.P_BIG`), of the expected score (:meth:`value`'s first aim) of the position
        after it. The slides are the solver's own (:func:`td2048.games.game2048.py_move`, and
        :func:`td2048.games.wide.py_wide_move` for 2584), on the board as given (not up to symmetry), so the
        largest of the four is ``value(board)[0]`` and its move is a perfect move there.

        Parameters
        ----------
        board : Board or sequence of int
            A :class:`~td2048.games.board.Board` of this board and game, or its cell codes, row-major.

        Returns
        -------
        numpy.ndarray
            ``float64[4]``, in the order up, right, down, left; NaN for a move that does not change the board
            (all four on a position with no legal move). An endgame's (:attr:`endgame`): the probability of
            building its goal after the move (1 for a move that builds it), NaN also for a move that shifts a
            fixed tile (not made); no reward counted.

        Raises
        ------
        TD2048Error
            For a board of another shape or game, a position that the start does not reach, or a solution
            without values.
        """
        from td2048.games.board import Board
        from td2048.games.game2048 import py_move
        from td2048.games.wide import py_wide_move
        from td2048.solve.chance import P_BIG, P_SMALL

        codes = self._codes(board)
        self.value(codes)  # a position the start reaches: every child of its moves is in the solution too
        position = Board(tuple(codes), self.game, self.board)
        tile_sum = self.rules.tile_sum(codes)
        small_step, big_step = self.rules.tile_steps
        out = np.full(4, np.nan)
        for direction in range(4):
            if self.rules.wide:
                after, reward = py_wide_move(self.game, position.packed(wide=True), direction, self.board)
            else:
                after, reward = py_move(position.packed(), direction, self.board)
            after = Board.from_packed(after, self.game, self.board)
            if after == position:
                continue
            if self.endgame is not None:  # a move that moves a fixed tile is not made; one that wins is worth 1
                if self.endgame.met_by(after.codes, self.board, goal=True):
                    out[direction] = 1.0
                    continue
                if not self.endgame.met_by(after.codes, self.board):
                    continue
                reward = 0
            empty = after.empty_cells  # a move that changes the board leaves an empty cell
            children = np.tile(np.asarray(after.codes, np.int64), (2 * len(empty), 1))
            children[np.arange(len(empty)), empty] = 1
            children[len(empty) + np.arange(len(empty)), empty] = 2
            keys = self.rules.keys_of(children)
            small = self._rows(tile_sum + small_step, keys[:len(empty)])
            big = self._rows(tile_sum + big_step, keys[len(empty):])
            if small is None or big is None:  # pragma: no cover - a solution inconsistent with its rules
                raise TD2048Error("the solution lacks a position after this one: is it of this board and game?")
            q, p_cell = 0.0, 1.0 / len(empty)
            for cell in range(len(empty)):  # summed as the solver sums them
                q += p_cell * (P_SMALL * small[cell, 0] + P_BIG * big[cell, 0])
            out[direction] = q + reward
        return out

    def header(self, columns: int | None = None) -> dict:
        """The file header, less its payload size and checksum (``columns``: the values' columns written,
        default those held)."""
        columns = self.columns if columns is None else columns
        names = ["goal"] if self.endgame is not None else (["score"] + self.tiles)[:columns]
        header = {"format": FORMAT, "version": VERSION, "board": self.board.name, "game": self.game,
                  "layers": [[s, c] for s, c in zip(self.sums, self.counts, strict=True)],
                  "positions": self.positions, "columns": names, "tiles": self.tiles,
                  "expected_score": self.expected_score, "reach": {str(t): p for t, p in self.reach.items()}}
        if self.endgame is not None:
            header["endgame"] = self.endgame.to_json()
        return header

    def save(self, path, reach: bool = True) -> None:
        """Write the solution file, atomically (a reader sees the old file or the whole one).

        Parameters
        ----------
        path : str or os.PathLike
            Where.
        reach : bool
            Write each tile's reach probabilities beside the expected scores, where this solution holds them.
        """
        if self.values is None:
            raise TD2048Error("this solution holds no values to save")
        columns = self.columns if reach else 1
        writer = SolutionWriter(path, self.board, self.game, self.sums, self.counts, columns, self.aims - 1)
        try:
            for i in range(len(self.sums) - 1, -1, -1):
                writer.add(i, self.keys[i], self.values[i])
            writer.finish(self.start)
        except BaseException:
            writer.abort()
            raise


class SolutionWriter:
    """A solution file written layer by layer as the solver finishes them (the largest tile sum first), then
    its header: atomically, as :meth:`Solution.save`.

    Parameters
    ----------
    path : str or os.PathLike
        The file.
    board, game
        The board and game.
    sums, counts : list of int
        The layers' tile sums (increasing) and sizes.
    columns : int
        The values' columns written: 1 (the expected score) or 1 + ``reach_tiles``.
    reach_tiles : int
        The tiles of the start's reach (codes 1 .. reach_tiles).
    endgame : Endgame or None
        The endgame solved, if one was.
    """

    def __init__(self, path, board, game, sums, counts, columns: int, reach_tiles: int, endgame=None):
        self.path = Path(path)
        self.solution = Solution(board, game, sums, None, None, np.zeros(1 + reach_tiles), counts=counts,
                                 endgame=endgame)
        self.columns = columns
        self.digest = hashlib.sha256()
        self.expected = len(sums) - 1
        self.payload = 0
        self.flushed = self.unflushed = 0
        self._context = atomic_open(self.path, "wb")
        self.file = self._context.__enter__()
        placeholder = self.solution.header(columns)
        placeholder.update(expected_score=-1.2345678901234567e+300, payload_bytes=2**62, sha256="0" * 64,
                           reach={k: -1.2345678901234567e+300 for k in placeholder["reach"]})
        self.size = len(_encode(placeholder)) + ALIGN
        self.size += -self.size % ALIGN
        self._write(b"\0" * self.size, hashed=False)

    def _write(self, blob, hashed=True) -> None:
        try:
            self.file.write(blob)
            self.unflushed += len(blob)
            if self.unflushed >= _FLUSH:  # start writing it to disk now, not all at the final fsync
                self.file.flush()
                end = self.file.tell()
                with contextlib.suppress(AttributeError, OSError):
                    os.posix_fadvise(self.file.fileno(), self.flushed, end - self.flushed, os.POSIX_FADV_DONTNEED)
                self.flushed, self.unflushed = end, 0
        except OSError as e:
            raise TD2048Error(f"cannot write {self.path}: {e.strerror or e}") from None
        if hashed:
            self.digest.update(blob)
            self.payload += len(blob)

    def add(self, i: int, keys: np.ndarray, values: np.ndarray) -> None:
        """Write layer i (layers come from the largest tile sum down): its keys, and the first ``columns`` of
        its values."""
        if i != self.expected or len(keys) != self.solution.counts[i]:
            raise TD2048Error(f"layer {i} of the solution written out of order")  # pragma: no cover
        self.expected -= 1
        self._write(np.ascontiguousarray(keys, "<u8").tobytes())
        self._write(np.ascontiguousarray(np.asarray(values)[:, :self.columns], "<f8").tobytes())

    def finish(self, start) -> None:
        """Write the header (with the start's values) and put the file in place."""
        if self.expected != -1:
            raise TD2048Error("the solution file is missing layers")  # pragma: no cover
        self.solution.start = np.asarray(start, np.float64)
        header = self.solution.header(self.columns)
        header["payload_bytes"] = self.payload
        header["sha256"] = self.digest.hexdigest()
        encoded = _encode(header, self.size)
        try:
            self.file.seek(0)
            self.file.write(encoded)
        except OSError as e:
            self.abort()
            raise TD2048Error(f"cannot write {self.path}: {e.strerror or e}") from None
        context, self._context = self._context, None
        context.__exit__(None, None, None)

    def abort(self) -> None:
        """Give up: the temporary file goes, an existing file at the path stays as it was."""
        if self._context is not None:
            context, self._context = self._context, None
            context.__exit__(TD2048Error, TD2048Error("aborted"), None)


def probability(p: float) -> float:
    """A probability summed in floating point, within [0, 1]: a sure reach is 1.0, not 1.0000000000000002."""
    return min(max(float(p), 0.0), 1.0)


def _encode(header: dict, size: int | None = None) -> bytes:
    """The magic, length and header, padded to a multiple of :data:`ALIGN` bytes (or to exactly ``size``)."""
    text = json.dumps(header, separators=(",", ":")).encode()
    length = len(MAGIC) + 8 + len(text)
    pad = -length % ALIGN if size is None else size - length
    if pad < 0:  # pragma: no cover - the reserved header is longer than any real one
        raise TD2048Error("the solution header outgrew its reserved space")
    text += b" " * pad
    return MAGIC + len(text).to_bytes(8, "little") + text


def load_solution(path, board=None, game=None, verify: bool = True, endgame: bool | None = False) -> Solution:
    """Open a solution file, memory-mapped.

    Parameters
    ----------
    path : str or os.PathLike
        The file (:meth:`Solution.save`, ``td2048 solve --out``).
    board : BoardShape, str or None
        The board it must be of (None: any).
    game : str or None
        The game it must be of (None: any).
    verify : bool
        Check the payload's SHA-256 (reads the whole file once).
    endgame : bool or None
        False: a whole board's solution (an endgame's file is refused); True: an endgame's; None: either.

    Returns
    -------
    Solution
        Its keys and values are views of the mapped file.

    Raises
    ------
    TD2048Error
        In one line, for a file that cannot be read, is not a solution, is truncated or altered, or is of
        another board or game.
    """
    path = Path(path)
    try:
        with open(path, "rb") as f:
            if os.fstat(f.fileno()).st_size == 0:
                raise TD2048Error(f"{path} is not a td2048 solution file (it is empty)")
            mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    except OSError as e:
        raise TD2048Error(f"cannot read {path}: {e.strerror or e}") from None
    if mapped[:len(MAGIC)] != MAGIC or len(mapped) < len(MAGIC) + 8:
        raise TD2048Error(f"{path} is not a td2048 solution file")
    length = int.from_bytes(mapped[8:16], "little")
    start = 16 + length
    try:
        header = json.loads(bytes(mapped[16:start]))
        if header["format"] != FORMAT:
            raise ValueError
        version = header.get("version")
    except (ValueError, KeyError, TypeError):
        raise TD2048Error(f"{path} is not a td2048 solution file (its header cannot be read)") from None
    if version != VERSION:
        older = isinstance(version, int) and version < VERSION
        raise TD2048Error(f"{path} is a solution file of {'an older' if older else 'another'} format (version "
                          f"{version}) that this td2048 does not read: solve again, td2048 solve --board "
                          f"{header.get('board', 'RxC')} --out {path.name}")
    try:
        positions, columns, payload = int(header["positions"]), len(header["columns"]), int(header["payload_bytes"])
        layers = [(int(s), int(c)) for s, c in header["layers"]]
        tiles = [int(t) for t in header["tiles"]]
        start_values = [float(header["expected_score"])] + [float(header["reach"][str(t)]) for t in tiles]
        posed = None if header.get("endgame") is None else Endgame.from_json(header["endgame"])
    except (ValueError, KeyError, TypeError, TD2048Error):
        raise TD2048Error(f"{path} is not a td2048 solution file (its header cannot be read)") from None
    if len(mapped) != start + payload or payload != positions * 8 * (1 + columns):
        raise TD2048Error(f"{path} is truncated or altered: {len(mapped) - start} bytes of payload, not {payload}")
    if board is not None and as_shape(board).name != header["board"]:
        raise TD2048Error(f"{path} solves {header['game']} on {header['board']}, not {as_shape(board).name}")
    if game is not None and str(game) != header["game"]:
        raise TD2048Error(f"{path} solves {header['game']} on {header['board']}, not the game {game}")
    if endgame is False and posed is not None:
        raise TD2048Error(f"{path} is an endgame's table ({posed.describe()}), not the whole game's solution")
    if endgame is True and posed is None:
        raise TD2048Error(f"{path} is the whole game's solution, not an endgame's table")
    if verify and _file_digest(path, start) != header["sha256"]:
        raise TD2048Error(f"{path} is altered or damaged: its checksum does not match")
    keys: list = [None] * len(layers)
    values: list = [None] * len(layers)
    at = start
    for i in range(len(layers) - 1, -1, -1):
        count = layers[i][1]
        keys[i] = np.frombuffer(mapped, "<u8", count, at)
        at += 8 * count
        values[i] = np.frombuffer(mapped, "<f8", count * columns, at).reshape(count, columns)
        at += 8 * count * columns
    return Solution(header["board"], header["game"], [s for s, _ in layers], keys, values, start_values,
                    endgame=posed)


def _file_digest(path: Path, start: int) -> str:
    """The SHA-256 of a file's bytes from ``start``, read in blocks (not mapped: no memory held)."""
    digest = hashlib.sha256()
    buffer = bytearray(_BLOCK)
    view = memoryview(buffer)
    with open(path, "rb") as f:
        f.seek(start)
        while True:
            got = f.readinto(buffer)
            if not got:
                break
            digest.update(view[:got])
    return digest.hexdigest()
