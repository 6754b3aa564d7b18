"""benchmarks/tile_chain.py's board helpers (neighbours, the lines along an edge from a corner, and chains) and its
counts of the games that enter an endgame."""

import importlib.util
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "tile_chain.py"
spec = importlib.util.spec_from_file_location("tile_chain", SCRIPT)
tile_chain = importlib.util.module_from_spec(spec)
spec.loader.exec_module(tile_chain)


def test_neighbours_stay_on_the_board():
    near = tile_chain.neighbours(4, 3)  # 4 rows of 3 cells in the 4x4 frame
    assert sorted(near) == [0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14]
    assert sorted(near[0]) == [1, 4]
    assert sorted(near[5]) == [1, 4, 6, 9]
    assert sorted(near[14]) == [10, 13]


def test_edge_lines_start_in_a_corner_and_run_along_an_edge():
    lines = tile_chain.edge_lines(4, 3)
    assert (0, 1, 2) in lines and (0, 4, 8) in lines and (14, 10, 6) in lines and (12, 13, 14) in lines
    assert len(lines) == 8
    assert len(tile_chain.edge_lines(2, 2)) == 0  # no line of three fits


def test_a_line_along_a_long_side_is_told_from_one_along_a_short_side():
    assert tile_chain.along_long_side((0, 4, 8), 4, 3)  # down a column of 4 rows
    assert not tile_chain.along_long_side((0, 1, 2), 4, 3)  # along a row of 3 cells
    assert tile_chain.along_long_side((2, 1, 0), 3, 4) and not tile_chain.along_long_side((0, 4, 8), 3, 4)
    assert not any(tile_chain.along_long_side(line, 4, 4) for line in tile_chain.edge_lines(4, 4))


def test_the_longest_chain_halves_tile_by_tile():
    near = tile_chain.neighbours(4, 3)
    codes = dict.fromkeys(near, 0)
    codes.update({0: 11, 4: 10, 8: 9, 12: 8, 13: 3, 1: 9})  # 2048, 1024, 512, 256 down a column; a 512 beside
    assert tile_chain.longest_chain(codes, 0, near) == 4
    assert tile_chain.longest_chain(codes, 4, near) == 3  # 1024, 512, 256 (the other 512 is beside the 2048 only)
    codes[12] = 7
    assert tile_chain.longest_chain(codes, 0, near) == 3


def test_games_that_enter_an_endgame_are_counted_and_valued(model_2x3, tmp_path):
    from td2048.solve import load_solution, solve
    from td2048.solve.endgame import Endgame

    # 2x3's chain: a 32 in a corner, a 16 beside it; the goal a 32 where the 16 stands (then a 64)
    solve("2x3", out=tmp_path / "t.endgame", endgame=Endgame.parse("2x3", "0=32,1=16", "1=32"))
    table = load_solution(tmp_path / "t.endgame", endgame=True)
    c = tile_chain.follow(str(model_2x3 / "run" / "model.td2048"), 32, 200, 1, 7, [table])
    assert 0 < c["held 0"] <= c["entered 0"] <= c["reached"] <= 200
    assert 0 <= c["built 0"] <= c["entered 0"]
    assert 0 < c["perfect 0"] / c["held 0"] < 1
    assert 0 < c["perfect 0 p10"] <= c["perfect 0 p50"] <= c["perfect 0 p90"] <= 1
    # the same games (the same seed) with the table playing its endgame: they enter it alike, then build more
    played = tile_chain.follow(str(model_2x3 / "run" / "model.td2048"), 32, 200, 1, 7, [table], True)
    assert played["entered 0"] == c["entered 0"] and played["table moves"] > 0
    assert played["built 0"] > c["built 0"]
