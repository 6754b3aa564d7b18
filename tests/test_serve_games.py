"""Served games to their end, on small models of both games: their records pass td2048 judge and replay in
the viewer's data; 2584's tile values in the API; the API's values equal td2048 analyze --json there too."""

import json

import pytest
from commands import td2048
from serving import Server, assert_refused
from test_wide_training import FIB_CLAMP, FIB_NETWORK

from td2048.games.tiles import tile_value
from td2048.io.replay_html import replay_text


@pytest.fixture(scope="module")
def servers(tmp_path_factory, cli_env):
    """A server per game, each on a small model trained by the CLI (the networks of the other tests: their
    kernels compile once for the suite)."""
    tmp = tmp_path_factory.mktemp("serve-games")
    out = {}
    for game, network, episodes in (("2048", ["2x4"], 200), ("2584", [FIB_NETWORK, "--clamp", FIB_CLAMP], 100)):
        r = td2048("train", "--game", game, "--network", *network, "--episodes", episodes, "--seed", 1,
                   "--out", tmp / game, "--quiet", env=cli_env)
        assert r.returncode == 0, r.stderr
        out[game] = (Server(tmp / game / "model.td2048", "--threads", 1, "--depth", 1, "--max-depth", 2), tmp)
    yield out
    for server, _ in out.values():
        assert server.stop() == 0


@pytest.mark.parametrize("game", ["2048", "2584"])
def test_a_served_game_to_its_end_passes_the_judge(servers, game, cli_env):
    server, tmp = servers[game]
    state = server.ok("POST", "/api/games", {"seed": 3})
    legal = state["legal"]
    for _ in range(5000):
        result = server.ok("POST", f"/api/games/{state['id']}/moves", {"engine": True})
        assert result["move"] in legal and bool(result["legal"]) != result["over"]  # the moves it allowed
        legal = result["legal"]
        if result["over"]:
            break
    assert result["over"] and result["legal"] == []
    status, answer = server.post(f"/api/games/{state['id']}/moves", {"move": "up"})
    assert_refused(answer, status, 409, "is over")
    status, record = server.get(f"/api/games/{state['id']}/record")
    assert status == 200
    (tmp / f"{game}-served.txt").write_text(record)
    r = td2048("judge", tmp / f"{game}-served.txt", "--game", game, env=cli_env)
    assert r.returncode == 0, r.stdout + r.stderr
    data, summary = replay_text(record)
    assert (summary.game, summary.games) == (game, 1)
    assert data["games"][0]["score"] == result["score"]
    assert server.ok("POST", "/api/replay", {"records": record}) == data
    assert tile_value(game, max(int(c, 32) for c in data["games"][0]["boards"][-16:])) == result["max_tile"]


def test_2584_boards_hold_2584_tiles(servers, cli_env):
    server, tmp = servers["2584"]
    board = [1, 2, 3, 5, 8, 13, 21, 0, 0, 0, 0, 0, 0, 0, 1, 1]
    for depth in (1, 2):
        r = td2048("analyze", tmp / "2584" / "model.td2048", "--board", ",".join(map(str, board)), "--depth", depth,
                   "--json", env=cli_env)
        assert r.returncode == 0, r.stderr
        assert server.ok("POST", "/api/analyze", {"board": board, "depth": depth}) == json.loads(r.stdout)
    status, answer = server.post("/api/move", {"board": board[:15] + [4]})
    assert_refused(answer, status, 422, "4 is not a tile of 2584")
    info = server.ok("GET", "/api/model")
    assert info["game"] == "2584" and info["network"]["cell_bits"] == 5 and info["tiles"][:6] == [0, 1, 2, 3, 5, 8]
    game = server.ok("POST", "/api/games", {"seed": 1})
    assert set(game["board"]) <= {0, 1, 2}
