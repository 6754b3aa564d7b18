"""Search kernels: expectimax over the network's values, whole games played with it.

Like :mod:`td2048.kernels.episode`, this file is not imported as it is: its text below the
marker is appended to each network's generated module (:mod:`td2048.kernels.codegen`), after
the episode kernels, whose ``best_move`` it plays depth 1 with. The imports above the marker name,
for a linter and a reader, what the generated module defines; they are not copied. Nothing here
changes a weight: this is playing, not learning.

Depth follows TDL2048+'s ply convention. Depth 1 is the greedy choice, ``r + V(s')``. At depth
d > 1 a move is worth ``r +`` the expectation, over every empty cell of its afterstate ``s'``
and both new tiles (the game's own probabilities), of the best value at depth d - 1 of the
state so made; a state with no legal move is worth 0::

    move value (d)       = r + A(s', d)
    A(s', 1)             = V(s')                         (state values: E[V(s' + new tile)])
    A(s', d > 1)         = mean over empty cells c of  0.9 M(s' + tile 1 at c, d - 1)
                                                     + 0.1 M(s' + tile 2 at c, d - 1)
    M(s, d)              = max over legal moves of r + A(s', d); 0 if none

``A`` is the one recursive function; its results at d > 1 go through the transposition
table (keyed by the afterstate, up to the network's symmetries, and by d). Each game starts with
an empty table: an entry holds the game it was written in (``counters[TT_GAME]``, raised at the
start of each game), and entries of other games count as empty. So a game searches the same
nodes, hits the same entries and plays the same moves whichever games played on the table
before it, at no cost (nothing is cleared). A depth limit
``limits[n]`` caps d for an afterstate with n empty cells, so that wide-open boards, whose
expectations are the costliest and matter least, are searched less deep.

An endgame's table can stand at the search's boundary (``boundary`` = (endgame, worth), the endgame as
:mod:`td2048.kernels.endgame` takes it, ``worth`` in points; None: no boundary, and no cost, since the kernels
then compile without it). Where an afterstate keeps the endgame's fixed tiles and the table gives it a chance
p > 0 of building the goal (the mean over the new tile of the table's values, as the table's own choice takes
it; p = 1 where the goal shows), the game is the table's from there, and the search goes no deeper: the
afterstate is worth ``V(s') + worth * p``, the network's value and what building the goal adds to it, ``worth``
points, times the table's chance of building it. The greedy choices of the last ply take the same values.
"""

import numpy as np

from td2048.config import njit
from td2048.kernels.episode import ask_for_best_move, best_move, best_move_asked, hand_off, scratch, store_result
from td2048.kernels.interface import (
    CELLS,
    GAMES_IN_FLIGHT,
    N_FEATURES,
    STATE_VALUES,
    VERTICAL,
    asked_indices,
    canonical,
    expected_value_of,
    feature_indices,
    value_of,
)
from td2048.kernels.tables import EG_GOAL, EG_PATTERN, endgame_holds, teacher_after_value
from td2048.kernels.templates.downgrade import downgraded
from td2048.kernels.templates.narrow_board import (
    P_SECOND_TILE,
    U64,
    board_words,
    empty_mask,
    load_board,
    max_code,
    move,
    needs_wide,
    new_game,
    place_tile,
    spawn_tile,
    store_board,
)

# ---- search kernels (shared by every network) ----
P_FIRST_TILE = 1.0 - P_SECOND_TILE
TT_KEY_LO, TT_KEY_HI, TT_DEPTH, TT_VALUE = 0, 1, 2, 3  # an entry: 4 words, two entries to a 64-byte line
NODES, LEAVES, TT_PROBES, TT_HITS = 0, 1, 2, 3  # counters
TT_GAME = 4  # counters[TT_GAME]: the game whose entries the table holds (the others' count as empty)
DEPTH_BITS = U64(8)  # an entry's depth word: (game << 8) | depth
DEPTH_MASK = U64(255)


@njit(inline='always')
def leaf_value(w, after, xs, r):
    """A(s', 1) from the feature indices in row r of xs."""
    if STATE_VALUES:
        return expected_value_of(w, after, xs, r)
    return value_of(w, xs, r)


@njit(inline='always')
def tt_slot(lo, hi, entries):
    """First entry of the key's 2-entry bucket (entries: a power of two)."""
    h = lo * U64(0x9E3779B97F4A7C15) ^ (hi + U64(0x632BE59BD9B4E019)) * U64(0xC2B2AE3D27D4EB4F)
    h ^= h >> U64(31)
    return np.int64(h & U64(entries - 2))


