"""The forward pass: every position reachable from the start, layer by layer of tile sum.

A move keeps the sum of the tiles' values and a new tile adds its own (2 or 4 in 2048, 1 or 2 in
2584), so the positions of sum S have their children in the layers S + 2 and S + 4 (S + 1 and S + 2).
Each layer is a sorted, deduplicated ``np.uint64`` array of canonical keys (:mod:`td2048.games.keys`).
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from td2048.errors import TD2048Error
from td2048.games.game2048 import row_table, vertical_offset
from td2048.games.shape import BoardShape, as_shape
from td2048.games.tiles import GAMES, tile_value
from td2048.games.wide import wide_row_table, wide_vertical_offset
from td2048.solve.chance import P_BIG, P_SMALL
from td2048.solve.endgame import Endgame, no_endgame
from td2048.solve.kernels import COMPILED
from td2048.solve.positions import canonical_keys, cell_shifts
from td2048.solve.sets import merge_unique, table_size
from td2048.threads import split_range

MAX_CELLS_2048 = 12  # 4-bit cells hold codes up to 15: enough on at most 12 cells
MAX_CELLS_2584 = 12  # 12 cells x 5 bits fit one uint64 key


@dataclass
class Rules:
    """A board and game, in the form the kernels take.

    Parameters
    ----------
    board : BoardShape or str
        The board (``"3x3"``).
    game : str
        ``"2048"`` or ``"2584"``.
    endgame : Endgame or None
        Tiles fixed in place and a tile to build (:mod:`td2048.solve.endgame`; 2048 only), else the whole game.
    """

    board: BoardShape
    game: str = "2048"
    endgame: Endgame | None = None
    wide: bool = field(init=False)

    def __post_init__(self):
        self.board = as_shape(self.board)
        if self.game not in GAMES:
            raise TD2048Error(f"unknown game {self.game!r}: 2048 or 2584")
        self.wide = self.game == "2584"
        limit = MAX_CELLS_2584 if self.wide else MAX_CELLS_2048
        if self.board.n_cells > limit:
            raise TD2048Error(f"the solver takes boards of at most {limit} cells, not {self.board.name}")
        if self.endgame is not None:
            if self.wide:
                raise TD2048Error("endgames are solved for 2048 (4-bit cells), not 2584")
            self.endgame.check(self.board)

    @property
    def n(self) -> int:
        return self.board.n_cells

    @cached_property
    def args(self) -> tuple:
        """The kernels' arguments after the keys: wide, tables, vertical, frame, n, perms, shifts, square."""
        shape = self.board
        if self.wide:
            table4 = _read_only(np.zeros(1, np.uint64))  # read-only as the real tables: one compiled version
            table5 = np.ascontiguousarray(wide_row_table(self.game, shape))
            vertical = wide_vertical_offset(shape)
        else:
            table4 = np.ascontiguousarray(row_table(shape))
            table5 = _read_only(np.zeros((8, 1), np.uint32))
            vertical = vertical_offset(shape)
        frame = np.array(shape.frame_cells, np.int64)
        perms = np.array(shape.symmetries, np.int64)
        return (self.wide, table4, table5, np.int64(vertical), frame, np.int64(self.n), perms,
                np.uint64(4 * (4 - shape.cols)), np.uint64(16 * (4 - shape.rows)), shape.square)

    @cached_property
    def endgame_args(self) -> tuple:
        """The last arguments of the kernels that make moves: the endgame's masks
        (:meth:`td2048.solve.endgame.Endgame.masks`), all 0 for the whole game."""
        return no_endgame() if self.endgame is None else self.endgame.masks(self.board)

    @property
    def kernels(self):
        """The layer kernels compiled for this game (:data:`td2048.solve.kernels.COMPILED`)."""
        return COMPILED[self.wide]

    @cached_property
    def shifts(self) -> np.ndarray:
        """The bit offset of each board cell in the board's image under each symmetry
        (:func:`td2048.solve.positions.cell_shifts`)."""
        a = self.args
        return cell_shifts(a[0], a[4], a[5], a[6], a[7], a[8], a[9])

    @property
    def tile_steps(self) -> tuple[int, int]:
        """What a new tile of code 1 and of code 2 adds to the tile sum."""
        return tile_value(self.game, 1), tile_value(self.game, 2)

    def keys_of(self, boards) -> np.ndarray:
        """Canonical keys of boards given as rows of board-cell codes (``[m, n]``)."""
        boards = np.ascontiguousarray(np.asarray(boards, np.int64).reshape(-1, self.n))
        a = self.args
        return canonical_keys(boards, a[0], a[4], a[5], a[6], a[7], a[8], a[9])

    def codes_of(self, keys) -> np.ndarray:
        """Board-cell codes (``[m, n]``) of keys: a key's board in the least symmetric orientation."""
        keys = np.asarray(keys, np.uint64).reshape(-1)
        if self.wide:
            shifts = np.array([5 * i for i in range(self.n)], np.uint64)
            return ((keys[:, None] >> shifts) & np.uint64(31)).astype(np.int64)
        shifts = np.array([4 * f for f in self.board.frame_cells], np.uint64)
        return ((keys[:, None] >> shifts) & np.uint64(15)).astype(np.int64)

    def tile_sum(self, codes) -> int:
        return int(sum(tile_value(self.game, int(c)) for c in codes))

    def start_boards(self) -> tuple[list[list[int]], list[float]]:
        """Every way the game deals its start, not up to symmetry: (cell codes row-major, probability) pairs.

        An empty board takes two new tiles, each on a uniformly random empty cell, code 1 with p 0.9
        and code 2 with p 0.1; an endgame's start is its fixed tiles with two new tiles on the free cells."""
        n = self.n
        free = list(range(n)) if self.endgame is None else self.endgame.free(self.board)
        empty = [0] * n if self.endgame is None else self.endgame.start_codes(self.board)
        p_code = {1: P_SMALL, 2: P_BIG}
        boards, probs = [], []
        for i in free:
            for j in free:
                if i == j:
                    continue
                for a in (1, 2):
                    for b in (1, 2):
                        codes = list(empty)
                        codes[i], codes[j] = a, b
                        boards.append(codes)
                        probs.append(p_code[a] * p_code[b] / (len(free) * (len(free) - 1)))
        return boards, probs

    def start(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The start positions: (keys, their probabilities, their tile sums), keys sorted and unique
        (:meth:`start_boards` up to symmetry)."""
        boards, probs = self.start_boards()
        keys = self.keys_of(boards)
        unique, inverse = np.unique(keys, return_inverse=True)
        weights = np.bincount(inverse, weights=probs, minlength=len(unique))
        sums = np.array([self.tile_sum(c) for c in self.codes_of(unique)], np.int64)
        return unique, weights, sums


def _read_only(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


class LayerStore:
    """The layers' keys and afterstates, written as the forward pass finds them, read back by the backward pass.

    In a temporary file (deleted on :meth:`close`) unless ``in_memory``: a solve then holds only the layers
    it works on.

    Parameters
    ----------
    directory : str or os.PathLike or None
        Where the temporary file goes (None: the system's temporary directory).
    in_memory : bool
        Keep them in memory instead (small boards, and solves that keep every value).
    count_only : bool
        Keep only the layers' sizes (``td2048 solve --count``: a board too large to solve here).
    """

    def __init__(self, directory=None, in_memory: bool = False, count_only: bool = False):
        self.count_only = count_only
        self.sums: list[int] = []
        self.counts: list[int] = []
        self.after_counts: list[int] = []
        self._offsets: list[int] = []
        self._held: list[tuple[np.ndarray, np.ndarray]] | None = [] if in_memory else None
        self._file = None
        if not in_memory and not count_only:
            try:
                self._file = tempfile.TemporaryFile(prefix="td2048-keys-", dir=directory)
            except OSError as e:
                where = directory or "the temporary directory"
                raise TD2048Error(f"cannot write the solver's temporary file in {where}: {e.strerror}") from None
        self._size = 0

    def add(self, tile_sum: int, keys: np.ndarray, afters: np.ndarray) -> None:
        """Append the next layer (tile sums increasing): its positions' keys and its afterstates' keys."""
        self.sums.append(int(tile_sum))
        self.counts.append(len(keys))
        self.after_counts.append(len(afters))
        self._offsets.append(self._size)
        if self.count_only:
            return
        if self._held is not None:
            self._held.append((keys, afters))
        else:
            self._file.seek(self._size)
            try:
                np.ascontiguousarray(keys, "<u8").tofile(self._file)
                np.ascontiguousarray(afters, "<u8").tofile(self._file)
            except OSError as e:
                raise TD2048Error(f"cannot write the solver's temporary file: {e.strerror or e}") from None
        self._size += 8 * (len(keys) + len(afters))

    def keys(self, i: int) -> np.ndarray:
        """Layer i's sorted keys."""
        if self._held is not None:
            return self._held[i][0]
        self._file.seek(self._offsets[i])
        return np.fromfile(self._file, "<u8", self.counts[i]).astype(np.uint64, copy=False)

    def afters(self, i: int) -> np.ndarray:
        """Layer i's afterstates' sorted keys."""
        if self._held is not None:
            return self._held[i][1]
        self._file.seek(self._offsets[i] + 8 * self.counts[i])
        return np.fromfile(self._file, "<u8", self.after_counts[i]).astype(np.uint64, copy=False)

    def release(self, i: int) -> None:
        """Give back the disk of layers i and above (the backward pass has read them: it reads them last first, so
        the file shrinks from its end while the solution file grows)."""
        if self._file is not None and i < len(self._offsets):
            self._file.truncate(self._offsets[i])
            self._size = min(self._size, self._offsets[i])

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


@dataclass
class Layers:
    """The reachable positions by tile sum.

    Attributes
    ----------
    store : LayerStore
        The layers' tile sums (increasing), counts, keys and afterstates.
    top_code : int
        The largest code any position holds.
    """

    store: LayerStore
    top_code: int

    @property
    def sums(self) -> list[int]:
        return self.store.sums

    @property
    def counts(self) -> list[int]:
        return self.store.counts

    @property
    def positions(self) -> int:
        return int(sum(self.store.counts))

    def keys(self, i: int) -> np.ndarray:
        """Layer i's sorted keys."""
        return self.store.keys(i)

    def afters(self, i: int) -> np.ndarray:
        """Layer i's afterstates' sorted keys."""
        return self.store.afters(i)


def enumerate_layers(rules: Rules, on_layer=None, store: LayerStore | None = None) -> Layers:
    """Every position reachable from the start, up to symmetry.

    Each layer's afterstates, then their children, are made on every core
    (:func:`~td2048.solve.kernels.COMPILED`: ``afterstates_part``, then ``expand_part``; deduplicated in
    hash sets, sorted), the parts merged into the afterstates of the layer and into the layers of the children.

    Parameters
    ----------
    rules : Rules
        The board and game.
    on_layer : callable or None
        Called as ``on_layer(tile_sum, positions)`` after each layer.
    store : LayerStore or None
        Where the keys go (None: in memory).

    Returns
    -------
    Layers
    """
    store = store if store is not None else LayerStore(in_memory=True)
    start_keys, _, start_sums = rules.start()
    pending: dict[int, np.ndarray] = {}
    for s in np.unique(start_sums):
        pending[int(s)] = start_keys[start_sums == s]
    small_step, big_step = rules.tile_steps
    top = 0
    a = rules.args
    shifts = rules.shifts
    geometry = (a[0], a[4], a[5], a[6], a[7], a[8], a[9])  # wide, frame, n, perms, shifts of the frame, square
    while pending:
        s = min(pending)
        keys = pending.pop(s)
        size = table_size(min(len(keys), 1 << 20))
        afters = np.zeros(0, np.uint64)
        for part_top, part in split_range(rules.kernels.afterstates_part, len(keys), keys, *a, size,
                                          *rules.endgame_args):
            top = max(top, int(part_top))
            afters = merge_unique(afters, part)
        store.add(s, keys, afters)
        for small, big in split_range(rules.kernels.expand_part, len(afters), afters, *geometry, shifts, size):
            for step, children in ((small_step, small), (big_step, big)):
                if len(children):
                    have = pending.get(s + step)
                    pending[s + step] = children if have is None else merge_unique(have, children)
        if on_layer is not None:
            on_layer(s, len(keys))
    return Layers(store, top)
