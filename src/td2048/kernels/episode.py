"""Episode kernels: greedy play, TD(0) updates on afterstates, blocks of episodes.

This file is not imported as it is: :mod:`td2048.kernels.codegen` appends its text below the
marker to each network's generated module, which defines ``feature_indices``, ``value_of``, ``update_of``
for that network, and the board's type and rules: ``move``, ``spawn_tile``, ``new_game``,
``max_code``, ``EMPTY_BOARD``, ``store_board``/``load_board`` (see :mod:`td2048.kernels`). One source for
every network; the names it uses come from that module. The imports above the marker name them for a
linter and a reader (:mod:`td2048.kernels.interface` declares the network's own names,
:mod:`td2048.kernels.templates.narrow_board` the board's); they are not copied.

The agent plays greedily: from s_t it takes the legal move with the largest r + V(s'), and
learns V on afterstates (the boards right after a slide)::

    s_t --(a_t, r_t)--> s'_t --(new tile)--> s_t+1 --(a_t+1, r_t+1)--> s'_t+1 ...

    V(s'_t) <- V(s'_t) + alpha_split * (r_t+1 + V(s'_t+1) - V(s'_t))      (target 0 at the end)

``alpha_split`` is alpha / (tuples x isomorphisms), the course demo's convention.

With state values (``STATE_VALUES``, ``--method state``) V is learned on the states s_t, after
the new tile: a move is chosen by r + E[V(s_t+1)], the expectation over every empty cell of its
afterstate and both new tiles (``expected_value``), and the target of s_t is r_t + V(s_t+1);
the terminal state's value is 0 (it is also trained toward 0, so that the expectations, which
see terminal boards among the candidates, learn that they are worth nothing).
"""
import numpy as np

from td2048.config import njit
from td2048.kernels.interface import (
    CELLS,
    EXPECTED_TARGET,
    N_FEATURES,
    STAGED,
    STATE_VALUES,
    VERTICAL,
    asked_indices,
    enter_stage,
    expected_value_of,
    feature_indices,
    index_row,
    plain_value_of,
    prefetch_aux,
    td_update,
    update_of,
    update_row,
    value,
    value_of,
    value_row,
)
from td2048.kernels.params import (
    ALPHA_SPLIT,
    BACKUP_ALL,
    ENDGAME_STARTS,
    EXPLORE_E0,
    EXPLORE_E1,
    EXPLORE_EPISODES,
    EXPLORE_KIND,
    FIRST_EPISODE,
    PROMOTE,
    RANK_MOVES,
    RESTART_BESIDE,
    RESTART_CODE,
    RESTARTS,
)
from td2048.kernels.tables import endgame_choice, endgame_start
from td2048.kernels.targets import (
    backward_updates,
    best_total,
    exact_share,
    expected_target,
    expected_updates,
    regret_update,
)
from td2048.kernels.templates.narrow_board import (
    EMPTY_BOARD,
    U64,
    board_low,
    cell_code,
    load_board,
    max_code,
    move,
    needs_wide,
    new_game,
    spawn_tile,
    store_board,
)
from td2048.rng import below, uniform

# ---- episode kernels (shared by every network) ----
# Counts and rows passed to compiled callees are np.int64(...), never a literal 0 or 12: Numba
# compiles a callee once per argument type, and each literal is a type of its own (a second
# compile of play_from, the largest function, for each literal).
PLAY = 0  # no learning
BACKWARD = 1  # play the whole episode, then update from its last afterstate to its first
FORWARD = 2  # update each afterstate online, as soon as the next move is chosen


@njit(inline='always')
def scratch():
    """A player's working arrays: (feature-index rows, candidate afterstates, their rewards).

    Rows of feature indices: 3 banks of 4 candidates, and one for a start position; a move writes
    its candidates' rows in one bank while the afterstate before last, in another, waits for its
    forward update (see play_from). Kernels of expected targets have 4 more rows, afterstates and
    rewards (4 to 7), for the moves of the positions a target looks at (see best_total)."""
    lines = 8 if EXPECTED_TARGET else 4
    return np.empty((lines + 9, N_FEATURES), np.uint64), np.empty((lines, 2), np.uint64), np.empty(lines, np.int64)


