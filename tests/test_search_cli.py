"""eval --depth, analyze and TDL2048+'s .w files through the command line, as a user runs them."""

import json
import re
import struct

import numpy as np
import pytest
from commands import td2048, td2048_on_a_terminal
from naive import from_grid
from test_learn import SMALL
from test_state_values import random_weights

from td2048.io.model import load_model, save_model
from td2048.io.tdl import read_tdl_weights, write_tdl_weights
from td2048.network import Network, parse_network


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    path = tmp_path_factory.mktemp("search") / "small.td2048"
    save_model(path, random_weights(Network(parse_network(SMALL)), 5))
    return path


BOARD = "2,2,0,0, 0,4,0,0, 0,0,0,0, 0,0,0,8"


def test_analyze_prints_every_move_best_first(model):
    r = td2048("analyze", model, "--board", BOARD, "--depth", 2)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].split() == ["2", "2", ".", "."] and lines[3].split() == [".", ".", ".", "8"]
    moves = [line.split() for line in lines[5:]]
    assert [m[0] for m in moves[:4]] != [] and moves[0][-1] == "best"
    values = [float(m[1]) for m in moves if m[1] != "illegal"]
    assert values == sorted(values, reverse=True)


def test_analyze_json_matches_the_library(model):
    from td2048.play import Agent, Search, parse_board

    r = td2048("analyze", model, "--board", BOARD, "--depth", 2, "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["board"] == [2, 2, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 8] and out["depth"] == 2
    net, _ = load_model(model)
    expected = Agent(net, Search(2)).analyze(parse_board(BOARD))
    assert out["moves"] == expected
    assert out["best"] == max((v, k) for k, v in expected.items() if v is not None)[1]


def test_analyze_marks_illegal_moves(model):
    r = td2048("analyze", model, "--board", "2,4,8,16" + ",0" * 12, "--json")
    out = json.loads(r.stdout)
    assert out["moves"]["up"] is None and out["moves"]["left"] is None and out["moves"]["down"] is not None


@pytest.mark.parametrize("args, message", [
    (["--board", "2,4"], "16 tile values"),
    (["--board", "3" + ",0" * 15], "not a tile"),
    (["--board", "two" + ",0" * 15], "not a tile"),
    (["--board", "65536" + ",0" * 15], "4-bit cells"),
    (["--board", "2,4,2,4,4,2,4,2,2,4,2,4,4,2,4,2"], "no legal move"),
    (["--board", BOARD, "--depth", "0"], "depth"),
    (["--board", BOARD, "--depth", "99"], "depth"),
    (["--board", BOARD, "--limit", "3,x"], "--limit"),
    (["--board", BOARD, "--tt-size", "lots"], "size"),
    (["--board", BOARD, "--downgrade", "100"], "--downgrade"),
])
def test_bad_boards_and_options_get_one_line_and_exit_2(model, args, message):
    r = td2048("analyze", model, *args)
    assert r.returncode == 2 and message in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


@pytest.fixture(scope="module")
def small_boards(tmp_path_factory):
    """Models of the 3x3 and 2x4 boards, by their board's name."""
    models = {}
    for board in ("3x3", "2x4"):
        out = tmp_path_factory.mktemp("board") / board
        r = td2048("train", "--board", board, "--network", board, "--episodes", 200, "--seed", 1, "--out", out,
                   "--quiet")
        assert r.returncode == 0, r.stderr
        models[board] = out / "model.td2048"
    return models


@pytest.mark.parametrize("board, rows", [("3x3", [[2, 0, 0], [0, 4, 0], [8, 0, 2]]),
                                         ("2x4", [[2, 0, 0, 4], [0, 4, 0, 8]])])
def test_analyze_on_other_boards_matches_the_library(small_boards, board, rows):
    from td2048.games.board import Board
    from td2048.play import Agent, Search

    position = ", ".join(str(t) for row in rows for t in row)
    r = td2048("analyze", small_boards[board], "--board", position, "--depth", 2, "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    expected = Agent(load_model(small_boards[board])[0], Search(2)).analyze(Board.from_tiles(rows))
    assert out["board"] == [t for row in rows for t in row] and out["moves"] == expected
    r = td2048("analyze", small_boards[board], "--board", position)
    assert r.returncode == 0 and [line.split() for line in r.stdout.splitlines()[:len(rows)]] == [
        [str(t) if t else "." for t in row] for row in rows], r.stdout
    wrong = td2048("analyze", small_boards[board], "--board", BOARD)
    assert wrong.returncode == 2 and f"the {board} board" in wrong.stderr and "not 16" in wrong.stderr
    assert len(wrong.stderr.strip().splitlines()) == 1, wrong.stderr


def test_eval_with_search_and_its_records_pass_the_judge(model, tmp_path):
    r = td2048("eval", model, "--games", 3, "--depth", 2, "--seed", 1, "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["search"]["depth"] == 2 and out["search"]["tt_size"] > 0 and out["search_counts"]["nodes"] > 0
    again = json.loads(td2048("eval", model, "--games", 3, "--depth", 2, "--seed", 1, "--json",
                              "--tt-size", 0).stdout)
    assert again["search"]["tt_size"] == 0 and again["search_counts"]["tt_probes"] == 0
    records = tmp_path / "games.txt"
    r = td2048("eval", model, "--games", 30, "--depth", 2, "--seed", 2, "--record", records, "--names", "me:env")
    assert r.returncode == 0, r.stderr
    assert len(records.read_text().splitlines()) == 30
    r = td2048("judge", records, "--game", "2048")
    assert r.returncode == 0, r.stdout + r.stderr


def test_eval_shows_games_and_time_left_on_a_terminal_only(model, cli_env):
    """On a terminal, stderr shows the games done and an ETA while eval plays (taken away at the end); stdout,
    what a script reads, is the same as through a pipe, and through a pipe stderr gets nothing."""
    args = ("eval", model, "--games", 12, "--seed", 1, "--depth", 2)
    code, out, terminal = td2048_on_a_terminal(*args, env=cli_env)
    assert code == 0, terminal
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", terminal)
    assert re.search(r"\b12/12 games  ETA \d\d:\d\d\b", plain), plain  # mm:ss, h:mm:ss from an hour
    assert re.search(r"\b0/12 games  ETA --:--", plain), plain  # before a game is done: not known yet
    piped = td2048(*args, env=cli_env)
    assert piped.returncode == 0 and piped.stderr == "", piped.stderr
    timing = re.compile(r"^# [\d,]+ moves in .*$", re.M)  # the one line that differs: seconds, moves/s
    assert timing.sub("", out) == timing.sub("", piped.stdout) and "ETA" not in out
    code, out, terminal = td2048_on_a_terminal(*args, "--json", env=cli_env)
    assert code == 0 and "ETA" not in terminal and json.loads(out)["games"] == 12


def test_eval_refuses_a_table_over_the_memory_limit(model):
    r = td2048("eval", model, "--games", 1, "--depth", 2, "--tt-size", "1GiB", "--memory-limit", "512MiB")
    assert r.returncode == 2 and "memory limit" in r.stderr


def tdl_file(tables: dict[str, np.ndarray], coherence: dict[str, tuple] | None = None) -> bytes:
    """A .w file written from the layout (see td2048.io.tdl), not by td2048's writer; ``coherence``: per table
    TC's (accumulated errors, accumulated absolute errors), as TDL2048+ writes them after the values."""
    out = struct.pack("<BI", 0, len(tables))
    for name, values in tables.items():
        out += struct.pack("<B", 4) + struct.pack("<IHH", int(name, 16), len(name), 0)
        out += struct.pack("<HQ", 4, values.size) + values.astype("<f4").tobytes()
        if coherence is not None:
            errors, absolute = coherence[name]
            out += struct.pack("<HQ", 4, 2 * values.size) + errors.astype("<f4").tobytes()
            out += absolute.astype("<f4").tobytes()
        out += struct.pack("<H", 0)
    return out


def test_tdl_temporal_coherence_files_keep_their_accumulators(tmp_path):
    """TDL2048+ -a 1.0 writes each table's TC accumulators after it: they come in interleaved per weight (as
    td2048's TC kernels read them), go out as they came, and an unknown extra field is skipped."""
    rng = np.random.default_rng(2)
    tables = {"0123": rng.standard_normal(16 ** 4), "4567": rng.standard_normal(16 ** 4)}
    coherence = {name: (rng.standard_normal(16 ** 4), rng.random(16 ** 4)) for name in tables}
    path = tmp_path / "tc.w"
    path.write_bytes(tdl_file(tables, coherence))
    net = read_tdl_weights(path)
    errors, absolute = coherence["4567"]
    offset = net.spec.table_offsets[1]
    assert np.array_equal(net.accumulators[2 * offset::2], errors.astype(np.float32))
    assert np.array_equal(net.accumulators[2 * offset + 1::2], absolute.astype(np.float32))
    write_tdl_weights(tmp_path / "back.w", net)
    assert (tmp_path / "back.w").read_bytes() == path.read_bytes()
    one_table = tdl_file({"0123": tables["0123"]})  # ends with its table's end of extra fields: put one before it
    path.write_bytes(one_table[:-2] + struct.pack("<HQ", 2, 3) + b"\1" * 6 + one_table[-2:])
    assert read_tdl_weights(path).accumulators is None


def test_tdl_weight_files_round_trip(tmp_path):
    rng = np.random.default_rng(1)
    tables = {"0123": rng.standard_normal(16 ** 4), "4567": rng.standard_normal(16 ** 4),
              "0145": rng.standard_normal(16 ** 4)}
    path = tmp_path / "net.w"
    path.write_bytes(tdl_file(tables))
    net = read_tdl_weights(path)
    assert [tuple(map(int, t)) for t in net.spec.tuples] == [(0, 1, 2, 3), (4, 5, 6, 7), (0, 1, 4, 5)]
    assert net.spec.isomorphisms == 8
    board = from_grid([[1, 2, 3, 0], [0, 5, 0, 1], [2, 0, 0, 0], [0, 0, 0, 4]])
    grid = [[1, 2, 3, 0], [0, 5, 0, 1], [2, 0, 0, 0], [0, 0, 0, 4]]
    from naive import all_symmetries, network_value

    cells = [(0, 1, 2, 3), (4, 5, 6, 7), (0, 1, 4, 5)]
    expected = network_value([t.astype(np.float32) for t in tables.values()], cells, grid, all_symmetries(grid))
    assert net.value(board) == pytest.approx(expected, rel=1e-5)
    back = tmp_path / "back.w"
    write_tdl_weights(back, net)
    assert back.read_bytes() == path.read_bytes()
    # through the command line: .w -> .td2048 -> .w
    r = td2048("convert", path, tmp_path / "net.td2048")
    assert r.returncode == 0, r.stderr
    r = td2048("convert", tmp_path / "net.td2048", tmp_path / "again.w")
    assert r.returncode == 0 and (tmp_path / "again.w").read_bytes() == path.read_bytes()


@pytest.mark.parametrize("mangle, message", [
    (lambda b: b[:-10], "truncated"),
    (lambda b: b + b"\0", "unexpected bytes"),
    (lambda b: b"\1" + b[1:], "not a TDL2048+ weight file"),
    (lambda b: b[:5] + b"\7" + b[6:], "table format"),
    (lambda b: b[:6] + b"m@0123  " + b[14:], "not an n-tuple pattern"),
])
def test_bad_tdl_files_get_one_line(tmp_path, mangle, message):
    path = tmp_path / "bad.w"
    path.write_bytes(mangle(tdl_file({"0123": np.zeros(16 ** 4)})))
    r = td2048("convert", path, tmp_path / "out.td2048")
    assert r.returncode == 2 and message in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not (tmp_path / "out.td2048").exists()


def test_tdl_export_refuses_what_it_cannot_hold(tmp_path):
    save_model(tmp_path / "iso4.td2048", Network(parse_network(SMALL, 4)))
    r = td2048("convert", tmp_path / "iso4.td2048", tmp_path / "out.w")
    assert r.returncode == 2 and "8 isomorphisms" in r.stderr and not (tmp_path / "out.w").exists()
