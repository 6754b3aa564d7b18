"""benchmarks/endgame_chances.py: an endgame's positions grouped by their largest free tile, against a plain count."""

import importlib.util
from pathlib import Path

import numpy as np

from td2048.solve import load_solution

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "endgame_chances.py"
spec = importlib.util.spec_from_file_location("endgame_chances", SCRIPT)
endgame_chances = importlib.util.module_from_spec(spec)
spec.loader.exec_module(endgame_chances)


def test_the_groups_are_the_positions_counted_one_by_one(endgame_2x3, capsys):
    table = load_solution(endgame_2x3, endgame=True)
    cells = table.board.frame_cells
    fixed = [code for _, code in table.endgame.fixed]  # 32 and 16 (codes 5 and 4)
    expected: dict[int, list[float]] = {}
    for keys, values in zip(table.keys, table.values, strict=True):
        for key, value in zip(keys, np.asarray(values).reshape(len(keys), -1)[:, 0], strict=True):
            codes = [(int(key) >> (4 * c)) & 15 for c in cells]
            for code in fixed:
                codes.remove(code)  # one of each fixed tile is not free
            if max(codes) < min(fixed):
                expected.setdefault(max(codes), []).append(float(value))
    got = endgame_chances.chances(table)
    assert sorted(got) == sorted(expected) and expected
    for code, values in expected.items():
        assert got[code]["positions"] == len(values)
        assert got[code]["max"] == max(values)
        assert got[code]["above half"] == sum(v > 0.5 for v in values) / len(values)
        assert abs(got[code]["median"] - float(np.median(values))) <= 0.02
    assert endgame_chances.main([str(endgame_2x3)]) == 0
    out = capsys.readouterr().out
    assert "32, 16 fixed at cells 0, 1; goal 32 at cell 1" in out and "| largest free tile |" in out
