"""An evaluation is a function of (model, search settings, games, seed) alone: each game's random state comes from
the seed and the game's index (numpy's SeedSequence, computed in compiled code), and each game starts with an
empty transposition table, so threads, shards, the order of games and what a table held before change nothing.
(The command four ways, Ray included: tests/test_ray.py.)"""

import numpy as np
import pytest
from test_state_values import random_weights

from td2048.cli.watch import Game
from td2048.distributed.shards import play_sharded
from td2048.network import Network, parse_network
from td2048.play import Agent, Search
from td2048.rng import game_rng_states, make_rng_state

GREEDY = Search(1)
DEPTH2 = Search(2, tt_size=1 << 16)


@pytest.fixture(scope="module")
def network():
    return random_weights(Network(parse_network("2x4")), 3)  # 8 isomorphisms: mirror images share table entries


@pytest.mark.parametrize("seed", [0, 3, 2**32, 2**64 + 5, 2**127 + 12345, np.random.SeedSequence(7, spawn_key=(2,)),
                                  np.random.SeedSequence([1, 2**40])])
def test_a_games_state_is_the_seed_sequence_child_of_its_index(seed):
    for first in (0, 9, 2**32 - 2):
        states = game_rng_states(seed, first, 3)
        for k, state in enumerate(states):
            entropy, key = (seed.entropy, tuple(seed.spawn_key)) if isinstance(seed, np.random.SeedSequence) \
                else (seed, ())
            assert np.array_equal(state, make_rng_state(np.random.SeedSequence(entropy, spawn_key=key + (first + k,))))
    assert np.array_equal(game_rng_states(5, 3, 1)[0], make_rng_state(np.random.SeedSequence(5).spawn(4)[3]))


def games(agent, count, first=0):
    scores, codes, moves = (np.zeros(count, np.int64) for _ in range(3))
    agent.play_into(scores, codes, moves, first)
    return scores, codes, moves


@pytest.mark.parametrize("search", [GREEDY, DEPTH2], ids=["depth1", "depth2"])
def test_threads_shards_and_the_games_before_change_nothing(network, search):
    one = Agent(network, search, seed=4)
    alone = games(one, 24)
    three = Agent(network, search, seed=4, threads=3)
    stats = three.play(24)
    assert (stats.avg, stats.max, stats.moves) == (alone[0].mean(), alone[0].max(), alone[2].sum())
    assert three.search_counts() == one.search_counts()
    # games 10..23 on a fresh agent: the same as after games 0..9 on the same table
    later = Agent(network, search, seed=4)
    assert all(np.array_equal(a[10:], b) for a, b in zip(alone, games(later, 14, first=10), strict=True))
    sharded = play_sharded(network, search, 24, seed=4, shard_size=7, threads=2)
    assert (sharded.stats.avg, sharded.stats.moves) == (stats.avg, stats.moves)
    assert sharded.search_counts == one.search_counts()


def test_a_table_used_by_earlier_games_is_empty_for_the_next(network):
    """On a network with symmetries a table's entry can give a board its mirror image's value, which may differ
    in the last bit: a game must never see entries of another game."""
    agent = Agent(network, DEPTH2, seed=8)
    played = games(agent, 12)
    for g in range(12):  # each game on a new agent, with a table never used
        fresh = Agent(network, DEPTH2, seed=8)
        assert [a[g] for a in played] == [a[0] for a in games(fresh, 1, first=g)]
        for name, count in fresh.search_counts().items():
            agent.counters[0, ("nodes", "leaves", "tt_probes", "tt_hits").index(name)] -= count
    assert not agent.counters[:, :4].any() and played[2].sum() > 0


def test_watch_plays_the_first_game_of_eval_at_any_depth(network):
    for search in (GREEDY, DEPTH2):
        scores, _, moves = games(Agent(network, search, seed=6), 1)
        game = Game(Agent(network, search, seed=6))
        while not game.over:
            game.step()
        assert (game.score, game.moves) == (scores[0], moves[0])