SAME_AGAIN = 1 << 40  # added to a reward: the afterstate's value is known already (see leaves_expectation)


@njit(inline='always')
def boundary_chance(after, boundary, codes):
    """The endgame's chance of building its goal from ``after`` where the table plays on from it (see the
    module's docstring), else -1: the fixed tiles moved, or no chance. ``codes``: int64 scratch of 16."""
    teacher, masks = boundary[0]
    if endgame_holds(after, masks, EG_GOAL):
        return 1.0
    if not endgame_holds(after, masks, EG_PATTERN):
        return -1.0
    p = teacher_after_value(teacher, after, codes)
    return p if p > 0.0 else -1.0  # NaN (a position the table lacks): no chance


@njit
def leaves_expectation(table, w, after, empty, n, work, counters, boundary):
    """A(after, 2): the mean over new tiles of the greedy r + V of the state so made.

    Placements go in two banks of 4 rows: the weights of one placement's afterstates are asked
    for while the last one's are summed, so that their reads wait on memory together. And a
    move that slides the new tile along its own line often gives the afterstate that the same
    tile gave one cell before (``4 . . .`` + a 2 anywhere, left: ``4 2 . .``): so the last
    afterstate of each (move, tile, line) is kept with its value (``seen``), and an afterstate
    met again takes that value instead of reading its weights (the same value, bit for bit)."""
    xs, afters, rewards, values, seen_after, seen_value, seen, codes = work
    for i in range(32):
        seen[i] = 0
    total = 0.0
    last = 2 * n  # placements: (k // 2)-th empty cell, tile k % 2 + 1
    cell = -1
    for k in range(last + 1):
        if k < last:
            if k % 2 == 0:
                cell += 1
                while not (empty >> U64(4 * cell)) & U64(1):
                    cell += 1
            code = 1 + k % 2
            s = place_tile(after, cell, code)
            bank = 4 * (k % 2)
            seen[32 + k % 2] = cell
            for d in range(4):
                a, r = move(table, s, d, VERTICAL)
                line = cell % 4 if d % 2 == 0 else cell // 4  # up and down slide columns, left and right rows
                slot = (2 * d + code - 1) * 4 + line
                if a == s:
                    rewards[bank + d] = -1
                elif seen[slot] and a == load_board(seen_after, slot):
                    rewards[bank + d] = r + SAME_AGAIN
                    values[bank + d] = seen_value[slot]
                else:
                    store_board(afters, bank + d, a)
                    rewards[bank + d] = r
                    asked_indices(w, a, xs, bank + d)
        if k > 0:
            j = k - 1
            bank = 4 * (j % 2)
            code = 1 + j % 2
            placed = seen[32 + j % 2]
            best = -np.inf
            for d in range(4):
                r = rewards[bank + d]
                if r < 0:
                    continue
                if r >= SAME_AGAIN:
                    r -= SAME_AGAIN
                else:
                    a = load_board(afters, bank + d)
                    values[bank + d] = leaf_value(w, a, xs, bank + d)
                    if boundary is not None:
                        p = boundary_chance(a, boundary, codes)
                        if p >= 0.0:
                            values[bank + d] += boundary[1] * p
                    line = placed % 4 if d % 2 == 0 else placed // 4
                    slot = (2 * d + code - 1) * 4 + line
                    store_board(seen_after, slot, a)
                    seen_value[slot] = values[bank + d]
                    seen[slot] = 1
                v = r + values[bank + d]
                if v > best:
                    best = v
            if best == -np.inf:
                best = 0.0
            counters[LEAVES] += 1
            total += (P_FIRST_TILE if j % 2 == 0 else P_SECOND_TILE) * best
    return total / n


@njit(inline='always')
def search_scratch():
    """scratch() with room for two placements' afterstates and their values, the afterstates seen
    per (move, tile, line) (leaves_expectation), and a position's codes (boundary_chance)."""
    return (np.empty((13, N_FEATURES), np.uint64), np.empty((8, 2), np.uint64), np.empty(8, np.int64), np.zeros(8),
            np.zeros((32, 2), np.uint64), np.zeros(32), np.zeros(34, np.int64), np.zeros(16, np.int64))


