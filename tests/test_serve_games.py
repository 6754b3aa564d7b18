"""Served games to their end, on small models of both games: their records pass td2048 judge and replay in
the viewer's data; 2584's tile values in the API; the API's values equal td2048 analyze --json there too. In
the web app (Chromium): a game the engine plays to its end leaves no hint of an earlier board, and the
analysis board offers every tile of the model, Fibonacci's up to what 5-bit cells hold. A 3x3 model: its games
are 3x3 and follow the rules, its values are the Agent's, a board of another size is refused, and the page
draws and plays its board."""

import json

import pytest
from commands import td2048
from naive import move as naive_move
from serving import Server, assert_refused
from test_wide_training import FIB_CLAMP, FIB_NETWORK

import td2048 as api
from td2048.games.tiles import FIBONACCI, tile_value
from td2048.io.replay_html import replay_text
from td2048.search_settings import parse_search

DIRECTIONS = ["up", "right", "down", "left"]


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


# ---- a model of another board: 3x3 -------------------------------------------------------------------------
@pytest.fixture(scope="module")
def square(tmp_path_factory, cli_env):
    """A server on a small 3x3 model (the 3x3 preset, as every 3x3 test: its kernels compile once), and the model."""
    out = tmp_path_factory.mktemp("serve-3x3")
    r = td2048("train", "--board", "3x3", "--network", "3x3", "--episodes", 300, "--seed", 1, "--out", out, "--quiet",
               env=cli_env)
    assert r.returncode == 0, r.stderr
    server = Server(out / "model.td2048", "--threads", 1, "--depth", 1, "--max-depth", 2)
    yield server, out / "model.td2048"
    assert server.stop() == 0


def rows_of(tiles, cols=3):
    return [tiles[i:i + cols] for i in range(0, len(tiles), cols)]


def codes_of(tiles, cols=3):
    return rows_of([tile.bit_length() - 1 if tile else 0 for tile in tiles], cols)


