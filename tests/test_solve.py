"""td2048 solve: the compiled solver against a plain recursion, symmetry, the solution file, the command."""

from __future__ import annotations

import json

import naive
import numpy as np
import pytest
from commands import assert_one_line_error, td2048

from td2048.cli.__main__ import main
from td2048.errors import TD2048Error
from td2048.games.board import Board
from td2048.solve import estimate_positions, load_solution, solve
from td2048.solve.layers import Rules


@pytest.fixture(scope="module")
def solved():
    """Compiled solutions with every value kept, by (board, game)."""
    return {(b, g): solve(b, g, keep_values=True) for b, g in (("2x2", "2048"), ("2x3", "2048"), ("2x2", "2584"))}


@pytest.mark.parametrize("board, game", [("2x2", "2048"), ("2x3", "2048"), ("2x2", "2584")])
def test_every_value_matches_the_plain_recursion(solved, board, game):
    solution = solved[(board, game)]
    rows, cols = (int(x) for x in board.split("x"))
    reference, start = naive.solve_board(rows, cols, game)
    assert solution.positions == len(reference)
    rules = Rules(board, game)
    aims = solution.aims
    for keys, values in zip(solution.keys, solution.values, strict=True):
        for codes, got in zip(rules.codes_of(keys), values, strict=True):
            grid = [list(codes[r * cols:(r + 1) * cols]) for r in range(rows)]
            want = reference[min(tuple(map(tuple, g)) for g in naive.symmetries(grid))]
            np.testing.assert_allclose(got, want[:aims], rtol=0, atol=1e-9)
            assert not any(want[aims:])  # no position reaches a code past the solution's columns
    np.testing.assert_allclose(solution.start, start[:aims], rtol=0, atol=1e-9)
    assert solution.expected_score == pytest.approx(start[0], abs=1e-9)


def test_2x2_reaches_the_published_rates(solved):
    reach = solved[("2x2", "2048")].reach
    assert reach[16] == pytest.approx(0.96, abs=0.01) and reach[32] == pytest.approx(0.08, abs=0.01)