@njit
def afterstate_value(table, w, after, depth, work, tt, ttv, limits, counters, boundary):
    """A(after, depth) (see the module's docstring); ``work``: from search_scratch(), ``tt``/``ttv``: the table
    as words and as floats (no entries: no table), ``counters``: nodes, leaves, probes, hits; ``boundary``: an
    endgame's table where the search stops, or None."""
    p = -1.0  # the table's chance where the search stops at its boundary
    if boundary is not None:
        p = boundary_chance(after, boundary, work[7])
    empty = empty_mask(after) & CELLS
    n = np.int64(0)
    for c in range(16):
        n += np.int64((empty >> U64(4 * c)) & U64(1))
    if depth > limits[n]:
        depth = limits[n]
    if depth <= 1 or n == 0 or p >= 0.0:
        counters[LEAVES] += 1
        xs = work[0]
        row = np.int64(12)  # not a literal: the functions given it compile once for every caller
        feature_indices(after, xs, row)
        value = leaf_value(w, after, xs, row)
        if boundary is not None:
            value += boundary[1] * max(p, 0.0)
        return value
    counters[NODES] += 1
    entries = tt.shape[0]
    slot = 0
    lo = U64(0)
    hi = U64(0)
    game = U64(counters[TT_GAME])
    if entries > 0:
        lo, hi = board_words(canonical(after))
        slot = tt_slot(lo, hi, entries)
        counters[TT_PROBES] += 1
        tag = (game << DEPTH_BITS) | U64(depth)
        for e in range(slot, slot + 2):
            if tt[e, TT_DEPTH] == tag and tt[e, TT_KEY_LO] == lo and tt[e, TT_KEY_HI] == hi:
                counters[TT_HITS] += 1
                return ttv[e, TT_VALUE]
    if depth == 2:  # the last ply: greedy choices, their weights fetched a placement ahead
        value = leaves_expectation(table, w, after, empty, n, work, counters, boundary)
    else:
        total = 0.0
        for c in range(16):
            if (empty >> U64(4 * c)) & U64(1):
                for code in range(1, 3):
                    s = place_tile(after, c, code)
                    best = -np.inf
                    for d in range(4):
                        a, r = move(table, s, d, VERTICAL)
                        if a != s:
                            v = r + afterstate_value(table, w, a, depth - 1, work, tt, ttv, limits, counters,
                                                     boundary)
                            if v > best:
                                best = v
                    if best == -np.inf:
                        best = 0.0
                    total += (P_FIRST_TILE if code == 1 else P_SECOND_TILE) * best
        value = total / n
    if entries > 0:
        # replacement: an empty entry or the same key, else the shallower of the two (a deep
        # result costs the most to find again); measured in benchmarks/bench_search.py
        e = slot
        first = entry_depth(tt[slot, TT_DEPTH], game)
        if not (first == U64(0) or (tt[slot, TT_KEY_LO] == lo and tt[slot, TT_KEY_HI] == hi)):
            second = entry_depth(tt[slot + 1, TT_DEPTH], game)
            if second == U64(0) or second <= first:
                e = slot + 1
        tt[e, TT_KEY_LO] = lo
        tt[e, TT_KEY_HI] = hi
        tt[e, TT_DEPTH] = (game << DEPTH_BITS) | U64(depth)
        ttv[e, TT_VALUE] = value
    return value


@njit(inline='always')
def entry_depth(word, game):
    """The depth of an entry of this game; 0 (empty) for an entry of another game."""
    return word & DEPTH_MASK if word >> DEPTH_BITS == game else U64(0)


@njit
def search_values(table, w, board, depth, downgrade, work, tt, ttv, limits, counters, values, boundary):
    """values[d] = r + A(afterstate of move d, depth) for each move, NaN where illegal; returns the best
    move (the first of equals, as the greedy choice takes it) or -1 when none is legal.

    With ``downgrade`` > 0, a board holding a code >= downgrade is searched as its downgraded
    board (see ``downgraded``); the moves are the same, their values those of that board. ``boundary``: an
    endgame's table where the search stops, or None (see the module's docstring)."""
    b = board
    if downgrade > 0 and max_code(board) >= downgrade:
        b = downgraded(board, downgrade)
    best, best_value = -1, -np.inf
    for d in range(4):
        after, r = move(table, b, d, VERTICAL)
        if after == b:
            values[d] = np.nan
            continue
        values[d] = r + afterstate_value(table, w, after, depth, work, tt, ttv, limits, counters, boundary)
        if values[d] > best_value:
            best, best_value = d, values[d]
    return best


