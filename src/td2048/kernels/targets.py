"""Targets and the updates toward them: what an afterstate (or a state) learns from the game that follows.

Like :mod:`td2048.kernels.episode`, this file is not imported as it is: its text from the marker on is appended
to each network's generated module (:mod:`td2048.kernels.codegen`), which defines the network's and the board's
names it uses. The imports above the marker name them for a linter and a reader; they are not copied.

- ``chance_mean``: the chance node of an afterstate (the mean over the new tile of a compiled function of the
  position), the one expectation of the kernels (expected targets here, a teacher's values in distillation);
- the targets of expected-target learning: ``best_total`` (the best move's r + V of a position) and
  ``expected_target`` (its mean over the new tile), with ``exact_share``, the step that moves V by exactly alpha
  times the error;
- ``regret_update``: the ranking (cost-sensitive hinge) loss of one position's moves, for distillation
  (:mod:`td2048.kernels.distill`) and ranked expected targets;
- the end-of-episode updates of backward learning: ``expected_updates`` (expected targets) and
  ``backward_updates`` (lambda-returns and n-step returns).
"""
import numpy as np

from td2048.config import njit
from td2048.kernels.interface import (
    CELLS,
    N_FEATURES,
    STATE_VALUES,
    VERTICAL,
    asked_indices,
    expected_value_of,
    feature_indices,
    prefetch_aux,
    update_of,
    value_of,
)
from td2048.kernels.params import ALPHA_SPLIT, LAMBDA, NSTEP
from td2048.kernels.templates.narrow_board import (
    P_SECOND_TILE,
    U64,
    empty_mask,
    load_board,
    move,
    place_tile,
    store_board,
)

# ---- target and update kernels (shared by every network) ----


@njit
def best_total(table, w, board, work):
    """max over the legal moves of ``board`` of r + V(afterstate) (with state values r + E[V(next state)]);
    0 when no move is legal (the game is over).

    Uses rows 13 to 16 of the index rows and places 4 to 7 of the afterstates and rewards of ``work``
    (from scratch(), in kernels of expected targets), which greedy play leaves alone. The weights of every
    legal afterstate are asked for before any is read, as ask_for_candidates does."""
    xs, afters, rewards = work
    for d in range(4):
        after, reward = move(table, board, d, VERTICAL)
        store_board(afters, 4 + d, after)
        rewards[4 + d] = reward
        if after != board:
            asked_indices(w, after, xs, 13 + d)
    best = -np.inf
    for d in range(4):
        after = load_board(afters, 4 + d)
        if after == board:
            continue
        v = expected_value_of(w, after, xs, 13 + d) if STATE_VALUES else value_of(w, xs, 13 + d)
        best = max(best, rewards[4 + d] + v)
    return best if best > -np.inf else 0.0


@njit(inline='always')
def chance_mean(after, value_at, state):
    """The chance node of an afterstate: the mean, over every empty cell and both new tiles with their
    probabilities, of ``value_at(position, state)`` at the position the tile makes (0 where no cell is empty).

    The one expectation over the new tile of the kernels (``expected_target`` of a network's values,
    ``teacher_after_value`` of perfect play's); ``value_at`` is a compiled function of the position and of
    ``state``, a tuple of what it reads."""
    empty = empty_mask(after) & CELLS
    n = 0
    total = 0.0
    for c in range(16):
        if empty & (U64(1) << U64(4 * c)):
            n += 1
            total += (1.0 - P_SECOND_TILE) * value_at(place_tile(after, c, 1), state) \
                + P_SECOND_TILE * value_at(place_tile(after, c, 2), state)
    return total / n if n > 0 else 0.0


@njit(inline='always')
def best_total_at(position, state):
    """best_total of ``position`` with ``state`` = (table, w, work): chance_mean's form of it."""
    table, w, work = state
    return best_total(table, w, position, work)


@njit
def expected_target(table, w, after, work):
    """The expected target of an afterstate: the mean, over every empty cell and both new tiles with their
    probabilities, of the best move's r + V from the position the tile makes (0 where the game ends).

    ``E[max_a r + V(s'')]`` over the chance step from ``after``: the Bellman backup of the afterstate with
    the game's own probabilities (each empty cell alike, the second tile with P_SECOND_TILE), as real-time
    dynamic programming updates a position, instead of one sampled next move (see best_total for ``work``)."""
    return chance_mean(after, best_total_at, (table, w, work))


@njit(inline='always')
def exact_share(xs, r, alpha_split):
    """The share of the error each feature weight of row r moves by, so that V moves by exactly alpha x the
    error where symmetric boards read one weight more than once (expected targets' step).

    A weight read m times moves m times and changes V by m^2 steps: V moves by (sum of m^2) steps,
    N_FEATURES + 2 x the pairs of equal indices. Without such pairs it is ``alpha_split`` itself."""
    pairs = 0
    for f in range(N_FEATURES):
        for g in range(f):
            if xs[r, f] == xs[r, g]:
                pairs += 1
    return alpha_split if pairs == 0 else alpha_split * N_FEATURES / (N_FEATURES + 2 * pairs)


