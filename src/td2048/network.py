"""N-tuple networks: which cells each tuple reads, how a board becomes table indices, and V(board).

A *tuple* is a list of cells (see the cell diagram in :mod:`td2048.games.bitboard`); it owns one
float32 table of 16**n entries. Its index for a board is the course demo's::

    index = sum over i of code(cell_i) << (4 * i)

so the tuple ``012345`` reads the lowest 24 bits of the board as they are. A tuple is shared by
the board's *isomorphisms*: with 8, V(board) sums the tuple's entry on each of the 8 symmetric
boards (4 rotations x mirror), so every rotation or reflection of a board has the same value::

    V(b) = sum over tuples t, symmetric boards s(b):  table_t[index_t(s(b))]

Rather than 8 lists of transformed cells per tuple, the kernels build the 8 symmetric boards
once per evaluation with bit operations and read every tuple from each with shifts and masks.
A tuple's cells become *runs* of consecutive cells (``012456`` is the two runs ``012`` and
``456``), each one shift and one mask; :mod:`td2048.kernels` writes them out as constant code
for each network.
"""

from __future__ import annotations

import functools
import mmap
import re
from dataclasses import dataclass

import numpy as np

from td2048.config import DEFAULT_MEMORY_LIMIT
from td2048.errors import TD2048Error
from td2048.games.tiles import GAMES, tile_code, tile_value

MAX_TUPLE_CELLS = 8
CELL_VALUES = 16  # 4-bit cells: 16 codes
MAX_CLAMP = 31  # 5-bit cells: codes 0..31
VALID_ISOMORPHISMS = (1, 4, 8)
# what V values: the board right after a move (the default, the course demo's), or the state after
# the new tile, with moves chosen by the expectation over new tiles (see td2048.kernels.episode)
METHODS = ("afterstate", "state")

# Named networks: cells in hex, default isomorphisms.
PRESETS: dict[str, tuple[tuple[str, ...], int]] = {
    # the four rows and four columns, one table each: the course's simplest network
    "8x4": (("0123", "4567", "89ab", "cdef", "048c", "159d", "26ae", "37bf"), 1),
    "2x4": (("0123", "4567"), 8),
    "4x5": (("01234", "45678", "01245", "45689"), 8),
    # the classic network of the course demo and most reports
    "4x6": (("012345", "456789", "012456", "45689a"), 8),
    "5x6": (("012345", "456789", "89abcd", "012456", "45689a"), 8),
    "6x6": (("012456", "456789", "012345", "234569", "01259a", "345678"), 8),
    "7x6": (("012456", "456789", "012345", "234569", "01259a", "345678", "134567"), 8),
    "8x6": (("012456", "456789", "012345", "234569", "01259a", "345678", "134567", "01489a"), 8),
}

CACHE_LINE = 64
HUGE_PAGE = 2 << 20

# Where the tables sit in the flat weight array. A table of 16**n weights is a power of two in size, so
# tables back to back all start at the same place of every cache's set period (L2: 128 KiB; within a
# huge page, 2 MiB), and the weights that every table holds hot (those of early, mostly empty boards)
# fight over the same cache sets. In networks of STAGGERED_BYTES or more, each table starts TABLE_STAGGER
# weights after the one before ends: 272 KiB = 256 + 16 KiB puts 8 tables at 8 different places both
# mod 128 KiB and mod 2 MiB. Measured on trained models (AMD EPYC, 2026-11-23, greedy games, the same
# games): 8x6 +38% to +52% (1.56M moves/s against 1.03-1.18M), 4x6 +3% to +13%, 4x5 (16 MiB) +4%, 8x4
# (2 MiB, cache-resident) no gain; on 8x6 a stagger of 16 KiB gave +27%, of 256 KiB +10% to +17%.
# Cachegrind (a simulated 32 MiB last-level cache) counted 39.8 misses per 8x6 move before, against
# TDL2048+'s 16.8 on the same weights.
TABLE_STAGGER = 69_632
STAGGERED_BYTES = 16 << 20


