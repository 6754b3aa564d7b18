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
    MAX_GAMES_IN_FLIGHT,
    N_FEATURES,
    STAGED,
    STATE_VALUES,
    TRAINING_GAMES_IN_FLIGHT,
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
    IN_FLIGHT,
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
# compile of play_games, the largest function, for each literal).
PLAY = 0  # no learning
BACKWARD = 1  # play the whole episode, then update from its last afterstate to its first
FORWARD = 2  # update each afterstate online, as soon as the next move is chosen


@njit(inline='always')
def scratch():
    """A player's working arrays: (feature-index rows, candidate afterstates, their rewards).

    Rows of feature indices: 3 banks of 4 candidates, and one for a start position; a move writes
    its candidates' rows in one bank while the afterstate before last, in another, waits for its
    forward update (see play_games). Kernels of expected targets have 4 more rows, afterstates and
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


# slot state: a game in flight's numbers, a row each of play_games' ``counts`` (int64) and ``reals`` (float64)
GAME, SCORE, STEPS, BANK, LAST_ROW, PENDING, PENDING_ROW, RECORD_CODE, ENTERED = range(9)
EPSILON, PENDING_TARGET = 0, 1


@njit(inline='always')
def begin_episode(table, rng, mode, params, pool, endgame, stop, out, given, handoff, s, e, counts, reals, boards,
                  work):
    """Begin game ``e`` of a block in slot ``s`` of play_games (its board, previous afterstate and numbers), or
    leave the slot empty (GAME -1) when the block has no game left or ``stop[0]`` asks it to return.

    ``given``: the game goes on from the position in ``handoff`` (see finish_from); else a new game, a restart
    from ``pool`` or an endgame's start, as run_block describes."""
    if not given and (e >= out[0].shape[0] or stop[0]):
        counts[s, GAME] = -1
        return
    counts[s, GAME] = e
    counts[s, BANK] = 0
    counts[s, LAST_ROW] = 12
    counts[s, PENDING] = 0
    counts[s, ENTERED] = 0
    counts[s, RECORD_CODE] = 99
    if given:
        start, numbers = handoff
        board, previous = load_board(start, 0), load_board(start, 1)
        counts[s, SCORE], counts[s, STEPS] = numbers[0, 0], numbers[0, 1]
        reals[s, EPSILON] = epsilon_at(params, params[FIRST_EPISODE]) if mode != PLAY else 0.0
    else:
        reals[s, EPSILON] = epsilon_at(params, params[FIRST_EPISODE] + e) if mode != PLAY else 0.0
        pool_boards, pool_state = pool
        restart = params[RESTARTS]
        started = np.uint8(0)
        if restart > 0.0 and pool_state[0] > 0 and uniform(rng) < restart:
            board = load_board(pool_boards, below(rng, pool_state[0]))
            started = np.uint8(1)
        elif endgame is not None and params[ENDGAME_STARTS] > 0.0 and uniform(rng) < params[ENDGAME_STARTS]:
            board = endgame_start(endgame[0][1], rng)
            endgame[1][2] += 1
            started = np.uint8(1)
        else:
            board = new_game(rng, CELLS)
        out[3][e] = started
        if restart > 0.0 and not started and pool_boards.shape[0] > 0:
            counts[s, RECORD_CODE] = np.int64(params[RESTART_CODE])
        previous = EMPTY_BOARD
        counts[s, SCORE], counts[s, STEPS] = 0, 0
    store_board(boards, 2 * s, board)
    store_board(boards, 2 * s + 1, previous)
    index_row(previous, work[0], np.int64(12))


@njit(inline='always')
def training_slots(mode, params, paths):
    """Games a block plays at a time (play_games, 1 or 2): with backward updates params[IN_FLIGHT], or where it is
    0 the network's TRAINING_GAMES_IN_FLIGHT, as many as ``paths`` hold; one with forward updates, which gained
    nothing from a second game (the speed page has the figures)."""
    if mode != BACKWARD:
        return 1
    asked = np.int64(params[IN_FLIGHT])
    return min(TRAINING_GAMES_IN_FLIGHT if asked <= 0 else asked, MAX_GAMES_IN_FLIGHT, paths)