@njit
def best_move(table, w, board, work):
    """The legal move with the largest r + V(afterstate) (with state values r + E[V(next state)]):
    (direction or -1, afterstate, r, V or E[V]). ``work``: from scratch()."""
    ask_for_best_move(table, w, board, work)
    return best_move_asked(w, board, work)


@njit(forceinline=True)
def ask_for_best_move(table, w, board, work):
    """best_move's first half: its candidates, their weights asked for (ask_for_candidates, bank 0). Compiled
    once and inlined by LLVM where it is called (as is best_move_asked), so that greedy play's games in flight
    (td2048.kernels.search.greedy_block) compile no second copy of the candidates' code."""
    ask_for_candidates(table, w, board, work, np.int64(0))


@njit(forceinline=True)
def best_move_asked(w, board, work):
    """best_move's second half: its answer from the candidates ask_for_best_move left in ``work``."""
    return best_candidate(w, board, work, np.int64(0))


@njit(inline='always')
def ask_for_candidates(table, w, board, work, bank):
    """Each move's afterstate and reward into ``work``; the feature indices of each legal one into row
    4 * bank + d of the index rows, and its weights asked for.

    The indices are computed once, and the weights of every legal afterstate are asked for
    first, all at once: on networks larger than the caches the 4 x 32 reads then wait on memory
    together, not one afterstate after the other (best_candidate reads them). The banks take
    turns, so the rows of the last two moves stay. (Loops over the 4 moves rather than 4 copies:
    each function inlined once compiles in half the time, and runs as fast.)
    """
    xs, afters, rewards = work
    row = 4 * bank
    for d in range(4):
        after, reward = move(table, board, d, VERTICAL)
        store_board(afters, d, after)
        rewards[d] = reward
        if after != board:
            asked_indices(w, after, xs, row + d)


@njit(inline='always')
def best_candidate(w, board, work, bank, just_written=False):
    """best_move's answer from the candidates that ask_for_candidates left in ``work``.

    ``just_written``: an update has just written weights that the candidates may share (forward TD's, made
    while their weights come): their values are read by plain loads (plain_value_of), not by value_of's vector
    gathers, which measured slower right after such stores (the speed page has the figures)."""
    xs, afters, rewards = work
    row = 4 * bank
    best_dir, best_after, best_reward, best_value = -1, board, 0, 0.0
    best_total = -np.inf
    for d in range(4):
        after = load_board(afters, d)
        if after == board:
            continue
        if STATE_VALUES:
            v = expected_value_of(w, after, xs, row + d)
        else:
            v = plain_value_of(w, xs, row + d) if just_written else value_of(w, xs, row + d)
        if rewards[d] + v > best_total:
            best_total, best_dir, best_after, best_reward, best_value = rewards[d] + v, d, after, rewards[d], v
    return best_dir, best_after, best_reward, best_value


@njit(inline='always')
def epsilon_at(params, episode):
    """Exploration rate of an episode, by the schedule in ``params`` (see td2048.kernels.params)."""
    kind = params[EXPLORE_KIND]
    if kind == 1:  # const
        return params[EXPLORE_E0]
    if kind == 2:  # linear: from e0 to e1 over n episodes, then e1
        return params[EXPLORE_E0] + (params[EXPLORE_E1] - params[EXPLORE_E0]) * min(1.0, episode
                                                                                    / params[EXPLORE_EPISODES])
    if kind == 3:  # exp: e0 * exp(-rate * episode) for the first n episodes, then 0
        return params[EXPLORE_E0] * np.exp(-params[EXPLORE_E1] * episode) if episode < params[EXPLORE_EPISODES] \
            else 0.0
    return 0.0


