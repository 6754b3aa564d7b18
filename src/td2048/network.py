"""The runtime network: a :class:`~td2048.spec.NetworkSpec` with its weights and its compiled kernels.

What a network is (tuples, isomorphisms, presets, the weight layout, how a tuple reads a board) is
:mod:`td2048.spec`, plain Python, and its names are imported from there; :func:`~td2048.spec.parse_network`,
part of the public API (``td2048.parse_network``), is importable from here too. This module holds the weights
(one flat float32 array, tables at the spec's ``table_offsets``, allocated on cache lines and, when large, in
huge pages) and loads the network's kernels (:func:`td2048.kernels.kernels_for`) when they are first needed.
"""

from __future__ import annotations

import functools
import mmap

import numpy as np

from td2048.config import DEFAULT_MEMORY_LIMIT
from td2048.errors import TD2048Error
from td2048.games.tiles import GAMES
from td2048.spec import (
    METHODS,
    WEIGHT_BITS,
    WEIGHT_LIMIT,
    WEIGHT_STEP,
    NetworkSpec,
    format_bytes,
    parse_network,  # noqa: F401 - public API: td2048.parse_network, and docs/reference/api.md renders it from here
)

CACHE_LINE = 64
HUGE_PAGE = 2 << 20


def aligned_bytes(size: int, zeroed: bool = True) -> np.ndarray:
    """``size`` bytes for weights: on a 64-byte cache line, and in 2 MiB huge pages when large.

    Weights start on a line so that merging thread copies moves chunks of 32 weights as two
    cache lines, not three. Tables of 2 MiB and more are read at random: with 4 KiB pages
    nearly every read of a 4x6 network (256 MiB) also misses the TLB, so large buffers are
    mapped anonymously and advised for transparent huge pages (``MADV_HUGEPAGE``; these
    machines run THP in ``madvise`` mode, where NumPy's own allocations never get them). The
    advice must come before the pages are first touched: the kernel zeroes them on the first
    write, in 2 MiB pages. They are all touched here, as a C++ program's zeroing ``new[]()`` does:
    a first touch of hundreds of MiB is slow, and it belongs to allocating, not to the first
    episodes. The buffer is zeroed either way.

    Parameters
    ----------
    size : int
        Bytes wanted.
    zeroed : bool
        Small buffers: zeroed (else left as they are); large ones are always zeroed.

    Returns
    -------
    numpy.ndarray
        ``uint8[size]``, starting on a cache line (on a huge page when large).
    """
    if size >= HUGE_PAGE and hasattr(mmap, "MADV_HUGEPAGE"):
        area = mmap.mmap(-1, size + HUGE_PAGE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        raw = np.frombuffer(area, np.uint8)
        start = -raw.ctypes.data % HUGE_PAGE
        area.madvise(mmap.MADV_HUGEPAGE, start, size - size % mmap.PAGESIZE)
        weights = raw[start:start + size]
        weights[::mmap.PAGESIZE] = 0  # fault every page in now, not in the first timed episodes
        return weights
    raw = (np.zeros if zeroed else np.empty)(size + CACHE_LINE, np.uint8)
    start = -raw.ctypes.data % CACHE_LINE
    return raw[start:start + size]


def aligned_zeros(*shape: int) -> np.ndarray:
    """float32 zeros starting on a cache line (see aligned_bytes)."""
    return aligned_bytes(int(np.prod(shape)) * 4).view(np.float32).reshape(shape)


TC_START_EVIDENCE = 300.0
"""With a start rate below 1 (``--tc-start-rate``), the accumulated |update| that a TC phase's start counts as:
every weight's accumulators start at E = rate x this, A = this, so its rate moves from the start rate to
its own errors' once their |updates| add up to several times this (in units of an update, ``--tc-alpha`` /
features x the TD error). How it was chosen: docs/benchmarks/experiments.md, "Starting rate of the TC phase"."""


def fresh_accumulators(n_weights: int, rate: float = 1.0) -> np.ndarray:
    """TC's accumulators as a TC phase starts them, so that each weight's first TC step has ``rate``.

    At rate 1 both start at the smallest normal float32 (TDL2048+'s convention: the first step is
    ``--tc-alpha``'s whole step, and the weight's own errors take over at once). Below 1, E = rate x
    :data:`TC_START_EVIDENCE` and A = :data:`TC_START_EVIDENCE`.

    Parameters
    ----------
    n_weights : int
        The network's weights.
    rate : float
        Each weight's first rate, in (0, 1].

    Returns
    -------
    numpy.ndarray
        ``float32[2 * n_weights]`` on cache lines: per weight its accumulated error and accumulated absolute error.

    Raises
    ------
    TD2048Error
        When there is not enough memory for them.
    """
    try:
        acc = aligned_zeros(2 * n_weights)
    except MemoryError:
        raise TD2048Error(f"not enough memory for {format_bytes(8 * n_weights)} of TC accumulators") from None
    fill_fresh_accumulators(acc, rate)
    return acc


def fill_fresh_accumulators(acc: np.ndarray, rate: float = 1.0) -> None:
    """Set TC's accumulators (pairs, as :func:`fresh_accumulators` makes them) as a TC phase starts them.

    Parameters
    ----------
    acc : numpy.ndarray
        ``float32[2 * n]``, written in place.
    rate : float
        Each weight's first rate, in (0, 1].
    """
    if rate == 1.0:
        acc[:] = np.finfo(np.float32).tiny
    else:
        acc[0::2] = rate * TC_START_EVIDENCE
        acc[1::2] = TC_START_EVIDENCE


class Network:
    """A network spec with its weights and its compiled kernels (:func:`td2048.kernels.kernels_for`).

    Parameters
    ----------
    spec : NetworkSpec
        What the network is (:mod:`td2048.spec`).
    weights : numpy.ndarray or None
        ``float32[spec.n_weights]``, tables at the spec's ``table_offsets``; None: zeros, on cache lines.
    memory_limit : int
        The most bytes of weights allowed.
    game : str
        ``"2048"`` or ``"2584"``.
    cell_bits : int or None
        4 or 5 bits a cell; None: 5 for 2584, 4 for 2048 (whose 4-bit games go on on 5-bit cells
        past two 32768 tiles).
    method : str
        What V values: ``"afterstate"`` or ``"state"`` (see :data:`METHODS`).
    accumulators : numpy.ndarray or None
        Temporal coherence's accumulators, ``float32[2 * n_weights]``; None until a TC phase begins.
    weight_bits : int
        32: float32 weights; 16: ``int16`` ones, each a whole number of :data:`td2048.spec.WEIGHT_STEP` points
        and at most :data:`td2048.spec.WEIGHT_LIMIT` steps either way (half the memory; 2048 with afterstate
        values, learning by TD: not TC; :meth:`with_weight_bits` converts).

    Raises
    ------
    TD2048Error
        An unknown game or method, cells that cannot hold the game, weights over the memory limit,
        weights or accumulators of another size or type, or too little memory.
    """

    def __init__(self, spec: NetworkSpec, weights: np.ndarray | None = None,
                 memory_limit: int = DEFAULT_MEMORY_LIMIT, game: str = "2048", cell_bits: int | None = None,
                 method: str = "afterstate", accumulators: np.ndarray | None = None, weight_bits: int = 32):
        if game not in GAMES:
            raise TD2048Error(f"unknown game {game!r} (known: {', '.join(GAMES)})")
        if method not in METHODS:
            raise TD2048Error(f"--method must be one of {', '.join(METHODS)}, not {method!r}")
        spec.check_memory(memory_limit)
        self.spec = spec
        self.game = game
        self.method = method
        if cell_bits not in (None, 4, 5) or (game == "2584" and cell_bits == 4):
            raise TD2048Error(f"cells of {cell_bits} bits cannot hold {game}: 2584 needs 5, 2048 takes 4 or 5")
        # 5-bit cells (two words) for 2584, and for 2048 when asked: tiles past 32768 then merge
        self.wide = game == "2584" or cell_bits == 5
        if weight_bits not in WEIGHT_BITS:
            raise TD2048Error(f"--weight-bits must be 32 or 16, not {weight_bits}")
        if weight_bits == 16 and (game != "2048" or method != "afterstate" or accumulators is not None):
            raise TD2048Error("16-bit weights are for 2048 with afterstate values, learning by TD "
                              "(not 2584, --method state or TC)")
        self.weight_bits = weight_bits
        self._rounding = None  # 16-bit weights: td_update's random word, made at its first call
        dtype = np.float32 if weight_bits == 32 else np.int16
        if weights is None:
            try:
                weights = aligned_bytes(spec.n_weights * np.dtype(dtype).itemsize).view(dtype)
            except MemoryError:
                raise TD2048Error(f"not enough memory for {format_bytes(spec.nbytes)} of weights") from None
        elif weights.dtype != dtype or weights.shape != (spec.n_weights,):
            raise TD2048Error(f"weights do not fit network {spec.name}: expected {spec.n_weights} "
                              f"{np.dtype(dtype).name}, got {weights.shape} {weights.dtype}")
        self.weights = weights
        if accumulators is not None and (accumulators.dtype != np.float32 or accumulators.size != 2 * weights.size):
            raise TD2048Error(f"TC accumulators do not fit network {spec.name}: expected {2 * weights.size} float32")
        # temporal coherence (--tc): per weight its accumulated error and accumulated absolute
        # error, interleaved (see td2048.kernels.features); None until a TC phase begins
        self.accumulators = accumulators

    @functools.cached_property
    def kernels(self):
        """The compiled kernels of this network's cells, loaded (or compiled) when first needed: a model
        file can be read and checked without them."""
        return self.kernels_for(wide=self.wide)

    def start_accumulators(self, rate: float = 1.0) -> np.ndarray:
        """TC's accumulators, made fresh if there are none (see :func:`fresh_accumulators`).

        Parameters
        ----------
        rate : float
            Each weight's first TC rate, |accumulated error| / accumulated |error|, in (0, 1]: 1 is
            TDL2048+'s convention; a model's own accumulators, where it has them, are kept.

        Returns
        -------
        numpy.ndarray
            ``float32[2 * n_weights]``: per weight its accumulated error and accumulated absolute error.

        Raises
        ------
        TD2048Error
            When there is not enough memory for them.
        """
        if self.weight_bits != 32:
            raise TD2048Error("temporal coherence needs 32-bit weights (16-bit ones learn by TD)")
        if self.accumulators is None:
            self.accumulators = fresh_accumulators(self.weights.size, rate)
        return self.accumulators

    @property
    def state_values(self) -> bool:
        """Whether V values states (``method`` ``"state"``) rather than afterstates."""
        return self.method == "state"

    @property
    def cell_bits(self) -> int:
        """Bits a cell: 4, or 5 on wide boards."""
        return 5 if self.wide else 4

    @property
    def board(self):
        """The board's shape (:class:`~td2048.games.shape.BoardShape`) the network plays on."""
        return self.spec.board

    def row_table(self, wide: bool | None = None) -> np.ndarray:
        """The row table the kernels slide this network's boards with: its board's, of its game.

        Parameters
        ----------
        wide : bool or None
            For 5-bit cells; None: the network's own cells.

        Returns
        -------
        numpy.ndarray
            :func:`td2048.games.game2048.row_table` or :func:`td2048.games.wide.wide_row_table`.
        """
        from td2048.games.game2048 import row_table
        from td2048.games.wide import wide_row_table

        wide = self.wide if wide is None else wide
        return wide_row_table(self.game, self.board) if wide else row_table(self.board)

    def kernels_for(self, tracked: bool = False, wide: bool | None = None, tc: bool = False, records: bool = False,
                    expected: bool = False, shared: bool = False):
        """This network's compiled kernels (see :func:`td2048.kernels.kernels_for`).

        Parameters
        ----------
        tracked : bool
            The variant for multi-thread copies, which flags the weight regions it changes.
        wide : bool or None
            For 5-bit cells; None: the network's own cells.
        tc : bool
            Temporal coherence updates.
        records : bool
            TC on records, each weight beside its accumulators (:mod:`td2048.kernels.records`).
        expected : bool
            Learning by expected targets (see :func:`td2048.kernels.kernels_for`).
        shared : bool
            For threads that write one table (16-bit weights: see :func:`td2048.kernels.kernels_for`).

        Returns
        -------
        module
            The generated kernel module.
        """
        from td2048.kernels import kernels_for

        return kernels_for(self.spec, tracked=tracked, wide=self.wide if wide is None else wide,
                           state_values=self.state_values, tc=tc, records=records, expected=expected,
                           short=self.weight_bits == 16, shared=shared)

    def wide_kernels(self, tracked: bool = False, tc: bool = False, records: bool = False, expected: bool = False):
        """Kernels of this network on 5-bit cells: where a 4-bit episode goes on past two 32768 tiles.

        Parameters
        ----------
        tracked : bool
            The variant for multi-thread copies.
        tc : bool
            Temporal coherence updates.
        records : bool
            TC on records.
        expected : bool
            Learning by expected targets.

        Returns
        -------
        module
            The generated kernel module.
        """
        return self.kernels_for(tracked, wide=True, tc=tc, records=records, expected=expected)

    def copy(self) -> Network:
        """The same network with a copy of the weights (and of TC's accumulators).

        Returns
        -------
        Network
            The copy.
        """
        acc = None if self.accumulators is None else self.accumulators.copy()
        return Network(self.spec, self.weights.copy(), memory_limit=self.spec.nbytes, game=self.game,
                       cell_bits=self.cell_bits, method=self.method, accumulators=acc, weight_bits=self.weight_bits)

    def with_weight_bits(self, bits: int) -> Network:
        """This network with weights of ``bits`` bits: itself when they already are; else a converted copy.

        To 16 bits each weight is rounded to the nearest whole step (:data:`td2048.spec.WEIGHT_STEP`) and held
        within :data:`td2048.spec.WEIGHT_LIMIT` steps; to 32, each is its steps times the step.

        Parameters
        ----------
        bits : int
            32 or 16.

        Returns
        -------
        Network
            A network of the same spec, game, cells and method.

        Raises
        ------
        TD2048Error
            As the constructor: other bits, or 16 bits where they do not apply.
        """
        if bits == self.weight_bits:
            return self
        if bits == 16:
            weights = aligned_bytes(2 * self.weights.size).view(np.int16)
            np.clip(np.rint(self.weights / WEIGHT_STEP), -WEIGHT_LIMIT, WEIGHT_LIMIT, out=weights, casting="unsafe")
        else:
            weights = self.float_weights()
        return Network(self.spec, weights, memory_limit=self.spec.nbytes, game=self.game, cell_bits=self.cell_bits,
                       method=self.method, accumulators=self.accumulators, weight_bits=bits)

    def float_weights(self) -> np.ndarray:
        """The weights as float32 values (what a model file holds): the weights themselves on 32 bits, else a
        converted copy.

        Returns
        -------
        numpy.ndarray
            ``float32[spec.n_weights]``.
        """
        if self.weight_bits == 32:
            return self.weights
        weights = aligned_zeros(self.weights.size)
        np.multiply(self.weights, np.float32(WEIGHT_STEP), out=weights)
        return weights

    def saturated_weights(self) -> int:
        """How many 16-bit weights are held at the limit (:data:`td2048.spec.WEIGHT_LIMIT` steps): 0 on 32 bits.

        Returns
        -------
        int
            The count.
        """
        if self.weight_bits == 32:
            return 0
        return int(np.count_nonzero(self.weights == WEIGHT_LIMIT) + np.count_nonzero(self.weights == -WEIGHT_LIMIT))

    def fill_optimistic(self, value: float) -> None:
        """Optimistic initialisation: every board (of every stage) starts at ``value``.

        Each weight is set to value / (tuples x isomorphisms), TDL2048+'s ``=V/norm`` for one stage.

        Parameters
        ----------
        value : float
            The value every board starts at.
        """
        w = self.weights
        share = value / self.spec.n_features
        if self.weight_bits == 16:
            share = min(round(share / WEIGHT_STEP), WEIGHT_LIMIT)
        w[:self.spec.stage_markers] = share
        w[self.spec.stage_markers:] = 0

    def reset(self, optimistic: float = 0.0) -> None:
        """Every weight back to a fresh network's, in place: zeros, or every board at ``optimistic``.

        TC's accumulators are dropped (a TC phase makes them fresh again).

        Parameters
        ----------
        optimistic : float
            0: zeros; else :meth:`fill_optimistic`'s value.
        """
        self.accumulators = None
        if optimistic > 0:
            self.fill_optimistic(optimistic)
        else:
            self.weights.fill(0.0)

    def promote_stages(self, rate: float = 1.0) -> None:
        """Each stage after the first becomes a copy of the one before it as it is now, and TC's accumulators of
        those stages, where the network has them, start afresh, as those of a stage promoted at its first board
        keep their start (weight promotion made at a chosen time: ``td2048 train --promote-at``).

        Parameters
        ----------
        rate : float
            The promoted stages' weights' first TC rate (:func:`fresh_accumulators`).

        Raises
        ------
        TD2048Error
            When the network has one stage.
        """
        if not self.spec.stages:
            raise TD2048Error("promoting stages needs a multistage network (--stages)")
        n = self.spec.stage_weights
        for k in range(self.spec.n_stages - 1, 0, -1):  # the last first: each from the one before as it was
            self.weights[k * n:(k + 1) * n] = self.weights[(k - 1) * n:k * n]
        if self.accumulators is not None:
            fill_fresh_accumulators(self.accumulators[2 * n:2 * self.spec.stage_markers], rate)

    def start_from(self, source: Network) -> None:
        """Start a network of one tuple from another network's values.

        Every weight is set to ``source``'s value of the position that reads it, split over the features: the
        board with the weight's codes on the tuple's cells and every other cell empty. On a whole-board network
        (one tuple of every cell) that is each position's own value, so V(board) is the mean of ``source``'s
        values of the board's symmetric images (its value itself where ``source`` reads every isomorphism). A
        tuple of fewer cells (``01234567`` on 3x3: 8 of the 9 cells) starts each symmetric image at the value of
        the board without the cells it does not read. Codes clamped in this network are read as the clamp.

        Parameters
        ----------
        source : Network
            A network of the same board, game, cells and method (usually a smaller, generalising one).

        Raises
        ------
        TD2048Error
            When this network has more than one tuple or has stages, or the two differ in board, game, cells or
            method.
        """
        spec = self.spec
        if self.weight_bits != 32 or source.weight_bits != 32:
            raise TD2048Error("a network starts from another's values on 32-bit weights")
        if not spec.one_tuple:
            raise TD2048Error(f"only a network of one tuple (in one stage) starts from another network's values; "
                              f"{spec.name} is not one")
        for what, mine, theirs in (("board", spec.board, source.spec.board), ("game", self.game, source.game),
                                   ("cells", self.cell_bits, source.cell_bits), ("method", self.method, source.method)):
            if mine != theirs:
                raise TD2048Error(f"network {source.spec.name} is of another {what} ({theirs}, not {mine})")
        from td2048.kernels.transfer import one_tuple_filler

        fill = one_tuple_filler(source.kernels, self.kernels)
        frame = np.array(spec.frame_tuples[0], np.int64)
        fill(self.weights, source.weights, frame, spec.values_per_cell, spec.n_features)

    def _board(self, board):
        return (np.uint64(board[0]), np.uint64(board[1])) if self.wide else np.uint64(board)

    def tables(self) -> list[np.ndarray]:
        """Views of the weight tables, one per tuple (indexed as :mod:`td2048.spec` describes).

        Returns
        -------
        list of numpy.ndarray
            One float32 view per tuple; a multistage network's first stage (of a converted copy, on 16 bits:
            :meth:`float_weights`).
        """
        weights = self.float_weights()
        return [weights[o:o + n] for o, n in zip(self.spec.table_offsets, self.spec.table_sizes, strict=True)]

    def value(self, board: int) -> float:
        """V(board): every tuple on each symmetric board.

        Parameters
        ----------
        board : int or tuple of (int, int)
            A packed board: an int on 4-bit cells, (lo, hi) on 5-bit cells.

        Returns
        -------
        float
            The board's value.
        """
        return float(self.kernels.value(self.weights, self._board(board)))

    def expected_value(self, afterstate: int) -> float:
        """E[V] over the new tile on an afterstate (for state-value networks).

        Parameters
        ----------
        afterstate : int or tuple of (int, int)
            A packed board right after a move.

        Returns
        -------
        float
            The mean over empty cells of 0.9 V(a new tile of code 1 there) + 0.1 V(code 2); 0.0 for afterstate
            networks.
        """
        return float(self.kernels.expected_value(self.weights, self._board(afterstate)))

    def feature_indices(self, board: int) -> np.ndarray:
        """The flat weight indices read for a board.

        Parameters
        ----------
        board : int or tuple of (int, int)
            A packed board: an int on 4-bit cells, (lo, hi) on 5-bit cells.

        Returns
        -------
        numpy.ndarray
            ``uint64[n_features]``: isomorphism-major, then tuple.
        """
        out = np.zeros((1, self.spec.n_features), np.uint64)
        self.kernels.feature_indices(self._board(board), out, 0)
        # the kernels' rows are tuple-major (td2048.kernels.features.feature_column)
        return out[0].reshape(len(self.spec.tuples), self.spec.isomorphisms).T.ravel()

    def td_update(self, board: int, target: float, alpha: float) -> float:
        """One TD step on a board, the learning rate split over all features.

        Parameters
        ----------
        board : int or tuple of (int, int)
            A packed board: an int on 4-bit cells, (lo, hi) on 5-bit cells.
        target : float
            What V(board) moves toward.
        alpha : float
            The learning rate; each feature weight moves by alpha / n_features of the error.

        Returns
        -------
        float
            V(board) after the step.
        """
        from td2048.kernels.merge import NO_TRACKING

        if self.weight_bits == 16 and self._rounding is None:  # the random word of its roundings (see td2048.rng)
            self._rounding = np.ones(1, np.uint64)
        dirty = NO_TRACKING if self.weight_bits == 32 else self._rounding
        return float(self.kernels.td_update(self.weights, dirty, self._board(board), float(target),
                                            alpha / self.spec.n_features))
