"""Endgames: a board with tiles fixed in place and a tile to build, solved for the probability of building it.

A board too large to solve whole (4x3: 1.15e12 positions) can still be solved in its last steps, as the
tablebase engines of chess do: once a player has lined up its largest tiles (on 4x3, 2048, 1024 and 512 down a
long side from a corner), the rest of the game is a smaller problem: the free cells, played under the rule that
no move may shift the fixed tiles, toward one target (a 1024 where the 512 stands: the chain then merges into a
4096 on its own). ``td2048 solve --fixed 0=2048,3=1024,6=512 --goal 6=1024`` solves it.

The rules, for the solver's kernels (:mod:`td2048.solve.kernels`), as masks of the packed frame board:

- a move is *allowed* when every fixed cell keeps its tile afterwards (the pattern), in some orientation of the
  board (the solver holds positions up to symmetry; a fixed line in one corner is the same endgame in each);
- a move *wins* when afterwards the goal's cell holds the goal's tile and every other fixed cell its own;
- a position's value is the probability of winning under the play that maximises it: 1 after a winning move, 0
  where no move is allowed (a move that breaks the pattern counts as none), and the mean over the new tile
  otherwise. Scores are not counted.

The start is the fixed tiles with two new tiles on the free cells (as a game deals its start), from which the
forward pass reaches the positions a player meets on the way (the free cells' tiles in every arrangement the
game can make).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from td2048.errors import TD2048Error
from td2048.games.shape import BoardShape, as_shape
from td2048.games.tiles import tile_code, tile_value

# Where a move leaves an endgame (td2048.solve.positions.endgame_state)
BROKEN = 0  # it moves a fixed tile: not made
KEPT = 1  # it keeps the fixed tiles
WON = 2  # it builds the goal

_PAIR = re.compile(r"^\s*(\d+)\s*[=:]\s*(\d+)\s*$")


@dataclass(frozen=True)
class Endgame:
    """Tiles fixed in place on a board and a tile to build.

    Parameters
    ----------
    fixed : tuple of (int, int)
        ``(board cell, code)`` of each fixed tile; board cells are numbered row by row from the top-left corner.
    goal : tuple of (int, int)
        ``(board cell, code)``: the tile to build and where. A fixed cell (the tile it will hold once the
        chain merges) or a free one.
    """

    fixed: tuple[tuple[int, int], ...]
    goal: tuple[int, int]

    @classmethod
    def parse(cls, board, fixed: str, goal: str, game: str = "2048") -> Endgame:
        """An endgame from the command line's ``--fixed 0=2048,3=1024,6=512 --goal 6=1024``.

        Raises
        ------
        TD2048Error
            In one line, for a cell off the board, a value that is no tile, a cell named twice, a goal that
            does not grow the tile at its cell, or no free cell left for the game.
        """
        shape = as_shape(board)
        if game != "2048":
            raise TD2048Error("endgames are solved for 2048 (4-bit cells), not 2584")
        pairs = [_pair(text, shape, "--fixed") for text in fixed.split(",") if text.strip()]
        if not pairs:
            raise TD2048Error("--fixed names no tile: give CELL=TILE[,CELL=TILE...], such as 0=2048,3=1024,6=512")
        cells = [c for c, _ in pairs]
        if len(set(cells)) != len(cells):
            raise TD2048Error(f"--fixed names a cell twice: {fixed}")
        goal_pair = _pair(goal, shape, "--goal")
        endgame = cls(tuple(sorted(pairs)), goal_pair)
        endgame.check(shape)
        return endgame

    def check(self, board) -> None:
        """Refuse, in one line, an endgame that the board cannot pose."""
        shape = as_shape(board)
        for cell, code in (*self.fixed, self.goal):
            if not 0 <= cell < shape.n_cells:
                raise TD2048Error(f"cell {cell} is off the {shape.name} board (cells 0 to {shape.n_cells - 1})")
            if not 1 <= code <= 15:
                raise TD2048Error(f"code {code} is no tile of 2048's 4-bit cells")
        if len(self.fixed) > shape.n_cells - 2:
            raise TD2048Error(f"{len(self.fixed)} fixed tiles leave fewer than two free cells of {shape.name}")
        held = dict(self.fixed).get(self.goal[0])
        if held is not None and held >= self.goal[1]:
            raise TD2048Error(f"the goal {self.describe_goal()} does not grow the {tile_value('2048', held)} "
                              f"fixed at cell {self.goal[0]}")

    def free(self, board) -> list[int]:
        """The board cells that are not fixed."""
        fixed = {c for c, _ in self.fixed}
        return [i for i in range(as_shape(board).n_cells) if i not in fixed]

    def masks(self, board) -> tuple[np.uint64, np.uint64, np.uint64, np.uint64]:
        """The kernels' form, on the packed frame board: (the fixed cells' mask, their codes, the goal's mask,
        its codes): a board keeps the pattern where ``board & mask == codes``."""
        shape = as_shape(board)
        pattern_mask = pattern_bits = 0
        for cell, code in self.fixed:
            pattern_mask |= 15 << (4 * shape.frame_cell(cell))
            pattern_bits |= code << (4 * shape.frame_cell(cell))
        cell, code = self.goal
        at = 4 * shape.frame_cell(cell)
        goal_mask = pattern_mask | (15 << at)
        goal_bits = (pattern_bits & ~(15 << at)) | (code << at)
        return np.uint64(pattern_mask), np.uint64(pattern_bits), np.uint64(goal_mask), np.uint64(goal_bits)

    def oriented_masks(self, board) -> np.ndarray:
        """:meth:`masks` in every orientation of the board, for testing a board as dealt rather than its images:
        ``uint64[symmetries, 4]``, a row per symmetry; a board keeps the pattern (shows the goal) as
        :meth:`met_by` says where ``board & row[0] == row[1]`` (``board & row[2] == row[3]``) for some row."""
        shape = as_shape(board)
        rows = []
        for perm in shape.symmetries:  # perm[i]: where cell i lands; over the whole group, as its inverse
            fixed = tuple((int(perm[cell]), code) for cell, code in self.fixed)
            goal = (int(perm[self.goal[0]]), self.goal[1])
            rows.append(Endgame(fixed, goal).masks(shape))
        return np.array(rows, np.uint64).reshape(-1, 4)

    def start_codes(self, board) -> list[int]:
        """The fixed tiles on an empty board: cell codes, row-major."""
        codes = [0] * as_shape(board).n_cells
        for cell, code in self.fixed:
            codes[cell] = code
        return codes

    def holds(self, codes, goal: bool = False) -> bool:
        """Whether cell codes (row-major, in this orientation) keep the fixed tiles, or (``goal``) show the goal."""
        wanted = dict(self.fixed)
        if goal:
            wanted[self.goal[0]] = self.goal[1]
        return all(int(codes[c]) == v for c, v in wanted.items())

    def met_by(self, codes, board, goal: bool = False) -> bool:
        """Whether a board (cell codes row-major, as dealt) keeps the fixed tiles (``goal``: shows the goal) in some
        orientation: as the solver's kernels judge a move (:func:`td2048.solve.positions.endgame_state`), and
        where a player's game enters the endgame."""
        n = len(codes)
        for perm in as_shape(board).symmetries:  # perm[i]: where cell i lands
            image = [0] * n
            for i in range(n):
                image[perm[i]] = codes[i]
            if self.holds(image, goal):
                return True
        return False

    def describe_goal(self) -> str:
        return f"{tile_value('2048', self.goal[1])} at cell {self.goal[0]}"

    def describe(self) -> str:
        """``2048, 1024, 512 fixed at cells 0, 3, 6; goal 1024 at cell 6``."""
        tiles = ", ".join(str(tile_value("2048", code)) for _, code in self.fixed)
        cells = ", ".join(str(cell) for cell, _ in self.fixed)
        return f"{tiles} fixed at cells {cells}; goal {self.describe_goal()}"

    def to_json(self) -> dict:
        return {"fixed": [[cell, tile_value("2048", code)] for cell, code in self.fixed],
                "goal": [self.goal[0], tile_value("2048", self.goal[1])]}

    @classmethod
    def from_json(cls, data: dict) -> Endgame:
        fixed = tuple((int(c), _code(int(t))) for c, t in data["fixed"])
        cell, tile = data["goal"]
        return cls(fixed, (int(cell), _code(int(tile))))


def no_endgame() -> tuple[np.uint64, np.uint64, np.uint64, np.uint64]:
    """The kernels' masks of a whole board's solve: every move allowed, none wins."""
    zero = np.uint64(0)
    return zero, zero, zero, zero


def _code(tile: int) -> int:
    code = tile_code("2048", tile)
    if code is None or code > 15:
        raise TD2048Error(f"{tile} is no tile of 2048 on 4-bit cells (2, 4, 8, ..., 32768)")
    return code


def _pair(text: str, shape: BoardShape, option: str) -> tuple[int, int]:
    match = _PAIR.match(text)
    if match is None:
        raise TD2048Error(f"{option} takes CELL=TILE (such as 6=512), not {text.strip()!r}")
    cell, tile = int(match.group(1)), int(match.group(2))
    if not 0 <= cell < shape.n_cells:
        raise TD2048Error(f"{option}: cell {cell} is off the {shape.name} board (cells 0 to {shape.n_cells - 1})")
    return cell, _code(tile)
