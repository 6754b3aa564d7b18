"""Per-block statistics and the familiar table the course demo prints.

::

    1000    avg = 2003.4    max = 7522          <- episodes so far, mean and max score of the block
            128     100%    (3.2%)              <- tile, share of games that reached it,
            256     96.8%   (31.1%)                (share that ended with it as the largest tile)
            512     65.7%   (48.6%)
            1024    17.1%   (16.5%)
            2048    0.6%    (0.6%)

Rows start at the smallest tile that ended a game; tiles are 2048's powers of two or
2584's Fibonacci numbers. Percentages print with up to 6
significant digits, as C++ streams do (``99.3007%``). A blank line follows each block.

A block valued exactly against a solved board (``td2048 train --exact``) has one more line, after the
tile rows::

    exact = 183.82      gap = 296.44 (61.73% of the optimum 480.26)      optimal moves 61.55%
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from td2048.games.tiles import tile_value


def reach_rate(reach: dict[str, float], tile: int) -> float:
    """Share of games that reached ``tile``, from a block's ``reach`` table (tile value -> share).

    The table starts at the smallest tile that ended a game: smaller tiles were reached by all."""
    if str(tile) in reach:
        return reach[str(tile)]
    smallest = min((int(t) for t in reach), default=None)
    return 1.0 if smallest is not None and tile < smallest else 0.0


def percent(share: float) -> str:
    return f"{share * 100:.6g}%"


@dataclass
class BlockStats:
    """The statistics of one block of games: what the block table and a line of ``log.jsonl`` show.

    Parameters
    ----------
    episodes : int
        Episodes trained (or games played) so far, counting this block.
    games : int
        Games in this block that count in the statistics.
    avg : float
        Mean score of the block's games.
    max : int
        Largest score of the block's games.
    reach : dict of str to float
        Tile value -> share of the block's games that reached it.
    end : dict of str to float
        Tile value -> share of the block's games that ended with it as the largest tile.
    moves : int
        Moves (slides) played in the block.
    seconds : float
        Seconds the block took.
    std : float, optional
        Sample standard deviation of the block's scores (0 for fewer than two games).
    extra : dict, optional
        More fields for the log line (``alpha``, ``tc``, ``restarted``, ...; ``exact``, the exact valuation of
        a run on a solved board, also shows in :meth:`table`).

    See Also
    --------
    td2048.train : returns one per block.
    td2048.evaluate : returns one for all its games.
    """

    episodes: int  # episodes trained (or played) so far, counting this block
    games: int  # games in this block
    avg: float
    max: int
    reach: dict[str, float]  # tile value -> share of the block's games that reached it
    end: dict[str, float]  # tile value -> share that ended with it as the largest tile
    moves: int  # moves (slides) played in this block
    seconds: float
    std: float = 0.0  # sample standard deviation of the scores
    extra: dict = field(default_factory=dict)

    @classmethod
    def from_block(cls, episodes: int, scores: np.ndarray, max_codes: np.ndarray, moves: np.ndarray,
                   seconds: float, game: str = "2048", **extra) -> BlockStats:
        """The statistics of a block from its games' raw results.

        Parameters
        ----------
        episodes : int
            Episodes so far, counting this block.
        scores : numpy.ndarray
            Each game's score.
        max_codes : numpy.ndarray
            Each game's largest tile, as a cell code (log2 of the tile in 2048).
        moves : numpy.ndarray
            Each game's number of moves.
        seconds : float
            Seconds the block took.
        game : {"2048", "2584"}, optional
            The game, for the tile values of the codes.
        **extra
            More fields for the log line.

        Returns
        -------
        BlockStats
        """
        games = len(scores)
        counts = np.bincount(max_codes, minlength=32)
        present = np.nonzero(counts)[0]
        reach, end = {}, {}
        if len(present):
            reached = games
            for code in range(int(present[0]), int(present[-1]) + 1):
                reach[str(tile_value(game, code))] = float(reached / games)
                end[str(tile_value(game, code))] = float(counts[code] / games)
                reached -= counts[code]
        return cls(episodes=episodes, games=games, avg=float(scores.mean()) if games else 0.0,
                   max=int(scores.max()) if games else 0, reach=reach, end=end, moves=int(moves.sum()),
                   seconds=float(seconds), std=float(np.std(scores, ddof=1)) if games > 1 else 0.0, extra=extra)

    @property
    def stderr(self) -> float:
        """Standard error of the mean score: ``std / sqrt(games)`` (the mean's 95% interval is
        ``avg +- 1.96 stderr``)."""
        return self.std / np.sqrt(self.games) if self.games > 1 else 0.0

    @property
    def moves_per_s(self) -> float:
        """Moves per second of the block (infinite for a block of no measurable time)."""
        return self.moves / self.seconds if self.seconds > 0 else float("inf")

    def reach_rate(self, tile: int) -> float:
        """Share of the block's games that reached a tile.

        Parameters
        ----------
        tile : int
            A tile value, such as 2048.

        Returns
        -------
        float
            From 0 to 1 (1 for tiles below the smallest row of the table: every game reached them).
        """
        return reach_rate(self.reach, tile)

    def table(self) -> str:
        """The course demo's block table.

        Returns
        -------
        str
            The header line (episodes, ``avg``, ``max``), one row per tile (reach share, end share in
            brackets), with ``extra["exact"]`` a line of the exact expected score and its gap to the optimum,
            with ``extra["endgame"]`` a line of the moves an endgame's table chose and the episodes it played in,
            then a blank line.
        """
        lines = [f"{self.episodes}\tavg = {self.avg:.6g}\tmax = {self.max}"]
        for tile, share in self.reach.items():
            if self.end[tile] > 0 or share > 0:
                lines.append(f"\t{tile}\t{percent(share)}\t({percent(self.end[tile])})")
        exact = self.extra.get("exact")
        if exact:
            lines.append(f"exact = {exact['expected_score']:.2f}\tgap = {exact['loss']:.2f} "
                         f"({100 * exact['loss_share']:.2f}% of the optimum {exact['optimal_expected_score']:.2f})"
                         f"\toptimal moves {100 * exact['optimal_move_share']:.2f}%")
        endgame = self.extra.get("endgame")
        if endgame:
            episodes = self.games + self.extra.get("restarted", 0)
            starts = f", {endgame['starts']} from its start" if endgame["starts"] else ""
            lines.append(f"endgame = {endgame['moves']} moves ({percent(endgame['moves'] / max(1, self.moves))}) in "
                         f"{endgame['episodes']} episodes ({percent(endgame['episodes'] / max(1, episodes))}){starts}")
        return "\n".join(lines) + "\n"

    def to_json(self) -> dict:
        """The block as one line of ``log.jsonl``.

        Returns
        -------
        dict
            ``episodes``, ``games``, ``avg``, ``std`` and ``stderr`` of the scores, ``max``, ``reach``, ``end``,
            ``moves``, ``seconds``, ``moves_per_s`` and the extra fields.
        """
        return {"episodes": self.episodes, "games": self.games, "avg": self.avg, "std": round(self.std, 3),
                "stderr": round(self.stderr, 3), "max": self.max,
                "reach": self.reach, "end": self.end, "moves": self.moves,
                "seconds": round(self.seconds, 6), "moves_per_s": round(self.moves_per_s, 1), **self.extra}