def test_a_3x3_model_serves_3x3_games_by_the_rules(square):
    server, path = square
    assert "network 3x3 (three 3-cell tuples), 2048 on the 3x3 board" in server.banner  # not read as a board
    info = server.ok("GET", "/api/model")
    assert (info["board"], info["rows"], info["cols"], info["network"]["name"]) == ("3x3", 3, 3, "3x3")
    assert info["network"]["label"] == "network 3x3 (three 3-cell tuples)"
    assert info["tiles"] == [0] + [2**k for k in range(1, 11)]  # up to 1024: nine cells hold no larger tile
    game = server.ok("POST", "/api/games", {"seed": 5})
    assert len(game["board"]) == 9 and sorted(game["board"])[:7] == [0] * 7 and min(sorted(game["board"])[7:]) > 0
    agents = {d: api.Agent(api.load(path), parse_search(d, 0, game="2048")) for d in (1, 2)}
    state, played = game, 0
    for k in range(60):
        board = codes_of(state["board"])
        legal = [d for d in range(4) if naive_move(board, d)[0] != board]
        assert state["legal"] == [DIRECTIONS[d] for d in legal] and state["over"] == (not legal)
        if not legal:
            break
        depth = 1 + k % 2
        hint = server.ok("POST", "/api/analyze", {"board": state["board"], "depth": depth})  # the board shown
        assert hint["board"] == state["board"] and hint["depth"] == depth
        assert hint["moves"] == agents[depth].analyze(api.Board.from_tiles(rows_of(state["board"])))
        assert [name for name, v in hint["moves"].items() if v is not None] == state["legal"]
        body = {"engine": True, "depth": depth} if k % 3 == 0 else {"move": DIRECTIONS[legal[k % len(legal)]]}
        result = server.ok("POST", f"/api/games/{game['id']}/moves", body)
        d = DIRECTIONS.index(result["move"])
        if "engine" in body:
            assert result["move"] == hint["best"] and result["values"] == hint["moves"]
        after, reward = naive_move(board, d)
        cell = result["placed"]["cell"]
        assert 0 <= cell < 9 and after[cell // 3][cell % 3] == 0 and result["placed"]["tile"] in (2, 4)
        after[cell // 3][cell % 3] = result["placed"]["tile"].bit_length() - 1
        assert codes_of(result["board"]) == after and result["reward"] == reward
        state, played = result, played + 1
    assert played >= 20
    full = server.ok("GET", f"/api/games/{game['id']}")
    assert len(full["history"]) == played and len(full["placed"]) == played + 2
    assert all(0 <= p["cell"] < 9 for p in full["placed"])
    before = server.ok("POST", f"/api/games/{game['id']}/undo")
    assert before["moves"] == played - 1 and len(before["board"]) == 9
    status, answer = server.get(f"/api/games/{game['id']}/record")
    assert_refused(answer, status, 409, "3x3 board", "4x4 games only")


def test_a_board_of_another_size_is_a_json_4xx(square):
    server, _ = square
    for path in ("/api/analyze", "/api/move"):
        for board in ([0, 2, 4, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2], [2, 4, 0, 0, 0, 0, 0, 2], []):
            status, answer = server.post(path, {"board": board})
            assert_refused(answer, status, 422, "3x3 board", "9 tile values", f"not {len(board)}")
        status, answer = server.post(path, {"board": [[2, 4, 0], [0, 0, 0], [0, 0, 2]]})  # rows: not the API's
        assert 400 <= status < 500 and list(answer) == ["error"]
    assert server.process.poll() is None


def test_the_page_draws_and_plays_a_3x3_board(browser, square):
    server, _ = square
    page = browser.new_page(viewport={"width": 900, "height": 700}, bypass_csp=True)
    errors = []
    page.on("pageerror", lambda e: errors.append(e))
    page.goto(server.url + "/")
    page.wait_for_selector("#play-board[data-game-id][data-moves='0']")
    columns = "e => getComputedStyle(e).gridTemplateColumns.split(' ').length"  # of the board as laid out
    assert page.eval_on_selector_all("#play-board .cell", "cs => cs.map(c => Number(c.dataset.cell))") == [*range(9)]
    assert page.eval_on_selector("#play-board", columns) == 3
    game_id = page.get_attribute("#play-board", "data-game-id")
    shown = page.eval_on_selector_all("#play-board .cell", "cs => cs.map(c => Number(c.dataset.code))")
    assert codes_of(server.ok("GET", f"/api/games/{game_id}")["board"]) == rows_of(shown)
    board = rows_of(shown)
    d = next(d for d in (3, 0, 1, 2) if naive_move(board, d)[0] != board)
    page.keyboard.press(["ArrowUp", "ArrowRight", "ArrowDown", "ArrowLeft"][d])
    page.wait_for_selector("#play-board[data-moves='1']")
    state = server.ok("GET", f"/api/games/{game_id}")
    assert state["history"] == [DIRECTIONS[d]]
    assert rows_of(page.eval_on_selector_all("#play-board .cell", "cs => cs.map(c => Number(c.dataset.code))")) == \
        codes_of(state["board"])
    page.keyboard.press("h")  # a hint of the board shown
    page.wait_for_function("!document.getElementById('hint').hidden")
    best = server.ok("POST", "/api/move", {"board": state["board"], "depth": 1})["move"]
    assert page.text_content("#hint-best").split()[-1] == best
    assert page.is_hidden("#record-link")  # the course's records hold 4x4 games
    page.click("#tab-analyse")  # the analysis board: 3x3 too, its cells set from the palette
    assert page.eval_on_selector_all("#analysis-board .cell", "cs => cs.length") == 9
    assert page.eval_on_selector_all("#palette button", "bs => Number(bs.at(-1).dataset.tile)") == 1024
    assert page.eval_on_selector("#analysis-board", columns) == 3
    page.click("#palette button[data-tile='4']")
    page.click("#analysis-board .cell[data-cell='8']")
    page.wait_for_function("(b => b.dataset.analysed && b.dataset.analysed === b.dataset.asked)"
                           "(document.getElementById('analysis-board'))")
    expected = server.ok("POST", "/api/analyze", {"board": [0] * 8 + [4], "depth": 1})
    assert page.text_content("#analysis-best").split()[-1] == expected["best"]
    page.click("#tab-replay")
    assert "4x4" in page.text_content("#replay-board") and page.is_visible("#replay-board")
    page.close()
    assert errors == []
