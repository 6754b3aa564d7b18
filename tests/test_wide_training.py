"""Training, evaluating and saving on 5-bit cells: 2584 and 2048 past 32768 (split from test_wide_network.py
so that the two files compile their kernels on two cores at once)."""

import json

import numpy as np
import pytest
from commands import td2048
from naive import FIB

from td2048.io.model import load_model, save_model
from td2048.learn import Learner
from td2048.network import Network, parse_network
from td2048.play import evaluate
from td2048.settings import TrainSettings
from td2048.training import train

# the suite's 2584 network: every 2584 test shares its kernels (each network compiles for seconds), and with
# codes clamped at 15 they are those of 2048 on 5-bit cells (test_handoff.py) too
FIB_NETWORK, FIB_CLAMP = "2x4", 15


def test_2584_learns_and_round_trips(tmp_path):
    net, stats = train(TrainSettings(game="2584", network=FIB_NETWORK, clamp=FIB_CLAMP, episodes=3000,
                                     block=500, seed=1))
    assert net.game == "2584" and net.spec.clamp == FIB_CLAMP
    assert stats[-1].avg > 1.3 * stats[0].avg, (stats[0].avg, stats[-1].avg)
    assert set(map(int, stats[-1].reach)) <= set(FIB) and "2584" in stats[-1].reach
    save_model(tmp_path / "fib.td2048", net)
    back, header = load_model(tmp_path / "fib.td2048")
    assert back.game == "2584" and header["network"]["cell_bits"] == 5 and back.spec.clamp == FIB_CLAMP
    a, b = evaluate(net, 200, seed=3), evaluate(back, 200, seed=3)
    assert a.avg == b.avg and a.reach == b.reach


def test_cli_2584(tmp_path):
    run = tmp_path / "run"
    r = td2048("train", "--game", "2584", "--network", FIB_NETWORK,
               "--clamp", str(FIB_CLAMP), "--episodes", "400", "--block", "200", "--seed", "2",
               "--out", str(run))
    assert r.returncode == 0, r.stderr
    assert "(2584)" in r.stdout and "\t233\t" in r.stdout  # Fibonacci tiles in the table
    r = td2048("eval", str(run / "model.td2048"), "--games", "100", "--json")
    assert r.returncode == 0, r.stderr
    reach = json.loads(r.stdout)["reach"]
    assert reach and set(map(int, reach)) <= set(FIB)
    r = td2048("convert", str(run / "model.td2048"), str(tmp_path / "x.bin"))
    assert r.returncode == 2 and "2048 networks" in r.stderr
    r = td2048("train", "--game", "2584", "--network", "8x6", "--episodes", "5", "--out", str(tmp_path / "big"))
    assert r.returncode == 2 and "over the memory limit" in r.stderr  # 8 x 22^6 float32


def test_eval_checks_the_game(tmp_path):
    save_model(tmp_path / "fib.td2048", Network(parse_network(FIB_NETWORK, clamp=FIB_CLAMP), game="2584"))
    r = td2048("eval", str(tmp_path / "fib.td2048"), "--game", "2048", "--games", "5")
    assert r.returncode == 2 and "game 2584, not 2048" in r.stderr
    r = td2048("eval", str(tmp_path / "fib.td2048"), "--game", "2584", "--games", "5")
    assert r.returncode == 0, r.stderr


def test_2584_state_values_learn():
    settings_ = TrainSettings(network=FIB_NETWORK, clamp=FIB_CLAMP, game="2584", episodes=1500, block=500, seed=1,
                              alpha=0.1, method="state")
    _, stats = train(settings_)
    assert stats[-1].avg > 1.3 * stats[0].avg, [s.avg for s in stats]


def test_state_learning_goes_on_through_the_handoff():
    """Here, beside the 2584 state tests: the 5-bit state kernels it goes on with are theirs."""
    from test_handoff import TWO_32768

    net = Network(parse_network("2x4"), method="state")
    score, moves, largest = Learner(net, seed=2).learn_from(TWO_32768, 0.1)
    assert largest >= 16 and score >= 65536
    assert np.count_nonzero(net.weights) > 16 * moves // 4


@pytest.mark.parametrize("method", ["afterstate", "state"])
def test_2584_returns_and_exploration(method):
    """On 2584 too: lambda 0 and 1-step returns are TD(0) bit for bit; lambda, n-step and exploration learn."""
    def trained(**options):
        settings_ = TrainSettings(network=FIB_NETWORK, clamp=FIB_CLAMP, game="2584", episodes=300, block=100, seed=4,
                                  method=method,
                                  **options)
        net, stats = train(settings_)
        return net.weights, stats

    plain, _ = trained()
    assert np.array_equal(trained(lam=0.0)[0], plain) and np.array_equal(trained(nstep=1)[0], plain)
    for options in ({"lam": 0.5}, {"nstep": 3}, {"explore": "exp:1:0.01:100"}, {"lam": 1.0}):
        weights, stats = trained(**options)
        assert not np.array_equal(weights, plain) and np.isfinite(weights).all(), options
        assert stats[-1].avg > stats[0].avg * 0.9, options