@njit(inline='always')
def tiles_at_least(board, code):
    """How many cells of the board hold a tile of at least this code."""
    n = 0
    for cell in range(16):
        if cell_code(board, cell) >= code:
            n += 1
    return n


@njit
def can_move(table, board):
    """Whether the game goes on: some move changes the board."""
    for d in range(4):
        after, _ = move(table, board, d, VERTICAL)
        if after != board:
            return True
    return False


@njit(inline='always')
def random_legal_move(afters, rewards, board, rng):
    """A uniformly random legal move: (direction, afterstate, reward); the board has one.
    ``afters``, ``rewards``: the 4 moves' afterstates and rewards, as ask_for_candidates leaves them."""
    legal = 0
    for d in range(4):
        if load_board(afters, d) != board:
            legal += 1
    k = below(rng, legal)
    for d in range(4):
        after = load_board(afters, d)
        if after != board:
            if k == 0:
                return d, after, rewards[d]
            k -= 1
    return -1, board, np.int64(0)


@njit
def play_from(table, w, dirty, rng, mode, params, path, board, score, steps, previous, epsilon, pool, record_code,
              endgame):
    """Play on from ``board`` (``steps`` moves, ``score`` and the last afterstate ``previous`` so far).

    ``params``: the learner's numbers (named in td2048.kernels.params); learns when mode is
    BACKWARD or FORWARD. ``path`` = (boards, steps): BACKWARD keeps the episode's afterstates in
    its boards and per move (reward, updated V) in its steps (with state values: the states
    s_0..s_T, and at i the reward of the move that led to s_i). With probability ``epsilon`` a
    move is a uniformly random legal one (exploration), learned from as played: targets follow
    the moves made (on-policy). A random draw happens only when epsilon > 0.
    Multistage networks: the first time a chosen afterstate is in a stage not yet entered, that
    stage starts from the previous one's weights (``enter_stage``; when params[PROMOTE] is 1).
    Restarts: the first board of this episode with a code >= ``record_code`` is kept in the ring
    ``pool`` = (boards, state: boards held, boards kept in all), for later episodes to start from.
    ``endgame`` = (table, counts): an endgame's table, (teacher, masks) as td2048.kernels.tables reads it,
    chooses the move wherever it plays one (endgame_choice), in place of the network's or exploration's,
    learned from as played; counts[0] adds its moves, counts[1] the episodes it played in (counts[2]:
    run_block's endgame starts). None: no table, and the kernels compile without the table's code.
    Returns (score, steps, final board, previous, handed off): a 4-bit board hands the episode off,
    unfinished, when it holds two 32768 tiles, which only 5-bit cells can merge (the caller goes on
    with the wide kernels, ``finish_from``).
    """
    alpha_split = params[ALPHA_SPLIT]
    path_after, path_steps = path
    pool_boards, pool_state = pool
    capacity = path_after.shape[0]
    work = scratch()
    xs = work[0]
    previous_row = np.int64(12)  # the row of the last afterstate's feature indices
    index_row(previous, xs, previous_row)
    bank = 0
    pending = False  # forward TD: the update of the afterstate before last, made during the next move
    pending_row = np.int64(12)
    pending_target = 0.0
    promote = STAGED and mode != PLAY and params[PROMOTE] > 0.0
    ranked = EXPECTED_TARGET and params[RANK_MOVES] > 0.0
    targets = np.zeros(4)
    recording = record_code < 99 and pool_boards.shape[0] > 0
    beside = np.int64(params[RESTART_BESIDE])  # the kept board also holds a second tile of this code or more
    codes = np.zeros(16, np.int64)  # the table's view of a position (see endgame_choice)
    entered = False  # the table played in this episode
    while True:
        if recording and max_code(board) >= record_code and (beside == 0 or tiles_at_least(board, beside) >= 2):
            store_board(pool_boards, pool_state[1] % pool_boards.shape[0], board)
            pool_state[1] += 1
            pool_state[0] = min(pool_state[0] + 1, pool_boards.shape[0])
            recording = False
        if needs_wide(board):
            if pending:
                update_row(w, dirty, xs, pending_row, pending_target, alpha_split)
            return score, steps, board, previous, True
        ask_for_candidates(table, w, board, work, bank)
        written = pending
        if pending:  # forward TD's update of the afterstate before last, while this move's weights come
            # (its own weights are in the cache, and it still comes before every read of this move)
            update_of(w, dirty, xs, pending_row, pending_target, alpha_split)
            pending = False
        d, after, reward, after_value = best_candidate(w, board, work, bank, written)
        if d < 0:
            break
        e, e_after, e_reward = -1, after, reward  # another move than the network's: the table's or exploration's
        if endgame is not None:  # (a test of the argument itself: without a table Numba compiles none of this)
            e = endgame_choice(table, board, endgame[0], codes)[0]
            if e >= 0:
                endgame[1][0] += 1
                if not entered:
                    endgame[1][1] += 1
                    entered = True
                e_after, e_reward = load_board(work[1], e), work[2][e]
        if e < 0 and epsilon > 0.0 and uniform(rng) < epsilon:
            e, e_after, e_reward = random_legal_move(work[1], work[2], board, rng)
        if e >= 0:
            if e != d:
                d = e
                after = e_after
                reward = e_reward
                if mode == FORWARD and not STATE_VALUES:
                    after_value = value_row(w, xs, 4 * bank + d)
        if promote:
            enter_stage(w, dirty, after)
        if EXPECTED_TARGET and mode == FORWARD:
            row = 4 * bank + d
            if STATE_VALUES:  # s_t toward the best move's r + E[V] (0 past the end: see below)
                feature_indices(board, xs, np.int64(12))
                update_of(w, dirty, xs, np.int64(12), best_total(table, w, board, work),
                          exact_share(xs, np.int64(12), alpha_split))
            elif ranked:  # the moves' expected targets rank them (regret_update); s'_t toward its own
                for m in range(4):
                    if load_board(work[1], m) != board:
                        targets[m] = expected_target(table, w, load_board(work[1], m), work)
                update_of(w, dirty, xs, row, targets[d], exact_share(xs, row, alpha_split))
                regret_update(w, dirty, work, bank, board, targets, alpha_split)
            elif params[BACKUP_ALL] > 0.0:  # every legal move's afterstate of s_t toward its expected target
                for m in range(4):
                    candidate = load_board(work[1], m)
                    if candidate != board:
                        row = 4 * bank + m
                        update_of(w, dirty, xs, row, expected_target(table, w, candidate, work),
                                  exact_share(xs, row, alpha_split))
            else:  # s'_t toward its expected target, as soon as it is chosen
                update_of(w, dirty, xs, row, expected_target(table, w, after, work), exact_share(xs, row, alpha_split))
        elif mode == FORWARD and steps > 0 and not STATE_VALUES:
            pending = True
            pending_row = previous_row
            pending_target = reward + after_value
            prefetch_aux(dirty, xs, pending_row)
        elif mode == BACKWARD:
            if steps + 1 >= capacity:  # a safety valve: no 2048 game is this long, 2584 ones hardly
                break
            if STATE_VALUES:
                store_board(path_after, steps, board)
                path_steps[steps + 1, 0] = reward
            else:
                store_board(path_after, steps, after)
                path_steps[steps, 0] = reward
        previous = after
        previous_row = 4 * bank + d
        bank = (bank + 1) % 3
        score += reward
        steps += 1
        following = spawn_tile(after, rng, CELLS)
        if STATE_VALUES and mode == FORWARD and not EXPECTED_TARGET:  # s_t's target: r_t + V(s_t+1), 0 past the end
            target = reward + value(w, following) if can_move(table, following) else reward
            td_update(w, dirty, board, target, alpha_split)
        board = following
    if STATE_VALUES:
        if mode == FORWARD:
            td_update(w, dirty, board, 0.0, alpha_split)
        elif mode == BACKWARD:
            store_board(path_after, steps, board)
            if EXPECTED_TARGET:
                expected_updates(table, w, dirty, params, path, steps + 1, work)
            else:
                backward_updates(w, dirty, params, path, steps + 1, xs)
    elif EXPECTED_TARGET:  # forward: each afterstate was updated as it was chosen
        if mode == BACKWARD:
            expected_updates(table, w, dirty, params, path, steps, work)
    elif mode == FORWARD and steps > 0:
        update_row(w, dirty, xs, previous_row, 0.0, alpha_split)
    elif mode == BACKWARD:
        backward_updates(w, dirty, params, path, steps, xs)
    return score, steps, board, previous, False


