"""Start checks: a start that averages below a bar (--start-over-below), or has built no game's TILE
(--start-over-without), at its check is thrown away, and the run starts over (at most --max-starts starts)."""

import json

import numpy as np
import pytest
from commands import td2048
from hypothesis import given
from hypothesis import strategies as st

from td2048.errors import TD2048Error
from td2048.games.bitboard import largest_cells
from td2048.games.shape import BoardShape
from td2048.games.wide import wide_from_codes
from td2048.io.model import load_model
from td2048.learn import Learner
from td2048.settings import TrainSettings
from td2048.start_over import MAX_STARTS, StartChecks
from td2048.training import train

RUN = ["train", "--board", "2x3", "--network", "012,345", "--block", "500", "--seed", "3", "--tc", "--restarts", "0.2"]


def blocks(path):
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_every_start_below_the_bar_is_thrown_away_and_the_last_is_kept(tmp_path):
    out = tmp_path / "run"
    result = td2048(*RUN, "--episodes", "2000", "--start-over-below", "1e9", "--start-over-at", "1000",
                    "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("starting over from fresh weights") == MAX_STARTS - 1
    assert f"start {MAX_STARTS} of at most {MAX_STARTS}" in result.stdout
    kept, thrown = blocks(out / "log.jsonl"), blocks(out / "starts.jsonl")
    assert [b["episodes"] for b in kept] == [500, 1000, 1500, 2000]
    assert {b["start"] for b in kept} == {MAX_STARTS}
    assert [b["episodes"] for b in thrown] == [500, 1000] * (MAX_STARTS - 1)
    assert [b["start"] for b in thrown if b.get("start_over")] == list(range(1, MAX_STARTS))
    header = load_model(out / "model.td2048")[1]
    assert header["state"]["episodes"] == 2000

    # a resumed run goes on as its last start: no check again, none made over
    result = td2048("train", "--resume", str(out), "--episodes", "2500")
    assert result.returncode == 0, result.stderr
    assert f"start {MAX_STARTS} of at most {MAX_STARTS}" in result.stdout
    assert "starting over from" not in result.stdout
    assert blocks(out / "starts.jsonl") == thrown
    assert [b["start"] for b in blocks(out / "log.jsonl")] == [MAX_STARTS] * 5


def test_a_start_above_the_bar_is_kept(tmp_path):
    out = tmp_path / "run"
    result = td2048(*RUN, "--episodes", "1000", "--start-over-below", "1", "--out", str(out), "--quiet")
    assert result.returncode == 0, result.stderr
    assert [b["start"] for b in blocks(out / "log.jsonl")] == [1, 1]
    assert not (out / "starts.jsonl").exists()


def test_a_start_that_built_no_tile_is_thrown_away_up_to_max_starts(tmp_path):
    out = tmp_path / "run"
    result = td2048(*RUN, "--episodes", "1500", "--start-over-without", "256", "--start-over-at", "500",
                    "--max-starts", "3", "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert "built no 256 at episode 500 (start 1 of at most 3)" in result.stdout
    assert result.stdout.count("no game built a 256 by episode 500; starting over from fresh weights") == 2
    thrown = blocks(out / "starts.jsonl")
    assert [b["start"] for b in thrown if b.get("start_over")] == [1, 2]
    assert all(b["reach"].get("256", 0) == 0 for b in thrown)
    assert {b["start"] for b in blocks(out / "log.jsonl")} == {3}


def test_a_start_that_built_the_tile_is_kept_and_both_checks_must_pass():
    base = dict(board="2x3", network="012,345", episodes=600, block=200, seed=5, tc_from="0", start_over_at=200)
    network, stats = train(TrainSettings(**base, start_over_without=64))
    assert stats[0].reach["64"] > 0 and [b.extra["start"] for b in stats] == [1, 1, 1]
    settings = TrainSettings(**base, start_over_without=64, start_over_below=1e9, max_starts=2)
    network, stats = train(settings)
    assert [b.extra["start"] for b in stats] == [1, 2, 2, 2]
    assert settings.start_checks().fails(200, stats[0].avg, True).startswith("averaged")
    checks = settings.start_checks()
    assert checks.fails(200, 1e9, False) == "no game built a 64 by episode 200"
    assert checks.fails(200, 1e9, True) is None
    assert checks.fails(200, 0.0, False) == ("averaged 0 at episode 200, below 1e+09, and no game built a 64 "
                                             "by episode 200")  # every check it fails
    assert checks.fails(400, 0.0, False) is None  # no check there


def test_each_check_at_its_own_episode(tmp_path):
    out = tmp_path / "run"
    result = td2048(*RUN, "--episodes", "1500", "--start-over-below", "1e9@500", "--start-over-without", "256@1000",
                    "--max-starts", "2", "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert "averages below 1e+09 at episode 500 or built no 256 by episode 1000 (start 1 of at most 2)" in result.stdout
    assert "# start 1: averaged" in result.stdout and "at episode 500, below 1e+09; starting over" in result.stdout
    assert [b["episodes"] for b in blocks(out / "starts.jsonl")] == [500]  # thrown at the first check
    assert [b["episodes"] for b in blocks(out / "log.jsonl")] == [500, 1000, 1500]
    settings = json.loads((out / "settings.json").read_text())
    assert (settings["start_over_below_at"], settings["start_over_without_at"]) == (500, 1000)


def test_a_start_passes_the_tile_check_with_a_game_of_any_block_before_it():
    settings = TrainSettings(board="2x3", network="012,345", episodes=800, block=200, seed=5, tc_from="0",
                             start_over_without=64, start_over_without_at=400, start_over_below=1,
                             start_over_below_at=200)
    assert settings.start_checks().checks() == {"below": 200, "without": 400}
    assert settings.start_checks().episodes() == (200, 400)
    network, stats = train(settings)
    assert stats[0].reach["64"] > 0 and [b.extra["start"] for b in stats] == [1, 1, 1, 1]


@pytest.mark.parametrize("extra, fragment", [
    (["--start-over-at", "100"], "add --start-over-below"),
    (["--max-starts", "3"], "--max-starts bounds"),
    (["--start-over-without", "100"], "--start-over-without must be a tile of 2048"),
    (["--start-over-below", "100", "--start-over-at", "1000"], "after the run's 1000 episodes"),
    (["--start-over-below", "0"], "--start-over-below"),
    (["--start-over-below", "100@0"], "--start-over-below"),
    (["--start-over-corner-below", "0.5", "--restarts", "0"], "add --restarts P"),
    (["--start-over-corner-below", "1.5"], "--start-over-corner-below must be a share"),
    (["--start-over-without", "256@1000"], "--start-over-without checks a start at episode 1000, after"),
    (["--network", "012345", "--start-over-below", "100", "--pretrain", "012:100"], "--init or --pretrain"),
])
def test_refusals(tmp_path, extra, fragment):
    result = td2048(*RUN, "--episodes", "1000", *extra, "--out", str(tmp_path / "run"))
    assert result.returncode == 2
    assert fragment in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "run").exists()


def test_in_memory_the_thrown_start_is_forgotten():
    settings = TrainSettings(board="2x3", network="012,345", episodes=600, block=200, seed=5, tc_from="0",
                             start_over_below=1e9, start_over_at=200)
    network, stats = train(settings)
    assert [b.extra["start"] for b in stats] == [1, 2, 3, 4, 5, 5, 5]
    assert [bool(b.extra.get("start_over")) for b in stats] == [True] * 4 + [False] * 3
    assert network.weights.any() and network.accumulators is not None


def test_learner_start_over_gives_fresh_weights_and_accumulators():
    settings = TrainSettings(board="2x3", network="012,345", optimistic=1000.0, tc_from="0")
    settings.validate()
    network = settings.new_network()
    fresh = network.weights.copy()
    learner = Learner(network, seed=1)
    learner.run(50, 1.0, settings.learning_options(), tc=True)
    assert network.accumulators is not None and not np.array_equal(network.weights, fresh)
    learner.start_over(settings.optimistic)
    assert np.array_equal(network.weights, fresh) and network.accumulators is None


@given(st.lists(st.lists(st.integers(0, 17), min_size=16, max_size=16), min_size=1, max_size=20))
def test_largest_cells_is_the_first_cell_of_the_largest_code(grids):
    first = [max(range(16), key=lambda i: (codes[i], -i)) for codes in grids]
    wide = np.array([wide_from_codes(codes) for codes in grids], np.uint64)
    assert largest_cells(wide).tolist() == first
    narrow = [codes for codes in grids if max(codes) < 16]
    if narrow:
        packed = np.array([sum(c << (4 * i) for i, c in enumerate(codes)) for codes in narrow], np.uint64)
        assert largest_cells(packed).tolist() == [max(range(16), key=lambda i: (c[i], -i)) for c in narrow]


@pytest.mark.parametrize("board, corners", [("4x4", (0, 3, 12, 15)), ("4x3", (0, 2, 12, 14)),
                                            ("2x3", (0, 2, 4, 6)), ("3x4", (0, 3, 8, 11))])
def test_corner_cells(board, corners):
    assert BoardShape.parse(board).corner_cells == corners


def test_the_corner_share_of_a_block_is_of_its_kept_boards():
    settings = TrainSettings(board="2x3", network="012,345", episodes=400, block=200, seed=5, tc_from="0",
                             restarts=0.2, restart_tile=32)
    network, stats = train(settings)
    shares = [b.extra["corner"] for b in stats]
    assert all(0.0 <= share <= 1.0 for share in shares) and len(shares) == 2
    settings = TrainSettings(board="2x3", network="012,345", episodes=400, block=200, seed=5, tc_from="0",
                             restarts=0.2, restart_tile=32, start_over_corner_below=1.0, max_starts=2)
    network, stats = train(settings)
    assert [b.extra["start"] for b in stats] == ([1, 2, 2] if stats[0].extra["corner"] < 1.0 else [1, 1])
    checks = settings.start_checks()
    assert checks.fails(200, 0.0, False, 0.25) == "25% of the games in a corner at episode 200, below 100%"
    assert checks.fails(200, 0.0, False, None).startswith("no game built its restart tile in a corner")
    assert checks.fails(200, 0.0, False, 1.0) is None


def test_learner_corner_share_counts_the_boards_kept_since():
    settings = TrainSettings(board="2x3", network="012,345", restarts=0.2, restart_tile=32, tc_from="0")
    settings.validate()
    learner = Learner(settings.new_network(), seed=1)
    learner.run(100, 1.0, settings.learning_options(), tc=True)
    kept = learner.pools.kept()
    corners = learner.network.board.corner_cells
    assert kept[0] > 0 and learner.pools.corner_share(kept, corners) is None
    pool = learner.pools.boards[0, :kept[0], 0]
    expected = np.isin(largest_cells(pool), BoardShape.parse("2x3").corner_cells).mean()
    assert learner.pools.corner_share(np.zeros(1, np.int64), corners) == pytest.approx(expected)


def test_start_checks_are_one_value_that_says_where_a_start_is_checked_and_in_words():
    assert not StartChecks() and StartChecks().text() == "" and StartChecks().episodes() == ()
    one = StartChecks(block=500, below=14000, without=4096)
    assert one and one.episodes() == (500,)
    assert one.text() == "starting over while a start averages below 14000 or built no 4096 at episode 500"
    two = StartChecks(below=11200, below_at=50000, without=4096, without_at=100000)
    assert two.text() == ("starting over while a start averages below 11200 at episode 50000 or built no 4096 by "
                          "episode 100000")
    assert two.fails(50000, 11000.0, False) == "averaged 11000 at episode 50000, below 11200"
    with pytest.raises(TD2048Error, match="start_over_below_at is the episode of --start-over-below: give its score"):
        StartChecks(below_at=100)
    with pytest.raises(TD2048Error, match="--start-over-corner-below must be a share"):
        StartChecks(corner_below=0.0)
