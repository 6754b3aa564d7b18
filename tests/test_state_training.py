"""State values: learning, models and the CLI (split from test_state_values.py so that the two files compile their
kernels on two cores at once; on 5-bit cells, the hand-off included: test_wide_training.py)."""

import json

import pytest
from commands import td2048
from test_state_values import random_weights

from td2048.io.model import load_model, save_model
from td2048.network import Network, parse_network
from td2048.settings import TrainSettings
from td2048.training import train


def test_state_values_learn():
    """(On 2584: test_wide_training.py, whose other 2584 state tests compile the same kernels.)"""
    settings_ = TrainSettings(network="2x4", episodes=1500, block=500, seed=1, alpha=0.1, method="state")
    _, stats = train(settings_)
    assert stats[-1].avg > 1.3 * stats[0].avg, [s.avg for s in stats]


def test_model_keeps_the_method_and_refuses_another(tmp_path):
    net = random_weights(Network(parse_network("2x4"), method="state"), 1)
    save_model(tmp_path / "m.td2048", net)
    loaded, header = load_model(tmp_path / "m.td2048")
    assert header["method"] == "state" and loaded.method == "state" and loaded.state_values
    assert loaded.expected_value(0x1200) == net.expected_value(0x1200)
    with pytest.raises(Exception, match="state values .*not afterstate"):
        load_model(tmp_path / "m.td2048", method="afterstate")


def test_cli_trains_evaluates_and_guards_state_models(tmp_path):
    run = tmp_path / "run"
    done = td2048("train", "--network", "2x4", "--method", "state", "--episodes", "300",
                  "--block", "100", "--seed", "3", "--out", str(run))
    assert done.returncode == 0, done.stderr
    assert "state values" in done.stdout
    model = run / "model.td2048"
    evaluated = td2048("eval", str(model), "--games", "20", "--json")
    assert evaluated.returncode == 0, evaluated.stderr
    assert json.loads(evaluated.stdout)["method"] == "state"
    # --init takes the model's method; asking for the other one is refused in one line
    init = td2048("train", "--init", str(model), "--episodes", "100", "--out", str(tmp_path / "r2"))
    assert init.returncode == 0 and "state values" in init.stdout, init.stderr
    for args in (["train", "--init", str(model), "--method", "afterstate", "--out", str(tmp_path / "r3")],
                 ["train", "--resume", str(run), "--method", "afterstate"],
                 ["convert", str(model), str(tmp_path / "demo.bin")]):
        refused = td2048(*args)
        assert refused.returncode == 2 and len(refused.stderr.strip().splitlines()) == 1, (args, refused.stderr)
        assert "Traceback" not in refused.stderr
    bad = td2048("train", "--method", "states")
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