@njit
def finish_from(table, w, dirty, rng, mode, params, path, handoff, endgame):
    """Play on from a position: ``handoff`` = (boards: the board and the last afterstate, counts: score
    and moves so far), as run_block leaves an episode it hands off.

    For an episode handed off by another board width, and for play from a given position. On
    return ``handoff`` holds where play stopped; returns (largest code, handed off). ``endgame``: as in
    play_from.
    """
    start, counts = handoff
    epsilon = epsilon_at(params, params[FIRST_EPISODE]) if mode != PLAY else 0.0
    no_pool = (np.empty((0, path[0].shape[1]), np.uint64), np.zeros(2, np.int64))
    score, steps, board, previous, handed = play_from(table, w, dirty, rng, mode, params, path,
                                                      load_board(start, 0), counts[0], counts[1],
                                                      load_board(start, 1), epsilon, no_pool, np.int64(99), endgame)
    hand_off(handoff, board, score, steps)
    store_board(start, 1, previous)
    return max_code(board), handed


@njit
def run_block(table, w, dirty, rng, mode, params, path, handoff, pool, stop, out, endgame):
    """Up to len(out[0]) episodes in one compiled call.

    ``w``, ``dirty``: the weights and what an update marks (see update_of); ``rng``: the random
    state; ``mode``: PLAY, BACKWARD or FORWARD; ``params``: the learner's numbers (named in
    td2048.kernels.params); ``path``: (boards, steps) for one episode (see play_from); ``out`` =
    (scores, largest codes, moves, restarted): episode e's results at e; ``endgame``: an endgame's table and
    its counts, or None (see play_from).

    Returns (episodes finished, handed off). Before each episode ``stop[0]`` is read: another
    thread sets it to ask for a merge, and the call returns at once. Handed off: the episode
    after the finished ones reached what these kernels cannot play (see play_from); ``handoff`` =
    (boards, counts) holds its board and last afterstate, and its score and moves, and ``path`` its
    path, for finish_from on the other kernels.

    Restarts (params[RESTARTS] = p > 0): an episode starts, with probability p, from a board drawn
    uniformly from ``pool`` = (boards, state) instead of a new game (restarted 1); a new game keeps
    its first board with a tile code >= params[RESTART_CODE] in the pool (see play_from). Without
    restarts no random number is drawn for them. Endgame starts (params[ENDGAME_STARTS] = q > 0, with an
    endgame's table): an episode not restarted starts, with probability q, from the endgame's start (endgame_start;
    restarted 1, counted in ``endgame``'s counts[2]).
    """
    restart = params[RESTARTS]
    endgame_starts = params[ENDGAME_STARTS]
    record = np.int64(params[RESTART_CODE]) if restart > 0.0 else np.int64(99)
    pool_boards, pool_state = pool
    restarted = out[3]
    for e in range(out[0].shape[0]):
        if stop[0]:
            return e, False
        epsilon = epsilon_at(params, params[FIRST_EPISODE] + e) if mode != PLAY else 0.0
        started = np.uint8(0)
        if restart > 0.0 and pool_state[0] > 0 and uniform(rng) < restart:
            board = load_board(pool_boards, below(rng, pool_state[0]))
            started = np.uint8(1)
        elif endgame is not None and endgame_starts > 0.0 and uniform(rng) < endgame_starts:
            board = endgame_start(endgame[0][1], rng)
            endgame[1][2] += 1
            started = np.uint8(1)
        else:
            board = new_game(rng, CELLS)
        restarted[e] = started
        score, steps, final, previous, handed = play_from(table, w, dirty, rng, mode, params, path, board,
                                                          np.int64(0), np.int64(0), EMPTY_BOARD, epsilon, pool,
                                                          np.int64(99) if started else record, endgame)
        if handed:
            hand_off(handoff, final, score, steps)
            store_board(handoff[0], 1, previous)
            return e, True
        store_result(out, e, score, steps, final)
    return out[0].shape[0], False


