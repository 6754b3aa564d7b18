"""What an n-tuple network is: its tuples of cells, isomorphisms, clamp, stages and weight layout (plain Python).

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
``456``), each one shift and one mask (:func:`tuple_runs`); :mod:`td2048.kernels.codegen` writes
them out as constant code for each network.

This module holds the specification only: no weights, no compiled code, no NumPy. The runtime
network (weights and kernels) is :class:`td2048.network.Network`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from td2048.config import DEFAULT_MEMORY_LIMIT
from td2048.errors import TD2048Error
from td2048.games.shape import FULL, BoardShape, as_shape
from td2048.games.tiles import tile_code, tile_value
from td2048.presets import presets_of

MAX_TUPLE_CELLS = 16  # a whole 4x4 board; the memory limit is what bounds a table
CELL_VALUES = 16  # 4-bit cells: 16 codes
MAX_CLAMP = 31  # 5-bit cells: codes 0..31
VALID_ISOMORPHISMS = (1, 4, 8)
# what V values: the board right after a move (the default, the course demo's), or the state after
# the new tile, with moves chosen by the expectation over new tiles (see td2048.kernels.episode)
METHODS = ("afterstate", "state")
RECORD = 3  # floats per weight in TC's records: the weight, E, A (td2048.kernels.records)
# Bits a weight: float32, or 16 (int16 whole steps of WEIGHT_STEP points, at most WEIGHT_LIMIT steps either way:
# half the memory, whose reads are most of a move's time on large networks; see td2048.kernels.features)
WEIGHT_BITS = (32, 16)
WEIGHT_STEP = 1.0
WEIGHT_LIMIT = 32767

# Where the tables sit in the flat weight array. A table of 16**n weights is a power of two in size, so
# tables back to back all start at the same place of every cache's set period (L2: 128 KiB; within a
# huge page, 2 MiB), and the weights that every table holds hot (those of early, mostly empty boards)
# fight over the same cache sets. In networks of STAGGERED_BYTES or more, each table starts TABLE_STAGGER
# weights after the one before ends: 272 KiB = 256 + 16 KiB puts 8 tables at 8 different places both
# mod 128 KiB and mod 2 MiB.
TABLE_STAGGER = 69_632
STAGGERED_BYTES = 16 << 20
SPARE_APART = 64  # weights between two threads' spare weights: two cache lines of 16-bit weights


@dataclass(frozen=True)
class NetworkSpec:
    """What a network is: its tuples of cells and how many isomorphisms share each table.

    Parameters
    ----------
    tuples : tuple of tuple of int
        Each tuple's cells, 0..15 (see :mod:`td2048.games.bitboard`), at most ``MAX_TUPLE_CELLS`` each.
    isomorphisms : int
        Symmetric boards that share each table: 1, 4 or 8.
    name : str
        The network's name; default: the preset's (``4x6``, ``4x6/iso4``), else the hex tuples.
    clamp : int or None
        K: feature codes are min(code, K), tables of (K+1)**n entries; None: 16**n.
    stages : tuple of int
        Multistage: each threshold a set of tile codes as a mask (bit c: code c), rising; a board is in
        stage k when k thresholds are <= its scale (the OR of 1 << code over its cells); () is one stage.
    board : BoardShape
        The board the network plays on (4x4 by default); tuples name its cells, row by row.

    Raises
    ------
    TD2048Error
        On tuples, isomorphisms, a clamp or stages that make no network.
    """

    tuples: tuple[tuple[int, ...], ...]
    isomorphisms: int = 8
    name: str = ""
    clamp: int | None = None
    stages: tuple[int, ...] = ()
    board: BoardShape = FULL

    def __post_init__(self):
        validate_tuples(self.tuples, self.board)
        object.__setattr__(self, "stages", tuple(int(m) for m in self.stages))
        if any(m <= 1 for m in self.stages) or list(self.stages) != sorted(set(self.stages)):
            raise TD2048Error(f"stage thresholds must rise from one stage to the next, not {list(self.stages)}")
        if self.isomorphisms not in VALID_ISOMORPHISMS:
            raise TD2048Error(f"isomorphisms must be 1, 4 or 8, not {self.isomorphisms}")
        if self.isomorphisms > self.board.n_symmetries:
            raise TD2048Error(f"a {self.board} board has {self.board.n_symmetries} symmetries (identity, the half "
                              f"turn, mirror and flip): isomorphisms must be 1 or 4, not {self.isomorphisms}")
        if self.clamp is not None and not 1 <= self.clamp <= MAX_CLAMP:
            raise TD2048Error(f"--clamp must be in 1..{MAX_CLAMP}, not {self.clamp}")
        if not self.name:
            object.__setattr__(self, "name", _name_of(self.tuples, self.isomorphisms, self.board))

    @property
    def frame_tuples(self) -> tuple[tuple[int, ...], ...]:
        """The tuples on the cells of the 4x4 frame the board sits in (the kernels' cells)."""
        return tuple(tuple(self.board.frame_cell(c) for c in t) for t in self.tuples)

    @property
    def values_per_cell(self) -> int:
        """Distinct feature codes of a cell: K + 1 with a clamp, else 16."""
        return CELL_VALUES if self.clamp is None else self.clamp + 1

    @property
    def one_tuple(self) -> bool:
        """Whether the network is one tuple in one stage: a table that another network's values can start
        (:meth:`td2048.network.Network.start_from`)."""
        return len(self.tuples) == 1 and not self.stages

    @property
    def whole_board(self) -> bool:
        """Whether the network is one tuple of every cell of its board, in one stage: a weight for every position."""
        return self.one_tuple and len(self.tuples[0]) == self.board.n_cells

    @property
    def symmetric(self) -> bool:
        """Whether V is the same on every symmetric image of a board: the tuples read all its isomorphisms."""
        return self.isomorphisms == self.board.n_symmetries

    @property
    def repeated_tuples(self) -> list[tuple[int, int]]:
        """The tuples that read the same cells as an earlier one on some board the isomorphisms share.

        Such a tuple (on a rectangle, ``0123`` and ``4567`` of a 2x4 board, the mirror image of each other)
        reads, over the isomorphisms, the same cells as the earlier one, so its table holds the same
        features: the network's values are those of the earlier tuple alone with twice its step size, at the
        cost of a second table and its lookups.

        Returns
        -------
        list of (int, int)
            ``(later, earlier)`` tuple positions, one pair for each tuple that repeats the first it repeats.
        """
        images = self.board.symmetries[:self.isomorphisms]
        seen: list[set[frozenset[int]]] = []
        out = []
        for k, cells in enumerate(self.tuples):
            earlier = next((j for j, orbit in enumerate(seen) if frozenset(cells) in orbit), None)
            if earlier is not None:
                out.append((k, earlier))
            seen.append({frozenset(perm[c] for c in cells) for perm in images})
        return out

    def repeats_note(self) -> str:
        """One line on :attr:`repeated_tuples` for people, or ``""`` when no tuple repeats another."""
        pairs = self.repeated_tuples
        if not pairs:
            return ""
        said = ", ".join(f"{tuple_to_hex(self.tuples[k])} reads the cells of {tuple_to_hex(self.tuples[j])}"
                         for k, j in pairs)
        return (f"on a symmetric board ({self.isomorphisms} isomorphisms), tuple {said}: a second table of the "
                f"same features, as if that tuple's step were doubled, at the cost of its lookups (a tuple of other "
                f"cells in its place may learn more)")

    @property
    def n_features(self) -> int:
        """Tuples x isomorphisms: the number of weights read per evaluation."""
        return len(self.tuples) * self.isomorphisms

    @property
    def table_sizes(self) -> list[int]:
        """Entries of each tuple's table: values_per_cell ** (its cells)."""
        return [self.values_per_cell ** len(t) for t in self.tuples]

    @property
    def stagger(self) -> int:
        """Weights between one table's end and the next one's start (see TABLE_STAGGER)."""
        return TABLE_STAGGER if 4 * sum(self.table_sizes) * self.n_stages >= STAGGERED_BYTES else 0

    @property
    def table_offsets(self) -> list[int]:
        """Where each tuple's table starts in the flat weight array."""
        return self.layout(self.stagger)[0]

    def spare_weights(self, threads: int) -> list[int]:
        """A weight for each thread that no feature reads, each on cache lines of its own: in the gap after the
        first table (where threads that write one table put the 16-bit weights an update leaves unchanged, see
        td2048.kernels.features). Zeros for a network without gaps (whose kernels have no use for them).

        Parameters
        ----------
        threads : int
            How many.

        Returns
        -------
        list of int
            The indices, thread by thread.
        """
        if self.stagger == 0:
            return [0] * threads
        start, apart = self.table_offsets[0] + self.table_sizes[0], SPARE_APART
        return [start + apart * (t % (self.stagger // apart)) for t in range(threads)]

    @property
    def n_stages(self) -> int:
        """Stages of a multistage network (1 without stages)."""
        return len(self.stages) + 1

    @property
    def stage_weights(self) -> int:
        """Weights of one stage: every tuple's table once (and the gaps after them)."""
        return self.layout(self.stagger)[1]

    def layout(self, stagger: int) -> tuple[list[int], int]:
        """Where the tables sit with ``stagger`` weights after each.

        Parameters
        ----------
        stagger : int
            Weights left free after each table; 0: tables back to back, as older model files hold
            them (see :mod:`td2048.io.model`).

        Returns
        -------
        tuple of (list of int, int)
            Each table's offset, and the weights of one stage.
        """
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
        """Weights in the flat array (see :meth:`weight_count`)."""
        return self.weight_count(self.stagger)

    def weight_count(self, stagger: int) -> int:
        """Weights in the flat array with ``stagger``: the stages' tables, then a multistage network's markers.

        Parameters
        ----------
        stagger : int
            Weights after each table (see :meth:`layout`).

        Returns
        -------
        int
            The length of the flat float32 weight array.
        """
        return self.layout(stagger)[1] * self.n_stages + (self.n_stages if self.stages else 0)

    @property
    def nbytes(self) -> int:
        """Bytes of the weights (float32)."""
        return 4 * self.n_weights

    def tc_nbytes(self, records: bool = False) -> int:
        """Bytes of the weights and TC's two accumulators per weight, and with ``records`` TC's records too."""
        return (3 + (RECORD if records else 0)) * self.nbytes

    @property
    def label(self) -> str:
        """The network as shown beside a board, so that its name does not read as a board's size:
        ``network 2x6 (two 6-cell tuples)``, ``network 4x6 (four 6-cell tuples)``, ``network 012,3456 (two
        tuples of 3 and 4 cells)``."""
        return f"network {self.name} ({_tuples_text(self.tuples)})"

    def describe(self, game: str = "2048") -> str:
        """One line for people: name, tuples, isomorphisms, clamp, stages and the weights' size.

        Parameters
        ----------
        game : str
            ``"2048"`` or ``"2584"``: how stage thresholds are written as tiles.

        Returns
        -------
        str
            The description.
        """
        cells = " ".join(tuple_to_hex(t) for t in self.tuples)
        clamp = f", codes clamped at {self.clamp}" if self.clamp is not None else ""
        stages = f", {self.n_stages} stages (from {', '.join(stage_text(m, game) for m in self.stages)})" \
            if self.stages else ""
        board = "" if self.board.full else f" on the {self.board} board"
        return f"network {self.name} ({_tuples_text(self.tuples)}: {cells}){board}, {self.isomorphisms} " \
               f"isomorphisms{clamp}{stages}, {format_bytes(self.nbytes)} of weights"

    def check_memory(self, limit: int = DEFAULT_MEMORY_LIMIT) -> None:
        """Refuse a network whose weights need more than ``limit`` bytes.

        Parameters
        ----------
        limit : int
            The most bytes of weights allowed.

        Raises
        ------
        TD2048Error
            When the weights need more.
        """
        if self.nbytes > limit:
            raise TD2048Error(
                f"network {self.name} needs {format_bytes(self.nbytes)} of weights, over the memory limit of "
                f"{format_bytes(limit)} (raise it with --memory-limit, e.g. --memory-limit 4GiB)"
            )

    def to_dict(self) -> dict:
        """The spec as JSON: name, hex tuples, isomorphisms, clamp, stages when there are any, and the board
        when it is not 4x4 (files without one are 4x4)."""
        out = {"name": self.name, "tuples": [tuple_to_hex(t) for t in self.tuples],
               "isomorphisms": self.isomorphisms, "clamp": self.clamp}
        if self.stages:
            out["stages"] = list(self.stages)
        if not self.board.full:
            out["board"] = self.board.name
        return out


def stage_text(mask: int, game: str = "2048") -> str:
    """A stage threshold as tiles.

    Parameters
    ----------
    mask : int
        The threshold's tile codes as bits (bit c: code c).
    game : str
        ``"2048"`` or ``"2584"``.

    Returns
    -------
    str
        ``16384``, or ``16384+8192`` for a threshold of two tiles.
    """
    return "+".join(str(tile_value(game, c)) for c in range(31, 0, -1) if mask >> c & 1)


def parse_stages(text: str | None, game: str = "2048") -> tuple[int, ...]:
    """``--stages`` text as threshold masks.

    Parameters
    ----------
    text : str or None
        ``16384`` (2 stages: boards without and with a tile >= 16384), ``8192,16384`` (3 stages),
        ``16384+8192`` (a threshold of two tiles: TDL2048+'s 24576); None or empty: one stage.
    game : str
        ``"2048"`` or ``"2584"``: whose tiles the numbers are.

    Returns
    -------
    tuple of int
        One mask of tile codes per threshold, rising (see :class:`NetworkSpec`).

    Raises
    ------
    TD2048Error
        On a number that is not a tile above the smallest, or thresholds out of order.
    """
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


_NUMBERS = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")


def _tuples_text(tuples) -> str:
    """How many tuples of how many cells, in words: ``two 6-cell tuples``, ``three tuples of 4 and 6 cells``."""
    count = _NUMBERS[len(tuples)] if len(tuples) < len(_NUMBERS) else str(len(tuples))
    sizes = sorted({len(t) for t in tuples})
    if len(sizes) == 1:
        return f"{count} {sizes[0]}-cell tuple{'s' if len(tuples) != 1 else ''}"
    return f"{count} tuples of {', '.join(map(str, sizes[:-1]))} and {sizes[-1]} cells"


def _name_of(tuples, isomorphisms: int, board: BoardShape = FULL) -> str:
    """The preset's name when the tuples are a preset's (``4x6``, ``4x6/iso4``), else the hex tuples."""
    hexes = tuple(tuple_to_hex(t) for t in tuples)
    for name, (cells, default_iso) in presets_of(board).items():
        if cells == hexes:
            return name if isomorphisms == default_iso else f"{name}/iso{isomorphisms}"
    return ",".join(hexes)


def tuple_to_hex(cells) -> str:
    """A tuple's cells as hex digits: ``(0, 1, 2, 10)`` -> ``"012a"``."""
    return "".join(f"{c:x}" for c in cells)


def validate_tuples(tuples, board: BoardShape = FULL) -> None:
    """Check that tuples make a network on a board.

    Parameters
    ----------
    tuples : sequence of sequence of int
        Each tuple's cells.
    board : BoardShape
        The board whose cells the tuples name (4x4: 0..15).

    Raises
    ------
    TD2048Error
        No tuple, an empty or too long tuple, a cell off the board, or a cell twice in a tuple.
    """
    if len(tuples) == 0:
        raise TD2048Error("a network needs at least one tuple")
    n = board.n_cells
    for t in tuples:
        shown = "".join(f"{c:x}" if 0 <= c < 16 else f"<{c}>" for c in t)
        if len(t) == 0:
            raise TD2048Error("empty tuple in network")
        if len(t) > MAX_TUPLE_CELLS:
            raise TD2048Error(f"tuple {shown} has {len(t)} cells; at most {MAX_TUPLE_CELLS}")
        for c in t:
            if not 0 <= c < n:
                where = "" if board.full else f"the {board} board's cells "
                raise TD2048Error(f"tuple {shown}: cell {c} is outside {where}0..{n - 1:x}")
        if len(set(t)) != len(t):
            raise TD2048Error(f"tuple {shown} repeats a cell")


def parse_network(text: str, isomorphisms: int | None = None, clamp: int | None = None,
                  stages: tuple[int, ...] = (), board: BoardShape | str = FULL) -> NetworkSpec:
    """A network spec from a preset name or hex tuples.

    Parameters
    ----------
    text : str
        A preset name (``4x6``; see :data:`td2048.presets.PRESETS`) or hex tuples separated by commas
        (``012345,456789``).
    isomorphisms : int or None
        1, 4 or 8; None: the preset's default (8 for hex tuples).
    clamp : int or None
        The largest feature code (see :class:`NetworkSpec`); None: no clamp.
    stages : tuple of int
        Stage thresholds, as :func:`parse_stages` returns them.
    board : BoardShape or str
        The board the tuples name cells of, and whose presets are looked up (4x4 by default; ``"3x3"`` as
        :func:`td2048.games.shape.as_shape` reads it).

    Returns
    -------
    NetworkSpec
        The network's specification.

    Raises
    ------
    TD2048Error
        On text that is neither a preset nor hex tuples, or a spec that makes no network.
    """
    board = as_shape(board)
    text = text.strip()
    presets = presets_of(board)
    if text in presets:
        cells, default_iso = presets[text]
        tuples = tuple(tuple(int(ch, 16) for ch in t) for t in cells)
        iso = default_iso if isomorphisms is None else isomorphisms
        name = text if iso == default_iso else f"{text}/iso{iso}"
        return NetworkSpec(tuples, iso, name, clamp, stages, board)
    parts = [p.strip() for p in text.split(",")]
    if not text or any(p == "" for p in parts):
        raise TD2048Error(f"bad network {text!r}: empty tuple (expected a preset such as {next(iter(presets))} or "
                          "hex tuples such as 012345,456789)")
    tuples = []
    for p in parts:
        if not re.fullmatch(r"[0-9a-fA-F]+", p):
            where = "" if board.full else f" of the {board} board"
            raise TD2048Error(f"bad network {text!r}: {p!r} is not a tuple of hex cells 0..{board.n_cells - 1:x} "
                              f"(or a preset{where}: {', '.join(presets)})")
        tuples.append(tuple(int(ch, 16) for ch in p))
    default_iso = 8 if board.square else 4
    return NetworkSpec(tuple(tuples), default_iso if isomorphisms is None else isomorphisms, clamp=clamp,
                       stages=stages, board=board)


_SIZE_UNITS = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
               "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40, "k": 2**10, "m": 2**20, "g": 2**30}


def parse_size(text: str) -> int:
    """A size in bytes from text.

    Parameters
    ----------
    text : str
        ``512MB`` (10**6), ``4GiB`` (2**30), ``2G`` (2**30) or plain bytes.

    Returns
    -------
    int
        The size in bytes.

    Raises
    ------
    TD2048Error
        On text that is not a positive size.
    """
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([a-zA-Z]*)\s*", text)
    if not m or m.group(2).lower() not in _SIZE_UNITS:
        raise TD2048Error(f"bad size {text!r} (examples: 512MB, 4GiB, 2000000000)")
    size = int(float(m.group(1)) * _SIZE_UNITS[m.group(2).lower()])
    if size <= 0:
        raise TD2048Error(f"bad size {text!r}: must be positive")
    return size


def format_bytes(n: int) -> str:
    """``n`` bytes for people: ``256 MiB``, ``1.5 GiB``, ``12 B``."""
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n} B"


def tuple_runs(cells) -> list[tuple[int, int, int]]:
    """A tuple's runs of consecutive cells, each read with one shift and one mask.

    Parameters
    ----------
    cells : sequence of int
        The tuple's cells.

    Returns
    -------
    list of (int, int, int)
        Per run: its bit shift in the board, its mask, its bit place in the index. ``012456`` gives
        ``[(0, 0xfff, 0), (16, 0xfff, 12)]``: cells 0-2 read from bit 0 to index bits 0-11, cells 4-6
        from bit 16 to index bits 12-23.
    """
    runs = []  # (first cell, first position, length)
    for i, c in enumerate(cells):
        if runs and c == runs[-1][0] + runs[-1][2] and i == runs[-1][1] + runs[-1][2]:
            runs[-1] = (runs[-1][0], runs[-1][1], runs[-1][2] + 1)
        else:
            runs.append((c, i, 1))
    return [(4 * c, (1 << (4 * n)) - 1, 4 * i) for c, i, n in runs]