@njit(inline='always')
def slot_path(path_boards, path_steps, s, capacity):
    """Slot ``s``'s path, (boards, steps), in the slots' paths made one (play_games)."""
    return path_boards[s * capacity:(s + 1) * capacity], path_steps[s * capacity:(s + 1) * capacity]


@njit(inline='always')
def leave_game(handoff, j, counts, boards, s):
    """Record ``j`` of ``handoff`` = (boards: board and last afterstate of each record, numbers: score, moves, game,
    slot) gets slot ``s``'s game as it stands: a game handed off, or where finish_from's game stopped."""
    start, numbers = handoff
    store_board(start, 2 * j, load_board(boards, 2 * s))
    store_board(start, 2 * j + 1, load_board(boards, 2 * s + 1))
    numbers[j, 0] = counts[s, SCORE]
    numbers[j, 1] = counts[s, STEPS]
    numbers[j, 2] = counts[s, GAME]
    numbers[j, 3] = s


@njit
def play_games(table, w, dirty, rng, mode, params, paths, handoff, pool, stop, out, endgame, given):
    """The episodes of a block, training_slots at a time (1 or 2), or one game from a given position.

    Each round every game in flight asks for its candidates' weights (ask_for_candidates), then every game
    moves on them, so that each game's weights come while the other game computes; a game over hands its slot
    to the block's next game. The rest is one game's: a game played alone (forward updates, a given position,
    networks of over 40 features) plays, learns and draws as one game at a time does. Two games draw their tiles
    from one random stream in turn, and a game's backward updates are made when it ends, while the other plays
    on: learning per episode is the same in distribution, not in its draws (the learning page compares them).

    ``params``: the learner's numbers (named in td2048.kernels.params); learns when mode is
    BACKWARD or FORWARD. ``paths`` = (boards, steps), a path per slot: BACKWARD keeps a game's afterstates in
    its boards and per move (reward, updated V) in its steps (with state values: the states s_0..s_T, and at i
    the reward of the move that led to s_i). With probability epsilon (its episode's, epsilon_at) a
    move is a uniformly random legal one (exploration), learned from as played: targets follow
    the moves made (on-policy). A random draw happens only when epsilon > 0.
    Multistage networks: the first time a chosen afterstate is in a stage not yet entered, that
    stage starts from the previous one's weights (``enter_stage``; when params[PROMOTE] is 1).
    Restarts: a new game's first board with a code >= params[RESTART_CODE] is kept in the ring
    ``pool`` = (boards, state: boards held, boards kept in all), for later episodes to start from.
    ``endgame`` = (table, counts): an endgame's table, (teacher, masks) as td2048.kernels.tables reads it,
    chooses the move wherever it plays one (endgame_choice), in place of the network's or exploration's,
    learned from as played; counts[0] adds its moves, counts[1] the episodes it played in (counts[2]:
    the endgame starts). None: no table, and the kernels compile without the table's code.
    A 4-bit board hands its game off, unfinished, when it holds two 32768 tiles, which only 5-bit cells can
    merge: the block then starts no other game, and the game's record in ``handoff`` (leave_game) is for the
    wide kernels to go on with (finish_from). ``given``: one game, from ``handoff``'s first record (finish_from).

    Returns (games started: each finished into ``out`` or handed off, games handed off).
    """
    alpha_split = params[ALPHA_SPLIT]
    # A game's arrays are named at each use (works[s], its path's rows from s * capacity in the slots' paths made
    # one), never bound to a name per move: Numba counts references to each array a name holds, and those counts,
    # per move, made training 1.8 times as slow on 2x4.
    capacity = paths[0].shape[1]
    path_boards = paths[0].reshape((paths[0].shape[0] * capacity, paths[0].shape[2]))
    path_steps = paths[1].reshape((paths[1].shape[0] * capacity, 2))
    pool_boards, pool_state = pool
    slots = training_slots(mode, params, paths[0].shape[0]) if not given else 1
    works = (scratch(), scratch())  # MAX_GAMES_IN_FLIGHT of each
    counts = np.zeros((MAX_GAMES_IN_FLIGHT, 9), np.int64)
    reals = np.zeros((MAX_GAMES_IN_FLIGHT, 2))
    boards = np.zeros((2 * MAX_GAMES_IN_FLIGHT, handoff[0].shape[1]), np.uint64)
    promote = STAGED and mode != PLAY and params[PROMOTE] > 0.0
    ranked = EXPECTED_TARGET and params[RANK_MOVES] > 0.0
    targets = np.zeros(4)
    beside = np.int64(params[RESTART_BESIDE])  # the kept board also holds a second tile of this code or more
    codes = np.zeros(16, np.int64)  # the table's view of a position (see endgame_choice)
    following = 0  # the next game to start
    handed = 0
    for s in range(slots):
        begin_episode(table, rng, mode, params, pool, endgame, stop, out, given, handoff, s, following, counts, reals,
                      boards, works[s])
        following += counts[s, GAME] >= 0
    while True:
        playing = False
        for s in range(slots):  # every game in flight: its candidates, their weights asked for
            if counts[s, GAME] < 0:
                continue
            board = load_board(boards, 2 * s)
            record_code = counts[s, RECORD_CODE]
            if record_code < 99 and max_code(board) >= record_code and (beside == 0
                                                                      or tiles_at_least(board, beside) >= 2):
                store_board(pool_boards, pool_state[1] % pool_boards.shape[0], board)
                pool_state[1] += 1
                pool_state[0] = min(pool_state[0] + 1, pool_boards.shape[0])
                counts[s, RECORD_CODE] = 99
            if needs_wide(board):
                if counts[s, PENDING]:
                    update_row(w, dirty, works[s][0], counts[s, PENDING_ROW], reals[s, PENDING_TARGET], alpha_split)
                leave_game(handoff, handed, counts, boards, s)
                handed += 1
                counts[s, GAME] = -1
                continue
            playing = True
            ask_for_candidates(table, w, board, works[s], counts[s, BANK])
            if counts[s, PENDING]:  # forward TD's update of the afterstate before last, while this move's weights
                # come (its own weights are in the cache, and it still comes before every read of this move)
                update_of(w, dirty, works[s][0], counts[s, PENDING_ROW], reals[s, PENDING_TARGET], alpha_split)
        if not playing:
            return following, handed
        for s in range(slots):  # then every game moves
            if counts[s, GAME] < 0:
                continue
            board = load_board(boards, 2 * s)
            bank = counts[s, BANK]
            steps = counts[s, STEPS]
            written = counts[s, PENDING] != 0
            counts[s, PENDING] = 0
            d, after, reward, after_value = best_candidate(w, board, works[s], bank, written)
            over = d < 0
            if not over:
                e, e_after, e_reward = -1, after, reward  # another move than the network's: the table's or
                # exploration's
                if endgame is not None:  # (a test of the argument itself: without a table Numba compiles none of it)
                    e = endgame_choice(table, board, endgame[0], codes)[0]
                    if e >= 0:
                        endgame[1][0] += 1
                        if counts[s, ENTERED] == 0:
                            endgame[1][1] += 1
                            counts[s, ENTERED] = 1
                        e_after, e_reward = load_board(works[s][1], e), works[s][2][e]
                epsilon = reals[s, EPSILON]
                if e < 0 and epsilon > 0.0 and uniform(rng) < epsilon:
                    e, e_after, e_reward = random_legal_move(works[s][1], works[s][2], board, rng)
                if e >= 0:
                    if e != d:
                        d = e
                        after = e_after
                        reward = e_reward
                        if mode == FORWARD and not STATE_VALUES:
                            after_value = value_row(w, works[s][0], 4 * bank + d)
                if promote:
                    enter_stage(w, dirty, after)
                if EXPECTED_TARGET and mode == FORWARD:
                    row = 4 * bank + d
                    if STATE_VALUES:  # s_t toward the best move's r + E[V] (0 past the end: see below)
                        feature_indices(board, works[s][0], np.int64(12))
                        update_of(w, dirty, works[s][0], np.int64(12), best_total(table, w, board, works[s]),
                                  exact_share(works[s][0], np.int64(12), alpha_split))
                    elif ranked:  # the moves' expected targets rank them (regret_update); s'_t toward its own
                        for m in range(4):
                            if load_board(works[s][1], m) != board:
                                targets[m] = expected_target(table, w, load_board(works[s][1], m), works[s])
                        update_of(w, dirty, works[s][0], row, targets[d], exact_share(works[s][0], row, alpha_split))
                        regret_update(w, dirty, works[s], bank, board, targets, alpha_split)
                    elif params[BACKUP_ALL] > 0.0:  # every legal move's afterstate of s_t toward its expected target
                        for m in range(4):
                            candidate = load_board(works[s][1], m)
                            if candidate != board:
                                row = 4 * bank + m
                                update_of(w, dirty, works[s][0], row, expected_target(table, w, candidate, works[s]),
                                          exact_share(works[s][0], row, alpha_split))
                    else:  # s'_t toward its expected target, as soon as it is chosen
                        update_of(w, dirty, works[s][0], row, expected_target(table, w, after, works[s]),
                                  exact_share(works[s][0], row, alpha_split))
                elif mode == FORWARD and steps > 0 and not STATE_VALUES:
                    counts[s, PENDING] = 1
                    counts[s, PENDING_ROW] = counts[s, LAST_ROW]
                    reals[s, PENDING_TARGET] = reward + after_value
                    prefetch_aux(dirty, works[s][0], counts[s, LAST_ROW])
                elif mode == BACKWARD:
                    if steps + 1 >= capacity:  # a safety valve: no 2048 game is this long, 2584 ones hardly
                        over = True
                    elif STATE_VALUES:
                        store_board(path_boards, s * capacity + steps, board)
                        path_steps[s * capacity + steps + 1, 0] = reward
                    else:
                        store_board(path_boards, s * capacity + steps, after)
                        path_steps[s * capacity + steps, 0] = reward
            if not over:
                store_board(boards, 2 * s + 1, after)
                counts[s, LAST_ROW] = 4 * bank + d
                counts[s, BANK] = (bank + 1) % 3
                counts[s, SCORE] += reward
                counts[s, STEPS] = steps + 1
                following_board = spawn_tile(after, rng, CELLS)
                if STATE_VALUES and mode == FORWARD and not EXPECTED_TARGET:  # s_t's target: r_t + V(s_t+1), 0
                    # past the end
                    target = reward + value(w, following_board) if can_move(table, following_board) else reward
                    td_update(w, dirty, board, target, alpha_split)
                store_board(boards, 2 * s, following_board)
                continue
            if STATE_VALUES:  # the game is over: its last updates
                if mode == FORWARD:
                    td_update(w, dirty, board, 0.0, alpha_split)
                elif mode == BACKWARD:
                    store_board(path_boards, s * capacity + steps, board)
                    if EXPECTED_TARGET:
                        expected_updates(table, w, dirty, params, slot_path(path_boards, path_steps, s, capacity),
                                         steps + 1, works[s])
                    else:
                        backward_updates(w, dirty, params, slot_path(path_boards, path_steps, s, capacity),
                                         steps + 1, works[s][0])
            elif EXPECTED_TARGET:  # forward: each afterstate was updated as it was chosen
                if mode == BACKWARD:
                    expected_updates(table, w, dirty, params, slot_path(path_boards, path_steps, s, capacity), steps,
                                     works[s])
            elif mode == FORWARD and steps > 0:
                update_row(w, dirty, works[s][0], counts[s, LAST_ROW], 0.0, alpha_split)
            elif mode == BACKWARD:
                backward_updates(w, dirty, params, slot_path(path_boards, path_steps, s, capacity), steps,
                                 works[s][0])
            if given:  # finish_from's game
                leave_game(handoff, 0, counts, boards, s)
                out[0][0], out[2][0], out[1][0] = counts[s, SCORE], steps, max_code(board)
                return 1, 0
            store_result(out, counts[s, GAME], counts[s, SCORE], steps, board)
            if handed > 0:  # a block with a game handed off starts no other
                counts[s, GAME] = -1
                continue
            begin_episode(table, rng, mode, params, pool, endgame, stop, out, given, handoff, s, following, counts,
                       reals, boards, works[s])
            following += counts[s, GAME] >= 0