def aligned_bytes(size: int, zeroed: bool = True) -> np.ndarray:
    """``size`` bytes for weights: on a 64-byte cache line, and in 2 MiB huge pages when large.

    Weights start on a line so that merging thread copies moves chunks of 32 weights as two
    cache lines, not three. Tables of 2 MiB and more are read at random: with 4 KiB pages
    nearly every read of a 4x6 network (256 MiB) also misses the TLB, so large buffers are
    mapped anonymously and advised for transparent huge pages (``MADV_HUGEPAGE``; these
    machines run THP in ``madvise`` mode, where NumPy's own allocations never get them). The
    advice must come before the pages are first touched: the kernel zeroes them on the first
    write, in 2 MiB pages. They are all touched here, as a C++ program's zeroing ``new[]()`` does:
    a first touch can be slow (0.5 s for 256 MiB in a fresh process on the development machine),
    and it belongs to allocating, not to the first episodes. The buffer is zeroed either way."""
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


@dataclass(frozen=True)
class NetworkSpec:
    """What a network is: its tuples of cells and how many isomorphisms share each table."""

    tuples: tuple[tuple[int, ...], ...]
    isomorphisms: int = 8
    name: str = ""
    clamp: int | None = None  # K: feature codes min(code, K), tables of (K+1)**n entries; None: 16**n
    # multistage: each threshold a set of tile codes as a mask (bit c: code c), ascending; a board is
    # in stage k when k thresholds are <= its scale (the OR of 1 << code over its cells); () is one stage
    stages: tuple[int, ...] = ()

    def __post_init__(self):
        validate_tuples(self.tuples)
        object.__setattr__(self, "stages", tuple(int(m) for m in self.stages))
        if any(m <= 1 for m in self.stages) or list(self.stages) != sorted(set(self.stages)):
            raise TD2048Error(f"stage thresholds must rise from one stage to the next, not {list(self.stages)}")
        if self.isomorphisms not in VALID_ISOMORPHISMS:
            raise TD2048Error(f"isomorphisms must be 1, 4 or 8, not {self.isomorphisms}")
        if self.clamp is not None and not 1 <= self.clamp <= MAX_CLAMP:
            raise TD2048Error(f"--clamp must be in 1..{MAX_CLAMP}, not {self.clamp}")
        if not self.name:
            object.__setattr__(self, "name", _name_of(self.tuples, self.isomorphisms))

    @property
    def values_per_cell(self) -> int:
        """Distinct feature codes of a cell: K + 1 with a clamp, else 16."""
        return CELL_VALUES if self.clamp is None else self.clamp + 1

    @property
    def n_features(self) -> int:
        """Tuples x isomorphisms: the number of weights read per evaluation."""
        return len(self.tuples) * self.isomorphisms

    @property
    def table_sizes(self) -> list[int]:
        return [self.values_per_cell ** len(t) for t in self.tuples]

    @property
    def stagger(self) -> int:
        """Weights between one table's end and the next one's start (see TABLE_STAGGER)."""
        return TABLE_STAGGER if 4 * sum(self.table_sizes) * self.n_stages >= STAGGERED_BYTES else 0

    @property
    def table_offsets(self) -> list[int]:
        """Where each tuple's table starts in the flat weight array."""
        return self.layout(self.stagger)[0]

    @property
    def n_stages(self) -> int:
        return len(self.stages) + 1

    @property
    def stage_weights(self) -> int:
        """Weights of one stage: every tuple's table once (and the gaps after them)."""
        return self.layout(self.stagger)[1]

    def layout(self, stagger: int) -> tuple[list[int], int]:
        """(table offsets, weights of a stage) with ``stagger`` weights after each table; with 0, tables
        back to back, as model files of td2048 before 2026-11-23 hold them."""
        offsets, offset = [], 0
        for size in self.table_sizes:
            offsets.append(offset)
            offset += size + stagger
        return offsets, offset

    @property
    def stage_markers(self) -> int:
        """Multistage: where the stages' markers start, one float each after the stages' tables
        (1.0 once the stage was entered and promoted; see td2048.kernels.codegen)."""
        return self.stage_weights * self.n_stages

    @property
    def n_weights(self) -> int:
        return self.weight_count(self.stagger)

    def weight_count(self, stagger: int) -> int:
        """Weights in the flat array with ``stagger`` (see :meth:`layout`): the stages' tables, then a
        multistage network's markers."""
        return self.layout(stagger)[1] * self.n_stages + (self.n_stages if self.stages else 0)

    @property
    def nbytes(self) -> int:
        return 4 * self.n_weights

    def describe(self, game: str = "2048") -> str:
        cells = " ".join(tuple_to_hex(t) for t in self.tuples)
        clamp = f", codes clamped at {self.clamp}" if self.clamp is not None else ""
        stages = f", {self.n_stages} stages (from {', '.join(stage_text(m, game) for m in self.stages)})" \
            if self.stages else ""
        return f"{self.name}: {len(self.tuples)} tuples ({cells}), {self.isomorphisms} isomorphisms{clamp}{stages}, " \
               f"{format_bytes(self.nbytes)} of weights"

    def check_memory(self, limit: int = DEFAULT_MEMORY_LIMIT) -> None:
        if self.nbytes > limit:
            raise TD2048Error(
                f"network {self.name} needs {format_bytes(self.nbytes)} of weights, over the memory limit of "
                f"{format_bytes(limit)} (raise it with --memory-limit, e.g. --memory-limit 4GiB)"
            )

    def to_dict(self) -> dict:
        out = {"name": self.name, "tuples": [tuple_to_hex(t) for t in self.tuples],
               "isomorphisms": self.isomorphisms, "clamp": self.clamp}
        if self.stages:
            out["stages"] = list(self.stages)
        return out