@njit(inline='always')
def regret_update(w, dirty, work, bank, board, targets, alpha_split):
    """The regret loss at one position (afterstate values): perfect play's move a* must lead every other move
    m, in the network's r + V, by what m loses against a* under perfect play, c(m) = Q*(a*) - Q*(m).

    ``targets[m]`` holds V*(s'_m) of each legal move (distillation: teacher_after_value in
    td2048.kernels.distill; expected targets ranked: expected_target, the network's own look one move
    further, in place of V*), the candidates' indices the rows
    ask_for_candidates left in ``work``. The move m with the largest r + V + c(m) is found; when it is not a*
    and leads a* there by delta > 0, V(s'_a*) moves toward its value + delta / 2 and V(s'_m) toward its value -
    delta / 2, each by exactly alpha x that error (exact_share). This is the cost-sensitive hinge loss of a
    multiclass classifier (a structured SVM's), an upper bound on the regret c of the network's greedy move;
    on the positions of the network's own games, where each position counts as often as the player meets
    it, the sum of those regrets is the player's exact gap to perfect play (the performance-difference
    identity), so the loss is the gap's bound, learned where the player loses it (AggreVaTe's reduction)."""
    xs, afters, rewards = work
    row = 4 * bank
    best_star, a_star = -np.inf, -1
    for m in range(4):
        if load_board(afters, m) != board and rewards[m] + targets[m] > best_star:
            best_star, a_star = rewards[m] + targets[m], m
    worst, a_hat = -np.inf, -1
    for m in range(4):
        if load_board(afters, m) != board:
            s = rewards[m] + value_of(w, xs, row + m) + best_star - (rewards[m] + targets[m])
            if s > worst:
                worst, a_hat = s, m
    if a_hat == a_star:
        return
    delta = worst - (rewards[a_star] + value_of(w, xs, row + a_star))
    if delta <= 0.0:
        return
    up = row + a_star
    update_of(w, dirty, xs, up, value_of(w, xs, up) + 0.5 * delta, exact_share(xs, up, alpha_split))
    down = row + a_hat
    update_of(w, dirty, xs, down, value_of(w, xs, down) - 0.5 * delta, exact_share(xs, down, alpha_split))


@njit
def expected_updates(table, w, dirty, params, path, steps, work):
    """Expected targets, backward: the episode's afterstates (with state values its states, the terminal one
    last) from the last to the first, each toward its expected target (expected_target; states: best_total)
    with the weights as the later ones left them, so what the end of the game teaches reaches its start in
    one episode. Each moves V by alpha x the error exactly (exact_share)."""
    alpha_split = params[ALPHA_SPLIT]
    path_after = path[0]
    xs = work[0]
    r = np.int64(12)
    for t in range(steps - 1, -1, -1):
        b = load_board(path_after, t)
        target = best_total(table, w, b, work) if STATE_VALUES else expected_target(table, w, b, work)
        feature_indices(b, xs, r)
        update_of(w, dirty, xs, r, target, exact_share(xs, r, alpha_split))


@njit
def backward_updates(w, dirty, params, path, steps, xs):
    """Update the episode's afterstates (``path`` = (boards, (reward, updated V) per move)) from the last
    to the first, each toward its target.

    The last afterstate's target is 0; s'_t-1's target, with r_t the reward of the move to s'_t
    and V(s'_t) already updated, is the lambda-return

        G_t-1 = r_t + (1 - lambda) V(s'_t) + lambda G_t        (lambda 0: TD(0); 1: Monte Carlo)

    or, with n > 0, the n-step return r_t + ... + r_t+n-1 + V(s'_t+n-1) (no V past the end).
    With state values the path holds states and the last one is terminal: trained toward 0, and
    worth 0 in the targets before it.
    """
    alpha_split = params[ALPHA_SPLIT]
    lam = params[LAMBDA]
    n = np.int64(params[NSTEP])
    path_after, path_steps = path
    target = 0.0
    # each update's feature indices are computed, and its weights asked for, two updates ahead
    # (rows t % 3 of xs); one loop, so that the inlined kernels appear once
    for ahead in range(steps - 1, -3, -1):
        if ahead >= 0:
            asked_indices(w, load_board(path_after, ahead), xs, ahead % 3)
            prefetch_aux(dirty, xs, ahead % 3)
        t = ahead + 2
        if t >= steps:
            continue
        updated = update_of(w, dirty, xs, t % 3, target, alpha_split)
        if STATE_VALUES and t == steps - 1:
            updated = 0.0
        path_steps[t, 1] = updated
        if n > 0:
            target = 0.0
            last = min(t + n - 1, steps - 1)
            for j in range(t, last + 1):
                target += path_steps[j, 0]
            if t + n - 1 <= steps - 1:
                target += path_steps[t + n - 1, 1]
        else:
            target = path_steps[t, 0] + (1.0 - lam) * updated + lam * target
