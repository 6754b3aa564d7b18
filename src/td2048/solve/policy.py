"""The exact value of a policy on a solved board: :func:`exact_policy_value` (``td2048 eval --exact``).

A policy is a function of a batch of boards returning a move per board. Its value is computed exactly, as the
solver computes the optimum's, over the positions it reaches from the start:

- forward, layer by layer of tile sum, the probability of meeting each position under the policy (the
  policy is asked once per layer, about all the layer's positions that have a legal move);
- backward, from the largest tile sum down, the policy's own values: V_pi(s) = r(s, pi(s)) + E[V_pi(s')], and
  for each tile the probability of ever holding it under the policy.

Positions are tracked as the boards themselves, not up to symmetry: the policy is asked about the board
it would meet in a game, so a policy that is not symmetric (a PPO network) gets its own exact value. A
symmetric policy (one whose move on a board's mirror image is the mirrored move, as a network with all the
board's isomorphisms plays) can be valued up to symmetry instead (``symmetric=True``): one position per class
of symmetric boards, each asked in its least orientation, as the solver keeps them, about 8 times fewer on a
square board. The
solution's values (up to symmetry) give, for each position met, the value of every move under perfect
play after it (Q*), hence whether the policy's move is optimal and what it loses: by the performance
difference identity, V*(start) - V_pi(start) is the sum over positions s of P_pi(s) (V*(s) - Q*(s, pi(s))),
so the loss splits exactly by the stage of the game (the tile sum).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from types import SimpleNamespace

import numpy as np

from td2048.config import njit
from td2048.errors import TD2048Error
from td2048.games.game2048 import MOVE_NAMES
from td2048.solve.chance import (
    P_BIG,
    P_SMALL,
    add_expected_values,
    chance_children,
    chance_scratch,
    child_rows,
    expected_table_value,
)
from td2048.solve.distribution import ScoreDistribution, score_distribution
from td2048.solve.positions import key_board, least, max_code, orientations, slide
from td2048.solve.sets import accumulate, accumulate_part, build_index, merge_disjoint, table_value, value_table
from td2048.solve.solution import Solution, probability
from td2048.threads import solver_threads, split_range

RTOL = 1e-9  # a move is optimal when its Q* is within this share of the best move's
STAGES = 8  # the coarse split of the loss: bins of tile sum of equal width
NO_MOVE = -1  # a board's move where none is legal
BEST_MOVE = -2  # asked of the forward pass: perfect play's move

PERFECT_PLAY = None  # the policy of exact_policy_value that plays perfectly (the expected score's aim)

Policy = Callable[[np.ndarray], np.ndarray]


def _compiled(wide: bool) -> SimpleNamespace:
    """The valuation's kernels compiled for one game (``wide`` a constant in them, as
    :data:`td2048.solve.kernels.COMPILED`); each still takes the ``wide`` argument of the rules (unused)."""

    @njit
    def legal_boards(first, last, keys, _wide, table4, table5, vertical, frame, n, perms, col_shift, row_shift,
                     square, lo_out, hi_out, out):
        """Whether each board ``first .. last - 1`` has a legal move (``out``); fills its packed frame board
        (``lo_out``, ``hi_out``: 5-bit cells)."""
        for s in range(first, last):
            key = keys[s]
            lo, hi = key_board(key, wide, frame, n)
            lo_out[s] = lo
            hi_out[s] = hi
            out[s] = False
            for d in range(4):
                if slide(key, d, wide, table4, table5, vertical, frame, n)[3]:
                    out[s] = True
                    break

    @njit
    def forward_layer(first, last, keys, probs, moves, symmetric, _wide, table4, table5, vertical, frame, n, perms,
                      col_shift, row_shift, square, shifts, opt_table, opt_bits, opt_small_table, opt_small_bits,
                      opt_big_table, opt_big_bits, small, big, w_small, w_big, loss, optimal, status):
        """One layer's step forward for boards ``first .. last - 1``: the children of each board's chosen move
        (``small``, ``big``: ``[count * n]``, from ``first * n`` on, one for each empty cell; their canonical keys
        when ``symmetric``) with their probabilities (``w_small``, ``w_big``), and against the solution's values
        the loss ``probs[s] (V*(s) - Q*(s, move))`` and whether the move is optimal. Returns the range of
        ``small`` written (the same for the others).

        ``moves[s]`` is :data:`NO_MOVE` for a board without a legal move, and :data:`BEST_MOVE` for perfect
        play's (replaced by the move: the first, in the order up, right, down, left, of the largest Q*, summed
        as :meth:`~td2048.solve.Solution.move_values` sums it). V*(s) is the solution's value of the board (the
        ``opt_`` layer of its own tile sum), so a policy's move is the only one valued. ``status[s]``: 0, 1 for
        an illegal move chosen, 2 for a child the solution does not hold."""
        images, children, _ = chance_scratch()
        q = np.zeros(4)
        written = first * n
        for s in range(first, last):
            key = keys[s]
            loss[s] = 0.0
            optimal[s] = False
            status[s] = 0
            if moves[s] == NO_MOVE:
                continue
            best = -np.inf
            pick = moves[s] == BEST_MOVE
            for d in range(4):
                q[d] = -np.inf
                if not pick and d != moves[s]:
                    continue
                lo, hi, reward, legal = slide(key, d, wide, table4, table5, vertical, frame, n)
                if not legal:
                    continue
                empty = chance_children(lo, hi, True, wide, frame, n, perms, col_shift, row_shift, square, shifts,
                                        images, children)
                acc, complete = expected_table_value(children, empty, opt_small_table, opt_small_bits, opt_big_table,
                                                     opt_big_bits)
                if not complete:
                    status[s] = 2
                q[d] = acc + reward
                if q[d] > best:
                    best = q[d]
            if pick:
                for d in range(4):
                    if q[d] == best:
                        moves[s] = d
                        break
            else:  # the best move's value is the board's own
                lo, hi = key_board(key, wide, frame, n)
                m = orientations(lo, hi, wide, frame, n, perms, col_shift, row_shift, square, images)
                found, value = table_value(opt_table, opt_bits, least(images, m))
                if not found:
                    status[s] = 2
                else:
                    best = max(best, value)
            chosen = moves[s]
            if q[chosen] == -np.inf:
                status[s] = 1
                continue
            lo, hi, reward, legal = slide(key, chosen, wide, table4, table5, vertical, frame, n)
            empty = chance_children(lo, hi, symmetric, wide, frame, n, perms, col_shift, row_shift, square, shifts,
                                    images, children)
            for k in range(empty):
                small[written] = children[0, k]
                big[written] = children[1, k]
                w_small[written] = probs[s] * P_SMALL / empty
                w_big[written] = probs[s] * P_BIG / empty
                written += 1
            loss[s] = probs[s] * (best - q[chosen])
            optimal[s] = q[chosen] >= best - RTOL * abs(best)
        return first * n, written

    @njit
    def backward_layer(first, last, keys, moves, symmetric, _wide, table4, table5, vertical, frame, n, perms,
                       col_shift, row_shift, square, shifts, keys_small, index_small, values_small, keys_big,
                       index_big, values_big, out):
        """The policy's values of boards ``first .. last - 1`` of a layer from those of the layers their children
        lie in (each with its :func:`~td2048.solve.sets.build_index`): ``out[s, 0]`` the expected score,
        ``out[s, c]`` the probability of ever holding a tile of code >= c. Returns the number of children not
        found (0 unless the layers are inconsistent)."""
        aims = out.shape[1]
        images, children, rows = chance_scratch()
        missing = 0
        for s in range(first, last):
            key = keys[s]
            top = max_code(key, wide, frame, n)
            for a in range(aims):
                out[s, a] = 0.0
            if moves[s] >= 0:
                lo, hi, reward, legal = slide(key, moves[s], wide, table4, table5, vertical, frame, n)
                empty = chance_children(lo, hi, symmetric, wide, frame, n, perms, col_shift, row_shift, square, shifts,
                                        images, children)
                found = child_rows(children, empty, keys_small, index_small, keys_big, index_big, rows)
                missing += empty - found
                add_expected_values(out, s, top, rows, found, values_small, values_big, 1.0, empty)
                out[s, 0] += reward
            for a in range(1, min(top + 1, aims)):
                out[s, a] = 1.0
        return missing

    return SimpleNamespace(legal_boards=legal_boards, forward_layer=forward_layer, backward_layer=backward_layer)


COMPILED = {False: _compiled(False), True: _compiled(True)}  # by wide


@dataclass
class PolicyValue:
    """A policy's exact figures on a solved board, beside the optimum's.

    Attributes
    ----------
    board, game : str
        The board (``"3x3"``) and game.
    expected_score : float
        The policy's expected score from the start.
    optimal_expected_score : float
        The optimum's (the solution's).
    reach : dict of int to float
        For each tile, the probability that the policy ever holds it (or a larger one).
    optimal_reach : dict of int to float
        The same under the play that maximises it, each tile its own (the solution's).
    optimal_move_share : float
        The share of the policy's moves that are optimal (their Q* within 1e-9 relative of the best move's),
        each position weighted by the probability of meeting it.
    moves : float
        The expected number of moves of a game.
    positions : int
        The positions the policy can meet: as boards, or up to symmetry when valued so.
    symmetric : bool
        Whether the policy was valued up to the board's symmetries.
    loss_by_layer : list of (int, float)
        ``(tile sum, expected score lost there)``: sums to ``optimal_expected_score - expected_score``.
    loss_by_stage : list of dict
        The same over :data:`STAGES` bins of tile sum of equal width over the solution's layers:
        ``{"from": S0, "to": S1, "loss": L}`` (S0 included, S1 not).
    score : ScoreDistribution or None
        The exact distribution of the final score, where asked.
    """

    board: str
    game: str
    expected_score: float
    optimal_expected_score: float
    reach: dict[int, float]
    optimal_reach: dict[int, float]
    optimal_move_share: float
    moves: float
    positions: int
    symmetric: bool = False
    loss_by_layer: list[tuple[int, float]] = field(default_factory=list)
    loss_by_stage: list[dict] = field(default_factory=list)
    score: ScoreDistribution | None = None

    @property
    def loss(self) -> float:
        """The expected score lost per game: the optimum's less the policy's."""
        return self.optimal_expected_score - self.expected_score

    def to_json(self) -> dict:
        """The figures as a JSON object (reach keyed by tile value, as strings)."""
        return {"board": self.board, "game": self.game, "expected_score": self.expected_score,
                "optimal_expected_score": self.optimal_expected_score, "loss": self.loss,
                "reach": {str(t): p for t, p in self.reach.items()},
                "optimal_reach": {str(t): p for t, p in self.optimal_reach.items()},
                "optimal_move_share": self.optimal_move_share, "moves": self.moves, "positions": self.positions,
                "symmetric": self.symmetric,
                "loss_by_stage": self.loss_by_stage, "loss_by_layer": [list(x) for x in self.loss_by_layer]}

    def table(self) -> str:
        """The figures as lines of text."""
        lines = [f"expected score {self.expected_score:,.2f} (optimum {self.optimal_expected_score:,.2f}, "
                 f"loss {self.loss:,.2f} a game)",
                 f"optimal moves {100 * self.optimal_move_share:.2f}% of {self.moves:,.1f} moves a game, "
                 f"{self.positions:,} positions met{' (up to symmetry)' if self.symmetric else ''}",
                 "tile      reach    optimum"]
        for t, p in self.reach.items():
            if p > 0 or self.optimal_reach[t] > 0:
                lines.append(f"{t:>6} {100 * p:>8.2f}% {100 * self.optimal_reach[t]:>8.2f}%")
        lines.append("tile sum       loss")
        for stage in self.loss_by_stage:
            lines.append(f"{stage['from']:>4}-{stage['to'] - 1:<5} {stage['loss']:>8.3f}")
        return "\n".join(lines) + "\n"


def exact_policy_value(solution: Solution, choose: Policy | None, symmetric: bool = False,
                       distribution: bool = False) -> PolicyValue:
    """A policy's exact expected score, tile reach, optimal-move share and loss by stage on a solved board.

    Parameters
    ----------
    solution : Solution
        The board's solution with its values (:func:`~td2048.solve.solve` with ``keep_values=True``, or
        :func:`~td2048.solve.load_solution`).
    choose : callable
        The policy: ``choose(boards)`` returns the move of each board (0 up, 1 right, 2 down, 3 left; an int
        array or sequence of the batch's length). ``boards`` are the boards it can meet that have a legal
        move, as the game holds them (not up to symmetry), packed in the frame layout: ``uint64[m]`` for
        2048, ``uint64[m, 2]`` of (lo, hi) for 2584. It is called once per layer of tile sum, and must choose
        a legal move. :data:`PERFECT_PLAY` (None): perfect play, the expected score's aim (on each board the
        first move, in the order up, right, down, left, of the largest Q*).
    symmetric : bool
        Value the policy up to the board's symmetries: each class of symmetric boards once, asked in its
        least orientation (as the solution keys it). Exact for a policy whose move on a symmetric image of a
        board is the image of its move (a network with all the board's isomorphisms, at any search depth,
        up to its choice between moves of exactly equal value), and about as many times cheaper as the board
        has symmetries. False (the default) asks about every board as the game deals it.

    Returns
    -------
    PolicyValue

    Raises
    ------
    TD2048Error
        For a solution without values or of an endgame, a policy answer of the wrong length or an illegal move.
    """
    if solution.values is None:
        raise TD2048Error("this solution holds no values (solve with keep_values=True, or read a file)")
    if solution.endgame is not None:
        raise TD2048Error("an endgame's table values the goal, not the game: a policy is valued on a whole board's "
                          "solution")
    rules = solution.rules
    args = rules.args
    kernels = COMPILED[rules.wide]
    shifts = rules.shifts
    n, wide, aims = rules.n, rules.wide, solution.aims
    small_step, big_step = rules.tile_steps
    sol_index = {s: i for i, s in enumerate(solution.sums)}
    empty_keys = _read_only(np.zeros(0), np.uint64)
    empty_values = _read_only(np.zeros((0, aims)), np.float64)

    nothing = value_table(empty_keys, empty_values)
    tables: dict[int, np.ndarray] = {}  # the solution's layers in use: hash tables of their expected scores

    def optimum(tile_sum):
        i = sol_index.get(tile_sum)
        if i is None:
            return nothing, nothing.view(np.float64)
        if i not in tables:
            tables[i] = value_table(_read_only(solution.keys[i], np.uint64),
                                    _read_only(solution.values[i], np.float64))
            for j in [j for j in tables if solution.sums[j] < tile_sum - 2 * big_step]:
                del tables[j]  # the layers still to step from lie above: they need no layer below this one
        return tables[i], tables[i].view(np.float64)

    pending: dict[int, list[tuple[np.ndarray, np.ndarray]]] = {}
    for s, (keys, probs) in _start(rules, symmetric).items():
        pending[s] = [(keys, probs)]
    sums, layers, layer_moves = [], [], []
    loss_by_layer, met, met_optimal, positions = [], 0.0, 0.0, 0
    while pending:
        s = min(pending)
        keys, probs = _merge(pending.pop(s))
        if len(keys) == 0:  # no board of this tile sum: every cell of the moves before it was taken
            continue
        lo = np.empty(len(keys), np.uint64)
        hi = np.empty(len(keys), np.uint64)
        live = np.empty(len(keys), np.bool_)
        split_range(kernels.legal_boards, len(keys), keys, *args, lo, hi, live)
        moves = np.full(len(keys), -1, np.int64)
        if choose is PERFECT_PLAY:
            moves[live] = BEST_MOVE
        elif live.any():
            asked = np.stack([lo[live], hi[live]], axis=1) if wide else lo[live]
            moves[live] = _answers(choose, asked)
        small = np.empty(len(keys) * n, np.uint64)
        big = np.empty(len(keys) * n, np.uint64)
        w_small = np.empty(len(keys) * n)
        w_big = np.empty(len(keys) * n)
        loss = np.empty(len(keys))
        optimal = np.empty(len(keys), np.bool_)
        status = np.empty(len(keys), np.int8)
        ahead = (*optimum(s), *optimum(s + small_step), *optimum(s + big_step))
        written = split_range(kernels.forward_layer, len(keys), keys, probs, moves, symmetric, *args, shifts, *ahead,
                              small, big, w_small, w_big, loss, optimal, status)
        if (status == 1).any():
            j = int(np.argmax(status == 1))
            raise TD2048Error(f"the policy chose the illegal move {MOVE_NAMES[moves[j]]} on {int(keys[j]):#x} "
                              f"({int((status == 1).sum())} illegal choices at tile sum {s})")
        if (status == 2).any():  # pragma: no cover - a solution inconsistent with its rules
            raise TD2048Error(f"the solution lacks positions after tile sum {s}: is it of this board and game?")
        sums.append(s)
        layers.append(keys)
        layer_moves.append(moves)
        positions += len(keys)
        loss_by_layer.append((s, float(loss.sum())))
        met += float(probs[live].sum())
        met_optimal += float(probs[optimal].sum())
        for step, children, weights in ((small_step, small, w_small), (big_step, big, w_big)):
            parts = [(children[a:b], weights[a:b]) for a, b in written if b > a]
            if parts:
                pending.setdefault(s + step, []).extend(parts)

    values = _backward(rules, sums, layers, layer_moves, aims, symmetric)
    score = None
    if distribution:
        score = score_distribution(rules, sums, layers, layer_moves, symmetric, _start(rules, symmetric), aims - 1)
    start_values = np.zeros(aims)
    for s, (keys, probs) in _start(rules, symmetric).items():
        i = sums.index(s)
        start_values += probs @ values[i][np.searchsorted(layers[i], keys)]
    tiles = solution.tiles
    return PolicyValue(
        board=solution.board.name, game=solution.game, expected_score=float(start_values[0]),
        optimal_expected_score=solution.expected_score,
        reach={t: probability(start_values[c]) for c, t in enumerate(tiles, start=1)},
        optimal_reach=solution.reach, optimal_move_share=probability(met_optimal / met) if met > 0 else 1.0,
        moves=met,
        positions=positions, symmetric=symmetric, loss_by_layer=loss_by_layer,
        loss_by_stage=_stages(solution.sums, loss_by_layer), score=score)


def _read_only(a, dtype) -> np.ndarray:
    """A read-only view (a solution in memory and one mapped from a file: one compiled version)."""
    view = np.asarray(a, dtype).view()
    view.setflags(write=False)
    return view


def _answers(choose, boards) -> np.ndarray:
    got = choose(boards)
    try:
        moves = np.asarray(got).astype(np.int64, casting="same_kind").reshape(-1)
    except (TypeError, ValueError):
        raise TD2048Error(f"the policy must return one move (0-3) per board, not {type(got).__name__}") from None
    if moves.shape[0] != boards.shape[0]:
        raise TD2048Error(f"the policy returned {moves.shape[0]} moves for {boards.shape[0]} boards")
    if moves.size and (moves.min() < 0 or moves.max() > 3):
        raise TD2048Error("the policy's moves must be 0 (up), 1 (right), 2 (down) or 3 (left)")
    return moves


def _backward(rules, sums, layers, layer_moves, aims, symmetric) -> list[np.ndarray]:
    small_step, big_step = rules.tile_steps
    index = {s: i for i, s in enumerate(sums)}
    values: list[np.ndarray | None] = [None] * len(sums)
    empty_keys = np.zeros(0, np.uint64)
    empty_values = np.zeros((0, aims))
    start_sums = set(_start(rules, symmetric))

    no_index = build_index(empty_keys)
    indexes: dict[int, np.ndarray] = {}

    def held(tile_sum):
        i = index.get(tile_sum)
        if i is None:
            return empty_keys, no_index, empty_values
        if i not in indexes:
            indexes[i] = build_index(layers[i])
        return layers[i], indexes[i], values[i]

    for i in range(len(sums) - 1, -1, -1):
        s = sums[i]
        out = np.empty((len(layers[i]), aims))
        ahead = (*held(s + small_step), *held(s + big_step))
        missing = sum(split_range(COMPILED[rules.wide].backward_layer, len(layers[i]), layers[i], layer_moves[i],
                                  symmetric, *rules.args, rules.shifts, *ahead, out))
        if missing:  # pragma: no cover - a broken forward pass
            raise TD2048Error(f"the policy's layer of tile sum {s} has {missing} children that no layer holds")
        values[i] = out
        for j in range(i + 1, len(sums)):  # the layers left to value lie below S: none reaches S + big_step
            if sums[j] >= s + big_step and sums[j] not in start_sums:
                values[j] = None
                indexes.pop(j, None)
    return values


def _merge(parts) -> tuple[np.ndarray, np.ndarray]:
    """The distinct boards of parts of (boards, probabilities), sorted, with their probabilities summed: on
    every core, each thread the boards of its shares of the hash (the same sums, in the same order, as one)."""
    keys = np.concatenate([k for k, _ in parts]) if len(parts) > 1 else parts[0][0]
    weights = np.concatenate([w for _, w in parts]) if len(parts) > 1 else parts[0][1]
    keys, weights = np.ascontiguousarray(keys, np.uint64), np.ascontiguousarray(weights, np.float64)
    shares = solver_threads()
    if shares == 1 or len(keys) < 1 << 16:
        return accumulate(keys, weights)
    out = None
    for part in split_range(accumulate_part, shares, keys, weights, shares, threads=shares, least=1):
        out = part if out is None else merge_disjoint(*out, *part)
    return out


def _start(rules, symmetric) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """The start boards by tile sum, as the game deals them (or up to symmetry), with their probabilities."""
    if symmetric:
        keys, probs, sums = rules.start()
        return {int(s): (keys[sums == s], probs[sums == s]) for s in np.unique(sums)}
    frame = rules.board.frame_cells
    by_sum: dict[int, list[tuple[int, float]]] = {}
    for codes, p in zip(*rules.start_boards(), strict=True):
        if rules.wide:
            key = sum(c << (5 * i) for i, c in enumerate(codes))
        else:
            key = sum(c << (4 * frame[i]) for i, c in enumerate(codes))
        by_sum.setdefault(rules.tile_sum(codes), []).append((key, p))
    return {s: _merge([(np.array([k for k, _ in v], np.uint64), np.array([p for _, p in v]))])
            for s, v in sorted(by_sum.items())}


def _stages(solution_sums, loss_by_layer) -> list[dict]:
    first, last = solution_sums[0], solution_sums[-1] + 1
    width = -(-(last - first) // STAGES)
    stages = [{"from": first + k * width, "to": min(last, first + (k + 1) * width), "loss": 0.0}
              for k in range(STAGES) if first + k * width < last]
    for s, loss in loss_by_layer:
        stages[(s - first) // width]["loss"] += loss
    return stages


def agent_policy(agent) -> Policy:
    """The moves of a :class:`~td2048.play.Agent` as a policy: its choice at its search depth on each board
    (:meth:`~td2048.play.Agent.choose`: in compiled code, on the agent's threads, each board searched with an
    empty transposition table).

    Parameters
    ----------
    agent : Agent
        The player (its network's board and game are the solution's).

    Returns
    -------
    callable
        ``choose(boards)`` for :func:`exact_policy_value`.
    """
    return agent.choose