def stage_text(mask: int, game: str = "2048") -> str:
    """A stage threshold as tiles: ``16384`` or ``16384+8192``."""
    return "+".join(str(tile_value(game, c)) for c in range(31, 0, -1) if mask >> c & 1)


def parse_stages(text: str | None, game: str = "2048") -> tuple[int, ...]:
    """``--stages`` text -> threshold masks: ``16384`` (2 stages: boards without and with a tile >= 16384),
    ``8192,16384`` (3 stages), ``16384+8192`` (a threshold of two tiles: TDL2048+'s 24576). Empty: one stage."""
    if text is None or not str(text).strip():
        return ()
    masks = []
    for part in str(text).split(","):
        mask = 0
        for tile in part.split("+"):
            try:
                code = tile_code(game, int(tile))
            except ValueError:
                code = None
            if code is None or code < 2:
                raise TD2048Error(f"bad --stages {text!r}: {tile.strip()!r} is not a tile of {game} above the "
                                  "smallest (example: --stages 16384 or --stages 8192,16384)")
            mask |= 1 << code
        masks.append(mask)
    if masks != sorted(set(masks)):
        raise TD2048Error(f"bad --stages {text!r}: the thresholds must be given in rising order, each once")
    return tuple(masks)


def _name_of(tuples, isomorphisms: int) -> str:
    """The preset's name when the tuples are a preset's (``4x6``, ``4x6/iso4``), else the hex tuples."""
    hexes = tuple(tuple_to_hex(t) for t in tuples)
    for name, (cells, default_iso) in PRESETS.items():
        if cells == hexes:
            return name if isomorphisms == default_iso else f"{name}/iso{isomorphisms}"
    return ",".join(hexes)


def tuple_to_hex(cells) -> str:
    return "".join(f"{c:x}" for c in cells)


def validate_tuples(tuples) -> None:
    if len(tuples) == 0:
        raise TD2048Error("a network needs at least one tuple")
    for t in tuples:
        shown = "".join(f"{c:x}" if 0 <= c < 16 else f"<{c}>" for c in t)
        if len(t) == 0:
            raise TD2048Error("empty tuple in network")
        if len(t) > MAX_TUPLE_CELLS:
            raise TD2048Error(f"tuple {shown} has {len(t)} cells; at most {MAX_TUPLE_CELLS}")
        for c in t:
            if not 0 <= c < 16:
                raise TD2048Error(f"tuple {shown}: cell {c} is outside 0..f")
        if len(set(t)) != len(t):
            raise TD2048Error(f"tuple {shown} repeats a cell")


