"""The public API as users call it: every public name says what it is. (The API tutorial's blocks run in
test_docs.py; the parameters of every public name are checked in test_docstrings.py.)"""

import subprocess
import sys

import pytest

import td2048
from td2048 import Board, TD2048Error


def test_every_public_name_has_a_docstring():
    for name in td2048.__all__:
        if name != "__version__":
            assert getattr(td2048, name).__doc__, name


def test_board_from_tiles():
    board = Board.from_tiles([[0, 2, 4, 8], [0, 0, 0, 0], [0, 0, 16, 0], [2, 0, 0, 0]])
    assert board.tiles[0] == [0, 2, 4, 8] and board.max_tile == 16 and len(board.empty_cells) == 11
    assert Board.from_packed(board.packed()) == board == Board.from_packed(board.packed(wide=True))
    left, reward = board.slide("left")
    assert left.tiles[0] == [2, 4, 8, 0] and reward == 0 and board.legal_moves() == ["up", "right", "down", "left"]
    assert Board.from_tiles([2, 2] + [0] * 14).slide(3) == (Board.from_tiles([4] + [0] * 15), 4)
    fib = Board.from_tiles([1, 2, 3, 5] + [0] * 12, game="2584")
    assert fib.slide("left") == (Board.from_tiles([3, 8] + [0] * 14, game="2584"), 11)
    assert "    16" in str(board)
    for bad, message in (([3] + [0] * 15, "3 is not a tile of 2048"), ([2] * 15, "16 tile values")):
        with pytest.raises(TD2048Error, match=message):
            Board.from_tiles(bad)
    with pytest.raises(TD2048Error, match="a move is one of"):
        board.slide("north")


def test_agent_takes_a_depth_or_a_search():
    net = td2048.Network(td2048.parse_network("2x4"))
    assert td2048.Agent(net, depth=3).search.depth == 3
    with pytest.raises(TD2048Error, match="not both"):
        td2048.Agent(net, td2048.Search(depth=2), depth=2)
    with pytest.raises(TD2048Error, match="--depth must be from 1"):
        td2048.Agent(net, depth=0)


@pytest.mark.parametrize("imports", ["import td2048; import gymnasium as gym",
                                     "import gymnasium as gym; import td2048",
                                     "import td2048; td2048.TileGameEnv; import gymnasium as gym"])
def test_environments_registered_in_any_import_order(imports, cli_env):
    """Registered whichever comes first, td2048 or Gymnasium, and however the classes were reached."""
    code = (f"{imports}\n"
            "env = gym.make('td2048/2584-v0'); vec = gym.make_vec('td2048/2048-v0', num_envs=2)\n"
            "assert type(vec).__name__ == 'TileGameVectorEnv' and env.reset(seed=1)[0].shape == (4, 4)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=cli_env)
    assert r.returncode == 0, r.stderr


def test_importing_td2048_leaves_gymnasium_and_rich_alone(cli_env):
    """Every td2048 command imports the package: Gymnasium and rich load only when used (start-up time)."""
    code = ("import sys, td2048.cli.__main__\n"
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'gymnasium', 'rich'}))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=cli_env)
    assert r.returncode == 0 and r.stdout.strip() == "[]", r.stdout + r.stderr
