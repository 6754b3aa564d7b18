"""--pretrain: a smaller network trained first, in the run's pretrain/ directory, and a network of one tuple (the
whole board, or most of it) started from its values (Network.start_from), checked against the symmetric images'
values in plain Python."""

import json
import re

import numpy as np
import pytest
from commands import td2048
from hypothesis import given
from hypothesis import strategies as st
from naive import all_symmetries, from_grid

from td2048.errors import TD2048Error
from td2048.games.shape import BoardShape
from td2048.network import Network
from td2048.run import TrainingRun
from td2048.settings import TrainSettings
from td2048.spec import parse_network
from td2048.training import train

SQUARE = BoardShape.parse("3x3")
CLAMP = 3  # 4**9 weights: every position of codes 0..3


@pytest.fixture(scope="module", params=[8, 1], ids=["symmetric-source", "one-isomorphism-source"])
def started(request):
    """A whole 3x3 board (codes clamped at 3) started from a 2x6 network of random weights."""
    source = Network(parse_network("2x6", isomorphisms=request.param, board=SQUARE))
    source.weights[:] = np.random.default_rng(7).normal(0, 50, source.weights.size).astype(np.float32)
    whole = Network(parse_network("012345678", clamp=CLAMP, board=SQUARE))
    whole.start_from(source)
    return source, whole


@given(st.lists(st.lists(st.integers(0, CLAMP), min_size=3, max_size=3), min_size=3, max_size=3))
def test_a_whole_board_starts_at_the_mean_of_its_images_values(started, grid):
    source, whole = started
    images = [source.value(from_grid(g)) for g in all_symmetries(grid)]
    assert whole.value(from_grid(grid)) == pytest.approx(np.mean(images), rel=1e-5, abs=1e-3)


def test_clamped_codes_read_as_the_clamp(started):
    source, whole = started
    grid = [[5, 0, 1], [0, 2, 0], [0, 0, 9]]  # a 32 and a 512 read as 8
    clamped = [[min(c, CLAMP) for c in row] for row in grid]
    images = [source.value(from_grid(g)) for g in all_symmetries(clamped)]
    assert whole.value(from_grid(grid)) == pytest.approx(np.mean(images), rel=1e-5, abs=1e-3)


def test_a_tuple_of_most_cells_starts_at_its_images_values_without_the_cells_it_does_not_read():
    source = Network(parse_network("2x6", board=SQUARE))
    rng = np.random.default_rng(7)
    for table in source.tables():
        table[:] = rng.normal(0, 10, len(table))
    most = Network(parse_network("01234567", clamp=CLAMP, board=SQUARE))  # all but the last corner
    most.start_from(source)
    grid = [[5, 0, 1], [0, 2, 0], [3, 0, 9]]
    clamped = [[min(c, CLAMP) for c in row] for row in grid]
    # each image reads its first 8 cells: the source's value of that image with its last cell emptied, / 8
    images = []
    for g in all_symmetries(clamped):
        g = [list(row) for row in g]
        g[2][2] = 0
        images.append(source.value(from_grid(g)))
    assert most.value(from_grid(grid)) == pytest.approx(np.mean(images), rel=1e-5, abs=1e-3)


def test_only_a_network_of_one_tuple_starts_from_another():
    source = Network(parse_network("2x6", board=SQUARE))
    with pytest.raises(TD2048Error, match="one tuple"):
        Network(parse_network("3x3", board=SQUARE)).start_from(source)
    with pytest.raises(TD2048Error, match="another game"):
        Network(parse_network("012345678", clamp=2, board=SQUARE), game="2584").start_from(source)


@pytest.mark.parametrize("given_settings, message", [
    ({"pretrain": "2x6"}, "NETWORK:EPISODES"),
    ({"pretrain": "2x6:0"}, "NETWORK:EPISODES"),
    ({"pretrain": "2x6:1000", "network": "2x6"}, "not one"),
    ({"pretrain": "2x6:1000", "optimistic": 5000.0}, "no --optimistic"),
    ({"pretrain": "9x9:1000"}, "9x9"),
])
def test_bad_pretraining_is_one_clear_error(given_settings, message):
    settings = TrainSettings(**{"network": "012345678", "clamp": 3, "board": "3x3", **given_settings})
    with pytest.raises(TD2048Error, match=message):
        settings.validate()


def test_train_in_memory_pretrains_first():
    settings = TrainSettings(network="012345", board="2x3", pretrain="2x3:600", episodes=400, block=200, seed=3,
                             target="expected", alpha=1.0, update="forward")
    network, stats = train(settings)
    assert [s.episodes for s in stats] == [200, 400, 600, 200, 400]
    assert network.spec.name == "1x6"


def test_a_run_stopped_while_pretraining_resumes_there(tmp_path):
    settings = TrainSettings(network="012345", board="2x3", pretrain="2x3:600", episodes=400, block=200, seed=3,
                             target="expected", alpha=1.0, update="forward")
    run = TrainingRun.create(tmp_path / "run", settings)
    pretraining = run.pretraining()
    next(iter(pretraining.blocks()))  # one block of three, then a stop
    pretraining.finish()

    run = TrainingRun.resume(tmp_path / "run")
    pretraining = run.pretraining()
    assert pretraining.done == 200
    for _ in pretraining.blocks():
        pass
    pretraining.finish()
    assert run.pretraining() is None  # ended: the run goes on from its model
    assert [b.episodes for b in run.blocks()] == [200, 400]
    run.finish()
    pretrain_log = [json.loads(line)["episodes"] for line in (tmp_path / "run" / "pretrain" / "log.jsonl").open()]
    assert pretrain_log == [200, 400, 600]


def test_the_cli_pretrains_then_trains_and_says_so(tmp_path):
    run = tmp_path / "run"
    r = td2048("train", "--board", "2x3", "--network", "012345", "--pretrain", "2x3:400", "--target", "expected",
               "--alpha", "1", "--update", "forward", "--episodes", "400", "--block", "200", "--seed", "1",
               "--out", run)
    assert r.returncode == 0, r.stderr
    assert "pretraining (2048): network 2x3" in r.stdout
    assert "started from network 2x3 after 400 episodes of TD(0)" in r.stdout
    assert re.search(r"# starting the [0-9,]+ weights from the values of network 2x3", r.stdout)
    assert (run / "pretrain" / "model.td2048").exists() and (run / "model.td2048").exists()
    assert json.loads((run / "settings.json").read_text())["pretrain"] == "2x3:400"
    r = td2048("train", "--board", "2x3", "--network", "2x3", "--pretrain", "2x3:400", "--out", tmp_path / "bad")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "one tuple" in r.stderr