def parse_network(text: str, isomorphisms: int | None = None, clamp: int | None = None,
                  stages: tuple[int, ...] = ()) -> NetworkSpec:
    """A preset name (``4x6``) or hex tuples separated by commas (``012345,456789``)."""
    text = text.strip()
    if text in PRESETS:
        cells, default_iso = PRESETS[text]
        tuples = tuple(tuple(int(ch, 16) for ch in t) for t in cells)
        iso = default_iso if isomorphisms is None else isomorphisms
        name = text if iso == default_iso else f"{text}/iso{iso}"
        return NetworkSpec(tuples, iso, name, clamp, stages)
    parts = [p.strip() for p in text.split(",")]
    if not text or any(p == "" for p in parts):
        raise TD2048Error(f"bad network {text!r}: empty tuple (expected a preset such as 4x6 or hex tuples "
                          "such as 012345,456789)")
    tuples = []
    for p in parts:
        if not re.fullmatch(r"[0-9a-fA-F]+", p):
            presets = ", ".join(PRESETS)
            raise TD2048Error(f"bad network {text!r}: {p!r} is not a tuple of hex cells 0..f "
                              f"(or a preset: {presets})")
        tuples.append(tuple(int(ch, 16) for ch in p))
    return NetworkSpec(tuple(tuples), 8 if isomorphisms is None else isomorphisms, clamp=clamp, stages=stages)


_SIZE_UNITS = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
               "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40, "k": 2**10, "m": 2**20, "g": 2**30}


def parse_size(text: str) -> int:
    """``512MB`` (10**6), ``4GiB`` (2**30), ``2G`` (2**30) or plain bytes."""
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([a-zA-Z]*)\s*", text)
    if not m or m.group(2).lower() not in _SIZE_UNITS:
        raise TD2048Error(f"bad size {text!r} (examples: 512MB, 4GiB, 2000000000)")
    size = int(float(m.group(1)) * _SIZE_UNITS[m.group(2).lower()])
    if size <= 0:
        raise TD2048Error(f"bad size {text!r}: must be positive")
    return size


def format_bytes(n: int) -> str:
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n} B"


def tuple_runs(cells) -> list[tuple[int, int, int]]:
    """A tuple's runs of consecutive cells as (bit shift in the board, mask, bit place in the index).

    ``012456`` gives ``[(0, 0xfff, 0), (16, 0xfff, 12)]``: cells 0-2 read from bit 0 to index
    bits 0-11, cells 4-6 read from bit 16 to index bits 12-23.
    """
    runs = []  # (first cell, first position, length)
    for i, c in enumerate(cells):
        if runs and c == runs[-1][0] + runs[-1][2] and i == runs[-1][1] + runs[-1][2]:
            runs[-1] = (runs[-1][0], runs[-1][1], runs[-1][2] + 1)
        else:
            runs.append((c, i, 1))
    return [(4 * c, (1 << (4 * n)) - 1, 4 * i) for c, i, n in runs]