@njit(inline='always')
def hand_off(handoff, final, score, steps):
    """Leave an unfinished episode for the kernels of the other board width: ``handoff`` = (boards, counts)
    gets its board, and its score and moves."""
    boards, counts = handoff
    store_board(boards, 0, final)
    counts[0] = score
    counts[1] = steps


@njit(inline='always')
def store_result(out, e, score, steps, final):
    """Game e of a block is over: its score, largest code and moves into ``out`` = (scores, largest codes,
    moves, ...)."""
    out[0][e] = score
    out[2][e] = steps
    out[1][e] = max_code(final)


PLACE, SLIDE = 0, 1  # kinds of recorded actions


@njit
def _placed(before, after):
    """(cell, code) of the tile that a placement put on the board."""
    diff = board_low(after) ^ board_low(before)
    for i in range(16):
        code = (diff >> U64(4 * i)) & U64(0xF)
        if code:
            return i, np.int64(code)
    return -1, 0


@njit
def record_from(table, w, rng, actions, n, board, score):
    """Record greedy play on from ``board`` after ``n`` recorded actions; (n, score, board, handed off)."""
    work = scratch()
    while n + 2 <= actions.shape[0]:
        if needs_wide(board):
            return n, score, board, True
        d, after, reward, after_value = best_move(table, w, board, work)
        if d < 0:
            break
        actions[n, 0] = SLIDE
        actions[n, 1] = d
        actions[n, 2] = reward
        score += reward
        placed = spawn_tile(after, rng, CELLS)
        cell, code = _placed(after, placed)
        actions[n + 1, 0] = PLACE
        actions[n + 1, 1] = cell
        actions[n + 1, 2] = code
        n += 2
        board = placed
    return n, score, board, False


@njit
def record_episode(table, w, rng, actions, handoff):
    """One greedy episode without learning (the same play and random draws as PLAY), recording every
    action in ``actions[i] = (kind, a, b)``: a placement (PLACE, cell, code), a slide (SLIDE, direction,
    reward). Returns (actions recorded, score, largest code at the end, handed off); an episode
    handed off (see play_from) leaves its board in ``handoff`` for ``record_finish``."""
    board = EMPTY_BOARD
    n = np.int64(0)
    for _ in range(2):
        placed = spawn_tile(board, rng, CELLS)
        cell, code = _placed(board, placed)
        actions[n, 0] = PLACE
        actions[n, 1] = cell
        actions[n, 2] = code
        n += 1
        board = placed
    n, score, board, handed = record_from(table, w, rng, actions, n, board, np.int64(0))
    store_board(handoff, 0, board)
    return n, score, max_code(board), handed


@njit
def record_finish(table, w, rng, actions, n, start, score):
    """Finish recording an episode handed off by another board width; (n, score, largest code)."""
    n, score, board, handed = record_from(table, w, rng, actions, n, load_board(start, 0), score)
    return n, score, max_code(board)
