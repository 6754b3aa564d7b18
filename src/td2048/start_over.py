"""Start checks: when a training run throws a start away and starts over from fresh weights.

Some methods' starts split into good and bad ones (the 4x3 recipe's do: a start that builds its large tiles off
the corners never builds a 4096). A start check (``--start-over-below``, ``--start-over-without``,
``--start-over-corner-below``) reads a start's block at an episode and throws the start away when it falls short,
at most ``--max-starts`` starts in all, the last kept whatever it scores. :class:`StartChecks` is that rule as one
value: :meth:`td2048.settings.TrainSettings.start_checks` makes it from a run's settings, and
:func:`td2048.training.train_blocks` asks it where each start is checked and whether it fails. Plain Python: the
CLI checks the options here without loading Numba.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from td2048.errors import TD2048Error
from td2048.games.tiles import tile_code

MAX_STARTS = 5
"""Starts a run makes at most with a start check unless ``--max-starts`` says otherwise: the last one is kept
whatever it scores."""


@dataclass(frozen=True)
class StartChecks:
    """A run's start checks: which, at which episode of each start, and how many starts at most.

    Each field is checked as the value is made; how the checks combine with the rest of a run's settings (the
    run's length, restarts, a start from trained weights, Ray) is
    :meth:`td2048.settings.TrainSettings.validate`'s to check.

    Parameters
    ----------
    game : str
        The game, ``"2048"`` or ``"2584"``, whose tiles ``without`` names.
    block : int
        The run's block: where a check that names no episode is made, without ``at``.
    below : float or None
        A start whose block at ``below_at`` averages less than this is thrown away (``--start-over-below``).
    below_at : int or None
        The episode, of each start, whose block ``below`` reads; None: ``at``.
    without : int or None
        A start none of whose games built this tile by ``without_at`` is thrown away (``--start-over-without``).
    without_at : int or None
        The episode, of each start, by which ``without``'s tile must be built; None: ``at``.
    corner_below : float or None
        A start is thrown away when less than this share of the boards it kept for restarts, in its block at
        ``corner_below_at``, hold their largest tile in a corner (``--start-over-corner-below``).
    corner_below_at : int or None
        The episode, of each start, whose block ``corner_below`` reads; None: ``at``.
    at : int or None
        Where a check that names no episode of its own is made (``--start-over-at``); None: the first block's end.
    max_starts : int
        The most starts a run makes, the last kept whatever it scores (``--max-starts``).

    Raises
    ------
    TD2048Error
        When a field is out of range or malformed, in one line naming its option.
    """

    game: str = "2048"
    block: int = 1000
    below: float | None = None
    below_at: int | None = None
    without: int | None = None
    without_at: int | None = None
    corner_below: float | None = None
    corner_below_at: int | None = None
    at: int | None = None
    max_starts: int = MAX_STARTS

    def __post_init__(self) -> None:
        for bar, episode, option, what in ((self.below, self.below_at, "below", "score"),
                                           (self.without, self.without_at, "without", "tile"),
                                           (self.corner_below, self.corner_below_at, "corner-below", "share")):
            if bar is None and episode is not None:
                raise TD2048Error(f"start_over_{option.replace('-', '_')}_at is the episode of --start-over-{option}: "
                                  f"give its {what}")
        if not self.checks():
            if self.at is not None:
                raise TD2048Error("--start-over-at sets where a start is checked: add --start-over-below SCORE or "
                                  "--start-over-without TILE")
            if self.max_starts != MAX_STARTS:
                raise TD2048Error("--max-starts bounds the starts a start check makes: add --start-over-below "
                                  "SCORE or --start-over-without TILE")
            return
        if self.below is not None and not (isinstance(self.below, (int, float)) and math.isfinite(self.below)
                                           and self.below > 0):
            raise TD2048Error(f"--start-over-below must be a positive score, not {self.below}")
        if self.corner_below is not None and not (isinstance(self.corner_below, (int, float))
                                                  and 0 < self.corner_below <= 1):
            raise TD2048Error(f"--start-over-corner-below must be a share, above 0 and at most 1, not "
                              f"{self.corner_below}")
        if self.without is not None and tile_code(self.game, self.without) is None:
            raise TD2048Error(f"--start-over-without must be a tile of {self.game}, not {self.without}")
        if not (isinstance(self.max_starts, int) and self.max_starts >= 1):
            raise TD2048Error(f"--max-starts must be at least 1, not {self.max_starts}")
        for option, episode in (("at", self.at), ("below", self.below_at), ("without", self.without_at),
                                ("corner-below", self.corner_below_at)):
            if episode is not None and not (isinstance(episode, int) and episode >= 1):
                raise TD2048Error(f"--start-over-{option}'s episode must be at least 1, not {episode}")

    def __bool__(self) -> bool:
        """Whether each start is checked and may be thrown away (``below``, ``without`` or ``corner_below``)."""
        return bool(self.checks())

    def checks(self) -> dict[str, int]:
        """Each start check and the episode, of each start, where it is made.

        Returns
        -------
        dict of str to int
            ``"below"``, ``"without"`` and ``"corner"`` (``corner_below``), those set, each with its own episode,
            else ``at``, else the first block's end; empty without a start check.
        """
        at = self.block if self.at is None else self.at
        checks = {}
        for name, bar, episode in (("below", self.below, self.below_at), ("without", self.without, self.without_at),
                                   ("corner", self.corner_below, self.corner_below_at)):
            if bar is not None:
                checks[name] = at if episode is None else episode
        return checks

    def episodes(self) -> tuple[int, ...]:
        """The episodes, of each start, where a check is made, in order (a block ends at each).

        Returns
        -------
        tuple of int
            Empty without a start check; the last is where a start that passes every check is kept.
        """
        return tuple(sorted(set(self.checks().values())))

    def fails(self, episode: int, avg: float, built: bool, corner: float | None = None) -> str | None:
        """Why a start fails the checks made at an episode.

        Parameters
        ----------
        episode : int
            The start's episodes so far (the end of the block just played).
        avg : float
            That block's average score.
        built : bool
            Whether a game of the start's episodes so far (played from the start) built ``without``.
        corner : float or None
            That block's corner share (:meth:`td2048.restart_pools.RestartPools.corner_share`); None: no board was
            kept.

        Returns
        -------
        str or None
            What the start fell short of, every check made at ``episode`` that it fails ("averaged 17234 at
            episode 100000, below 18500", "no game built a 4096 by episode 100000", both joined by ", and ");
            None when it passes, or when no check is made at ``episode``.
        """
        checks = self.checks()
        reasons = []
        if checks.get("below") == episode and avg < self.below:
            reasons.append(f"averaged {avg:.0f} at episode {episode}, below {self.below:g}")
        if checks.get("without") == episode and not built:
            reasons.append(f"no game built a {self.without} by episode {episode}")
        if checks.get("corner") == episode and (corner or 0.0) < self.corner_below:
            share = "no game built its restart tile" if corner is None else f"{corner:.0%} of the games"
            reasons.append(f"{share} in a corner at episode {episode}, below {self.corner_below:.0%}")
        return ", and ".join(reasons) or None

    def text(self) -> str:
        """The start checks in words, for the run's header.

        Returns
        -------
        str
            "starting over while a start averages below 14000 or built no 4096 at episode 100000" (or each
            check at its own episode: "averages below 11200 at episode 50000 or built no 4096 by episode
            100000"); "" without a start check.
        """
        checks = self.checks()
        if not checks:
            return ""
        bars = {"below": f"averages below {self.below:g}" if "below" in checks else "",
                "without": f"built no {self.without}" if "without" in checks else "",
                "corner": (f"built its restart tile in a corner in less than {self.corner_below:.0%} of "
                           "its games" if "corner" in checks else "")}
        if len(set(checks.values())) == 1:
            words = " or ".join(bars[check] for check in checks)
            return f"starting over while a start {words} at episode {next(iter(checks.values()))}"
        words = " or ".join(f"{bars[check]} {'by' if check == 'without' else 'at'} episode {episode}"
                            for check, episode in sorted(checks.items(), key=lambda item: item[1]))
        return f"starting over while a start {words}"
