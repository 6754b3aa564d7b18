"""2048 on 4-bit cells hands an episode to 5-bit cells when two 32768 tiles could merge; 2048 on 5-bit cells
throughout (the same kernels)."""

import numpy as np
import pytest
from naive import from_grid

from td2048.games.wide import wide_row_table
from td2048.io.model import load_model, save_model
from td2048.learn import Learner
from td2048.network import Network, parse_network
from td2048.play import Agent, evaluate
from td2048.rng import make_rng_state
from td2048.settings import TrainSettings
from td2048.training import train

TWO_32768 = from_grid([[15, 15, 3, 1], [2, 4, 6, 8], [1, 3, 5, 7], [0, 0, 0, 0]])
ONE_32768 = from_grid([[15, 14, 3, 1], [2, 4, 6, 8], [1, 3, 5, 7], [0, 0, 0, 0]])


def test_two_32768_tiles_merge_on_the_default_board():
    net = Network(parse_network("2x4"))  # zero weights: greedy by reward, so it takes the 65536 merge
    assert not net.wide
    score, moves, largest = Agent(net, seed=1).play_from(TWO_32768)
    assert largest >= 16 and score >= 65536 and moves > 0


def test_one_32768_tile_stays_on_4_bit_cells():
    net = Network(parse_network("2x4"))
    score, moves, largest = Agent(net, seed=1).play_from(ONE_32768)
    assert largest == 15 and moves > 0


def test_learning_goes_on_through_the_handoff():
    net = Network(parse_network("2x4"))
    learner = Learner(net, seed=2)
    score, moves, largest = learner.learn_from(TWO_32768, 0.1)
    assert largest >= 16 and net.weights.any()
    # afterstates from before the hand-off (4-bit) and after it (5-bit) were all updated
    assert np.count_nonzero(net.weights) > 16 * moves // 4


def test_records_go_on_through_the_handoff():
    net = Network(parse_network("2x4"))
    wide = net.wide_kernels()
    actions = np.zeros((100_000, 4), np.int64)
    start = np.zeros((2, 2), np.uint64)
    start[0, 0] = TWO_32768
    n, score, largest = wide.record_finish(wide_row_table("2048"), net.weights, make_rng_state(3), actions, 0,
                                           start, 0)
    assert largest >= 16 and score >= 65536
    assert (actions[:n:2, 0] == 1).all() and actions[0, 2] >= 65536  # slides first; the merge pays 65536


def test_search_goes_on_through_the_handoff():
    from td2048.play import Search

    net = Network(parse_network("2x4"))  # zero weights: values are rewards, so it takes the 65536 merge
    score, moves, largest = Agent(net, Search(2, tt_size=1 << 16), seed=1).play_from(TWO_32768)
    assert largest >= 16 and score >= 65536 and moves > 0


def test_2048_on_5_bit_cells(tmp_path):
    net, stats = train(TrainSettings(game="2048", cells=5, network="2x4", episodes=1000, block=500, seed=3))
    assert net.wide and net.game == "2048" and stats[-1].avg > stats[0].avg
    save_model(tmp_path / "w.td2048", net)
    back, header = load_model(tmp_path / "w.td2048")
    assert back.wide and header["network"]["cell_bits"] == 5
    assert evaluate(back, 50, seed=1).avg == evaluate(net, 50, seed=1).avg
    with pytest.raises(Exception, match="2584 needs 5"):
        Network(parse_network("2x4"), game="2584", cell_bits=4)
