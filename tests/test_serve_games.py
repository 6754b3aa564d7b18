"""Served games to their end, on small models of both games: their records pass td2048 judge and replay in
the viewer's data; 2584's tile values in the API; the API's values equal td2048 analyze --json there too. In
the web app (Chromium): a game the engine plays to its end leaves no hint of an earlier board, and the
analysis board offers every tile of the model, Fibonacci's up to what 5-bit cells hold."""

import json

import pytest
from commands import td2048
from serving import Server, assert_refused
from test_wide_training import FIB_CLAMP, FIB_NETWORK

from td2048.games.tiles import FIBONACCI, tile_value
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


@pytest.fixture
def page_of(browser, servers):
    """The web app of a game's server, its first game shown."""
    pages = []

    def open_page(game):
        page = browser.new_page(viewport={"width": 900, "height": 700}, bypass_csp=True)
        errors = []
        page.on("pageerror", lambda e: errors.append(e))
        pages.append((page, errors))
        page.goto(servers[game][0].url + "/")
        page.wait_for_function("document.getElementById('play-board').dataset.gameId")
        return page

    yield open_page
    for page, errors in pages:
        assert errors == []
        page.close()


def test_a_game_the_engine_ends_leaves_no_hint_of_an_earlier_board(page_of):
    page = page_of("2048")
    page.select_option("#depth", "1")
    page.select_option("#engine-speed", "1000")
    page.keyboard.press("h")
    page.wait_for_function("!document.getElementById('hint').hidden")
    page.keyboard.press("e")
    page.wait_for_function("document.getElementById('play-status').textContent.startsWith('Game over')",
                           timeout=120_000)
    assert page.get_attribute("#play-board", "data-engine") == "off"
    # no move is legal on the board shown: a hint of it has none to mark best, so none is shown
    assert page.is_hidden("#hint") and page.text_content("#hint-best") == ""
    assert page.eval_on_selector_all("#hint-values tr", "rs => rs.length") == 0
    page.keyboard.press("h")
    page.wait_for_timeout(300)
    assert page.is_hidden("#hint") and "Game over" in page.text_content("#play-status")


def test_the_analysis_board_offers_every_2584_tile_the_model_holds(page_of, servers):
    server = servers["2584"][0]
    page = page_of("2584")
    tiles = server.ok("GET", "/api/model")["tiles"]
    assert tiles[-1] == int(FIBONACCI[31]) == 2178309  # 5-bit cells: F(32)
    page.click("#tab-analyse")
    assert page.eval_on_selector_all("#palette button", "bs => bs.map(b => Number(b.dataset.tile))") == tiles
    page.select_option("#analysis-depth", "2")  # an analysis of the empty board (refused: no legal move)
    board = [tiles[-1], 2, 1, 0] + [0] * 11 + [1]
    for cell, tile in enumerate(board):
        if tile:
            page.click(f"#palette button[data-tile='{tile}']")
            page.click(f"#analysis-board .cell[data-cell='{cell}']")
    # the answer to the last question (the depth's change and each tile placed ask one each)
    page.wait_for_function("(b => b.dataset.analysed && b.dataset.analysed === b.dataset.asked)"
                           "(document.getElementById('analysis-board'))")
    expected = server.ok("POST", "/api/analyze", {"board": board, "depth": 2})
    assert page.text_content("#analysis-status") == ""
    assert page.text_content("#analysis-best").split()[-1] == expected["best"]
    for name, value in expected["moves"].items():
        if value is not None:
            assert float(page.get_attribute(f"#analysis-values tr[data-move={name}]", "data-value")) == value