@njit
def greedy_play_from(table, w, rng, board, score, steps):
    """Play on from ``board`` choosing each move greedily (depth 1 without a downgrade): returns as
    search_play_from. A kernel of its own, with greedy_block and greedy_finish, since they compile in
    half the time of the search kernels, and most evaluations are at depth 1."""
    work = scratch()
    while True:
        if needs_wide(board):
            return score, steps, board, True
        d, after, r, _ = best_move(table, w, board, work)
        if d < 0:
            break
        score += r
        steps += 1
        board = spawn_tile(after, rng, CELLS)
    return score, steps, board, False


@njit
def search_play_from(table, w, rng, board, score, steps, depth, downgrade, tt, ttv, limits, counters):
    """Play on from ``board`` choosing each move by search at ``depth`` (depth 1 without a downgrade:
    greedy_play_from, the same choices and random draws as PLAY). Returns (score, steps, final board,
    handed off): a 4-bit board with two 32768 tiles hands the game off, as in play_from."""
    if depth <= 1 and downgrade == 0:
        return greedy_play_from(table, w, rng, board, score, steps)
    work = search_scratch()
    values = np.empty(4)
    while True:
        if needs_wide(board):
            return score, steps, board, True
        d = search_values(table, w, board, depth, downgrade, work, tt, ttv, limits, counters, values, None)
        if d < 0:
            break
        after, r = move(table, board, d, VERTICAL)
        score += r
        steps += 1
        board = spawn_tile(after, rng, CELLS)
    return score, steps, board, False


@njit
def search_block(table, w, rng, starts, depth, downgrade, tt, ttv, limits, counters, out, handoff):
    """Up to len(out[0]) games from new boards, played by search; ``out`` = (scores, largest codes, moves),
    ``handoff`` = (boards, counts) as in run_block: returns (games finished, handed off).

    Game e starts from the random state ``starts[e]`` (copied into ``rng``, which a game handed off
    leaves where it got to) and with an empty transposition table (a new ``counters[TT_GAME]``)."""
    for e in range(out[0].shape[0]):
        start_game(rng, starts, e, counters)
        score, steps, final, handed = search_play_from(table, w, rng, new_game(rng, CELLS), np.int64(0), np.int64(0),
                                                       depth, downgrade, tt, ttv, limits, counters)
        if handed:
            hand_off(handoff, final, score, steps)
            return e, True
        store_result(out, e, score, steps, final)
    return out[0].shape[0], False


@njit
def search_finish(table, w, rng, depth, downgrade, tt, ttv, limits, counters, handoff):
    """Finish a game handed off by another board width (``handoff`` = (boards: its board first, counts:
    score, moves)); on return ``handoff`` holds where play stopped."""
    boards, counts = handoff
    score, steps, board, handed = search_play_from(table, w, rng, load_board(boards, 0), counts[0], counts[1], depth,
                                                   downgrade, tt, ttv, limits, counters)
    hand_off(handoff, board, score, steps)  # where play stopped, as a hand-off leaves it
    return max_code(board), handed


@njit(inline='always')
def copy_state(to, state):
    """A game's random state (4 words) into ``to``."""
    for k in range(4):
        to[k] = state[k]


@njit(inline='always')
def start_game(rng, starts, e, counters):
    """Game e of a block: its random state from ``starts[e]``, and a table of its own (a new game number)."""
    copy_state(rng, starts[e])
    counters[TT_GAME] += 1