def test_a_symmetric_position_has_one_value(solved):
    solution = solved[("2x3", "2048")]
    rules = Rules("2x3", "2048")
    layer = solution.keys[len(solution.keys) // 2]
    for codes in rules.codes_of(layer[:: max(1, len(layer) // 20)]):
        grid = [list(codes[:3]), list(codes[3:])]
        values = [solution.value(Board(tuple(c for row in g for c in row), "2048", "2x3"))
                  for g in naive.all_symmetries(grid)]
        for v in values[1:]:
            np.testing.assert_array_equal(v, values[0])
    square = solved[("2x2", "2048")]
    grid = [[1, 0], [2, 3]]
    values = [square.value([c for row in g for c in row]) for g in naive.all_symmetries(grid)]
    assert len(values) == 8 and all(np.array_equal(v, values[0]) for v in values)


def test_an_unreached_position_or_another_board_is_refused(solved):
    solution = solved[("2x2", "2048")]
    with pytest.raises(TD2048Error, match="does not reach"):
        solution.value([15, 15, 15, 15])
    with pytest.raises(TD2048Error, match="2x3"):
        solution.value(Board((1, 0, 0, 0, 0, 1), "2048", "2x3"))


def test_the_solution_file_round_trips(solved, tmp_path):
    solution = solved[("2x3", "2048")]
    path = tmp_path / "2x3.solution"
    solution.save(path)
    back = load_solution(path, "2x3", "2048")
    assert back.sums == solution.sums and back.positions == solution.positions
    for a, b in zip(back.keys, solution.keys, strict=True):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(back.values, solution.values, strict=True):
        np.testing.assert_array_equal(a, b)
    assert back.expected_score == solution.expected_score and back.reach == solution.reach
    assert [p.name for p in tmp_path.iterdir()] == ["2x3.solution"]  # no temporary file left


def test_a_damaged_or_other_file_is_refused_in_one_line(solved, tmp_path, capsys):
    path = tmp_path / "2x2.solution"
    assert main(["solve", "--board", "2x2", "--out", str(path)]) == 0
    capsys.readouterr()
    blob = path.read_bytes()
    assert load_solution(path).positions == solved[("2x2", "2048")].positions

    def refused(fragment, *extra):
        assert main(["solve", "--board", "2x2", "--from", str(path), *extra]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and fragment in err[0], err

    path.write_bytes(blob[:-9])
    refused("truncated")
    flipped = bytearray(blob)
    flipped[-100] ^= 0x40
    path.write_bytes(bytes(flipped))
    refused("checksum")
    path.write_bytes(blob)
    assert main(["solve", "--board", "2x3", "--from", str(path)]) == 2
    assert "not 2x3" in capsys.readouterr().err
    refused("not the game 2584", "--game", "2584")
    path.write_bytes(b"hello")
    refused("not a td2048 solution file")
    assert main(["solve", "--board", "2x2", "--from", str(path)]) == 2  # nothing left half written
    out = tmp_path / "refused.solution"
    assert main(["solve", "--board", "4x4", "--out", str(out)]) == 2
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["2x2.solution"]


def test_the_command_prints_one_json_line():
    result = td2048("solve", "--board", "2x2", "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout.strip().splitlines()[-1])
    assert data["board"] == "2x2" and data["game"] == "2048" and data["positions"] == 110
    assert data["reach"]["16"] == pytest.approx(0.9625, abs=1e-3)
    # a sure tile's reach, summed in floating point, is printed as 1.0 (1.0000000000000002 before): every
    # probability within [0, 1], as the text lines show them
    assert data["reach"]["2"] == data["reach"]["8"] == 1.0 and all(0 <= p <= 1 for p in data["reach"].values())
    assert "       8  1.000000" in result.stdout
    assert set(data) == {"board", "game", "positions", "expected_score", "reach", "seconds", "peak_memory_bytes"}


def test_bad_options_are_usage_errors_that_point_to_the_help():
    """As every command's: one line ending with (see td2048 solve --help), exit 2."""
    for args, fragment in ((["--board", "5x5"], "5x5 board is not supported"),
                           (["--board", "x"], "a board is written RxC"),
                           (["--board", "2x2", "--memory-limit", "lots"], "bad size"), ([], "required: --board")):
        assert_one_line_error(td2048("solve", *args), "td2048 solve: error:", fragment, "(see td2048 solve --help)")


def test_a_board_too_large_is_refused_with_its_estimate():
    assert_one_line_error(td2048("solve", "--board", "4x4"), "4x4", "positions", "memory limit")
    assert estimate_positions("4x3") == pytest.approx(1.15e12)
    with pytest.raises(TD2048Error, match="1.15e\\+12 positions"):
        _refuse("4x3")


def _refuse(board):
    from argparse import Namespace

    from td2048.cli import solve as command

    command.run(Namespace(board=board, game="2048", out=None, memory_limit=64 * 2**30, json=False, source=None,
                          reach=False, score_at_least=None, count=False, fixed=None, goal=None))


@pytest.mark.parametrize("board, game", [("2x3", "2048"), ("2x2", "2584")])
def test_the_streamed_file_holds_what_a_solve_in_memory_holds(solved, board, game, tmp_path):
    """solve(out=...) writes each layer as it is finished: the same keys and expected scores as a solve that keeps
    them (bit for bit), and with reach=True every column; a file is 16 bytes a position by default."""
    kept = solved[(board, game)]
    for reach in (False, True):
        path = tmp_path / f"{board}-{reach}.solution"
        streamed = solve(board, game, out=path, reach=reach, workdir=tmp_path)
        assert streamed.columns == (kept.aims if reach else 1) and streamed.sums == kept.sums
        for i in range(len(kept.sums)):
            np.testing.assert_array_equal(streamed.keys[i], kept.keys[i])
            np.testing.assert_array_equal(streamed.values[i], kept.values[i][:, :streamed.columns])
        assert streamed.expected_score == kept.expected_score and streamed.reach == kept.reach
        if not reach:
            assert path.stat().st_size < 16 * kept.positions + 64 * 1024
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"{board}-False.solution", f"{board}-True.solution"]


def test_a_file_of_the_older_format_is_refused_with_what_to_do(tmp_path):
    """Format 1 (keys, then every aim's values): one line saying to solve again."""
    header = json.dumps({"format": "td2048-solution", "version": 1, "board": "2x2", "game": "2048"}).encode()
    header += b" " * (-(16 + len(header)) % 64)
    path = tmp_path / "old.solution"
    path.write_bytes(b"TD2048S\n" + len(header).to_bytes(8, "little") + header + b"\0" * 64)
    with pytest.raises(TD2048Error, match="older format .*solve again, td2048 solve --board 2x2 --out old.solution"):
        load_solution(path)


def test_the_value_of_a_position_needs_reach_columns_only_for_reach(solved, tmp_path):
    solution = solved[("2x2", "2048")]
    path = tmp_path / "2x2.solution"
    solution.save(path, reach=False)
    back = load_solution(path)
    assert back.columns == 1 and back.aims == solution.aims and back.reach == solution.reach
    codes = [1, 0, 2, 3]
    assert back.value(codes)[0] == solution.value(codes)[0] and len(back.value(codes)) == 1
    np.testing.assert_array_equal(back.move_values(codes), solution.move_values(codes))


def test_count_enumerates_without_solving():
    result = td2048("solve", "--board", "2x3", "--count", "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout.strip().splitlines()[-1])
    assert data["positions"] == 21_752 and data["layers"] == 125 and "tile sum" in result.stdout