class Network:
    """A network spec with its weights (one flat float32 array, tables one after another at the spec's
    ``table_offsets``)
    and its compiled kernels (:func:`td2048.kernels.kernels_for`).

    ``method`` says what V values: ``afterstate`` or ``state`` (see :data:`METHODS`)."""

    def __init__(self, spec: NetworkSpec, weights: np.ndarray | None = None,
                 memory_limit: int = DEFAULT_MEMORY_LIMIT, game: str = "2048", cell_bits: int | None = None,
                 method: str = "afterstate", accumulators: np.ndarray | None = None):
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
        if weights is None:
            try:
                weights = aligned_zeros(spec.n_weights)
            except MemoryError:
                raise TD2048Error(f"not enough memory for {format_bytes(spec.nbytes)} of weights") from None
        elif weights.dtype != np.float32 or weights.shape != (spec.n_weights,):
            raise TD2048Error(f"weights do not fit network {spec.name}: expected {spec.n_weights} float32, "
                              f"got {weights.shape} {weights.dtype}")
        self.weights = weights
        if accumulators is not None and (accumulators.dtype != np.float32 or accumulators.size != 2 * weights.size):
            raise TD2048Error(f"TC accumulators do not fit network {spec.name}: expected {2 * weights.size} float32")
        # temporal coherence (--tc): per weight its accumulated error and accumulated absolute
        # error, interleaved (see td2048.kernels.codegen); None until a TC phase begins
        self.accumulators = accumulators

    @functools.cached_property
    def kernels(self):
        """The compiled kernels of this network's cells, loaded (or compiled) when first needed: a model
        file can be read and checked without them."""
        return self.kernels_for(wide=self.wide)

    def start_accumulators(self) -> np.ndarray:
        """TC's accumulators, made fresh if there are none: both start at the smallest normal float32,
        so each weight's first TC step has the rate |accumulated error| / accumulated |error| = 1
        (TDL2048+'s convention)."""
        if self.accumulators is None:
            try:
                acc = aligned_zeros(2 * self.weights.size)
            except MemoryError:
                raise TD2048Error(f"not enough memory for {format_bytes(8 * self.weights.size)} of TC "
                                  "accumulators") from None
            acc[:] = np.finfo(np.float32).tiny
            self.accumulators = acc
        return self.accumulators

    @property
    def state_values(self) -> bool:
        return self.method == "state"

    @property
    def cell_bits(self) -> int:
        return 5 if self.wide else 4

    def kernels_for(self, tracked: bool = False, wide: bool | None = None, tc: bool = False):
        """This network's kernels: ``tracked`` for multi-thread copies, ``wide`` for 5-bit cells,
        ``tc`` for temporal coherence updates."""
        from td2048.kernels import kernels_for

        return kernels_for(self.spec, tracked=tracked, wide=self.wide if wide is None else wide,
                           state_values=self.state_values, tc=tc)

    def wide_kernels(self, tracked: bool = False, tc: bool = False):
        """Kernels of this network on 5-bit cells: where a 4-bit episode goes on past two 32768 tiles."""
        return self.kernels_for(tracked, wide=True, tc=tc)

    def copy(self) -> Network:
        """The same network with a copy of the weights (and of TC's accumulators)."""
        acc = None if self.accumulators is None else self.accumulators.copy()
        return Network(self.spec, self.weights.copy(), memory_limit=self.spec.nbytes, game=self.game,
                       cell_bits=self.cell_bits, method=self.method, accumulators=acc)

    def fill_optimistic(self, value: float) -> None:
        """Optimistic initialisation: every board (of every stage) starts at ``value``, each weight at
        value / (tuples x isomorphisms), TDL2048+'s ``=V/norm`` for one stage."""
        w = self.weights
        w[:self.spec.stage_markers] = np.float32(value / self.spec.n_features)
        w[self.spec.stage_markers:] = 0.0

    def _board(self, board):
        return (np.uint64(board[0]), np.uint64(board[1])) if self.wide else np.uint64(board)

    def tables(self) -> list[np.ndarray]:
        """Views of the weight tables, one per tuple (index as in the module docstring); a multistage
        network's first stage."""
        return [self.weights[o:o + n] for o, n in zip(self.spec.table_offsets, self.spec.table_sizes, strict=True)]

    def value(self, board: int) -> float:
        return float(self.kernels.value(self.weights, self._board(board)))

    def expected_value(self, afterstate: int) -> float:
        """E[V] over the new tile on an afterstate (for state-value networks; 0.0 for afterstate ones)."""
        return float(self.kernels.expected_value(self.weights, self._board(afterstate)))

    def feature_indices(self, board: int) -> np.ndarray:
        """Flat weight indices read for ``board``: isomorphism-major, then tuple."""
        out = np.zeros((1, self.spec.n_features), np.uint64)
        self.kernels.feature_indices(self._board(board), out, 0)
        return out[0]

    def td_update(self, board: int, target: float, alpha: float) -> float:
        """One TD step with the learning rate split over all features; returns the new V(board)."""
        from td2048.kernels.merge import NO_TRACKING

        return float(self.kernels.td_update(self.weights, NO_TRACKING, self._board(board), float(target),
                                            alpha / self.spec.n_features))