@njit
def greedy_block(table, w, rng, starts, counters, out, handoff):
    """search_block at depth 1 without a downgrade (see greedy_play_from), GAMES_IN_FLIGHT games at a time.

    With two games in flight, each round both games move, on the candidates asked for in the round before, and
    then both ask for their next candidates' weights, so that each game's weights come while the other game
    computes (one game alone waits for them); a game that ends makes way for the next. Each game has its own random
    state (``starts[e]``): the same games, moves and results as one game after the other. A game that reaches
    what these kernels cannot play is handed off once every game before it is finished (a game after it that
    is in flight is dropped, and played again from its start by the next call); ``rng`` then holds the
    handed-off game's random state, as after one game after the other.
    """
    n = out[0].shape[0]
    rngs = np.empty((2, 4), np.uint64)
    boards = np.zeros((2, 2), np.uint64)
    scores = np.zeros(2, np.int64)
    steps = np.zeros(2, np.int64)
    games = np.empty(2, np.int64)  # the game in each slot, -1: none
    games[0], games[1] = -1, -1
    works = (scratch(), scratch())
    following = 0  # the next game to start
    while True:
        for s in range(GAMES_IN_FLIGHT):  # each game moves on the candidates asked for; a free slot starts one
            board = load_board(boards, s)
            if games[s] >= 0:
                d, after, r, _ = best_move_asked(w, board, works[s])
                if d < 0:
                    store_result(out, games[s], scores[s], steps[s], board)
                    if games[s] == n - 1:
                        copy_state(rng, rngs[s])
                    games[s] = -1
                else:
                    scores[s] += r
                    steps[s] += 1
                    board = spawn_tile(after, rngs[s], CELLS)
            if games[s] < 0:
                if following >= n:
                    continue
                start_game(rngs[s], starts, following, counters)
                games[s], scores[s], steps[s] = following, 0, 0
                following += 1
                board = new_game(rngs[s], CELLS)
            if needs_wide(board):  # handed off, once the game in flight before it is finished
                other = 1 - s
                if 0 <= games[other] < games[s]:
                    score, moves, final, handed = greedy_play_from(table, w, rngs[other], load_board(boards, other),
                                                                    scores[other], steps[other])
                    if handed:
                        hand_off(handoff, final, score, moves)
                        copy_state(rng, rngs[other])
                        return games[other], True
                    store_result(out, games[other], score, moves, final)
                hand_off(handoff, board, scores[s], steps[s])
                copy_state(rng, rngs[s])
                return games[s], True
            store_board(boards, s, board)
        if games[0] < 0 and games[1] < 0:
            return n, False
        for s in range(GAMES_IN_FLIGHT):  # then every game's candidates, their weights asked for
            if games[s] >= 0:
                ask_for_best_move(table, w, load_board(boards, s), works[s])


@njit
def greedy_finish(table, w, rng, handoff):
    """search_finish at depth 1 without a downgrade (see greedy_play_from)."""
    boards, counts = handoff
    score, steps, board, handed = greedy_play_from(table, w, rng, load_board(boards, 0), counts[0], counts[1])
    hand_off(handoff, board, score, steps)  # where play stopped, as a hand-off leaves it
    return max_code(board), handed


@njit
def choose_moves(table, w, boards, depth, downgrade, tt, ttv, limits, counters, moves):
    """moves[i] = the move search_values chooses on ``load_board(boards, i)`` (-1 where none is legal),
    each board searched with an empty transposition table (a new ``counters[TT_GAME]``): a board's move
    does not depend on the boards searched before it."""
    if depth <= 1 and downgrade == 0:  # greedy: each board's four afterstates read at once, as play does
        if GAMES_IN_FLIGHT == 1:
            greedy = scratch()
            for i in range(moves.shape[0]):
                moves[i] = best_move(table, w, load_board(boards, i), greedy)[0]
            return
        works = (scratch(), scratch())  # as greedy_block's games in flight: the next board's weights asked for
        if moves.shape[0] > 0:  # before this one's are read
            ask_for_best_move(table, w, load_board(boards, 0), works[0])
        for i in range(moves.shape[0]):
            if i + 1 < moves.shape[0]:
                ask_for_best_move(table, w, load_board(boards, i + 1), works[(i + 1) % 2])
            moves[i] = best_move_asked(w, load_board(boards, i), works[i % 2])[0]
        return
    work = search_scratch()
    values = np.empty(4)
    for i in range(moves.shape[0]):
        counters[TT_GAME] += 1
        moves[i] = search_values(table, w, load_board(boards, i), depth, downgrade, work, tt, ttv, limits, counters,
                                 values, None)


@njit
def search_step(table, w, rng, board, depth, downgrade, tt, ttv, limits, counters, values):
    """One decision and the new tile after it, for callers that time each decision (records):
    (direction or -1, reward, afterstate, next board); ``values`` gets each move's value."""
    work = search_scratch()
    d = search_values(table, w, board, depth, downgrade, work, tt, ttv, limits, counters, values, None)
    if d < 0:
        return d, 0, board, board
    after, r = move(table, board, d, VERTICAL)
    return d, r, after, spawn_tile(after, rng, CELLS)


@njit
def spawn_on(board, rng):
    """The board with one new tile (code 1 or 2 on a random empty cell), as every game places it."""
    return spawn_tile(board, rng, CELLS)


@njit
def board_needs_wide(board):
    """Whether a game on this board must go on on 5-bit cells (two 32768 tiles on 4-bit cells)."""
    return needs_wide(board)


@njit
def scratch_arrays():
    """search_scratch(), for callers in Python (search_values takes it)."""
    return search_scratch()