@njit
def finish_from(table, w, dirty, rng, mode, params, paths, handoff, endgame):
    """Play on from a position: ``handoff``'s first record (see leave_game: the board and the last afterstate,
    the score and moves so far), as run_block leaves a game it hands off; the game's path in the first of
    ``paths``.

    For a game handed off by another board width, and for play from a given position. On
    return the record holds where play stopped; returns (largest code, handed off). ``endgame``: as in
    play_games.
    """
    out = (np.zeros(1, np.int64), np.zeros(1, np.int64), np.zeros(1, np.int64), np.zeros(1, np.uint8))
    no_pool = (np.empty((0, handoff[0].shape[1]), np.uint64), np.zeros(2, np.int64))
    _, handed = play_games(table, w, dirty, rng, mode, params, paths, handoff, no_pool, np.zeros(1, np.uint8), out,
                           endgame, np.int64(1))
    return max_code(load_board(handoff[0], 0)), handed > 0


@njit
def run_block(table, w, dirty, rng, mode, params, paths, handoff, pool, stop, out, endgame):
    """Up to len(out[0]) episodes in one compiled call (play_games).

    ``w``, ``dirty``: the weights and what an update marks (see update_of); ``rng``: the random
    state; ``mode``: PLAY, BACKWARD or FORWARD; ``params``: the learner's numbers (named in
    td2048.kernels.params); ``paths``: (boards, steps), a path per game in flight (see play_games); ``out`` =
    (scores, largest codes, moves, restarted): episode e's results at e; ``endgame``: an endgame's table and
    its counts, or None (see play_games).

    Returns (episodes started, handed off). Before each episode ``stop[0]`` is read: another
    thread sets it to ask for a merge, and the block starts no other episode (the ones in flight finish).
    Handed off: how many of the episodes started reached what these kernels cannot play (see play_games);
    record j of ``handoff`` = (boards, numbers) holds the j-th one's board and last afterstate, its score, moves,
    episode and slot (its path is that slot's in ``paths``), for finish_from on the other kernels. Every other
    episode started is finished into ``out``.

    Restarts (params[RESTARTS] = p > 0): an episode starts, with probability p, from a board drawn
    uniformly from ``pool`` = (boards, state) instead of a new game (restarted 1); a new game keeps
    its first board with a tile code >= params[RESTART_CODE] in the pool (see play_games). Without
    restarts no random number is drawn for them. Endgame starts (params[ENDGAME_STARTS] = q > 0, with an
    endgame's table): an episode not restarted starts, with probability q, from the endgame's start (endgame_start;
    restarted 1, counted in ``endgame``'s counts[2]).
    """
    return play_games(table, w, dirty, rng, mode, params, paths, handoff, pool, stop, out, endgame, np.int64(0))


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
    handed off (see play_games) leaves its board in ``handoff`` for ``record_finish``."""
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
