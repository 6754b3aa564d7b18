"""The web app of td2048 serve in Debian's Chromium (Playwright), against a real server on the shipped model:
keyboard play follows the rules (tests/naive.py), the hint is /api/move's move and always the board's shown,
the engine plays until paused, the analysis board shows the API's values for every tile of the model, a record
file replays in the replay page's viewer and a file that is not a record clears it; at a desktop's size and a
phone's, the tabs beside the title, no blank space before the hint, the board centred and as wide as the phone
allows, the Analyse tab's panel where the Play tab's is (screenshots in $TD2048_SCREENSHOTS when set, to look at);
the first game's wait is shown."""

import os
import re
from pathlib import Path

import pytest
from commands import td2048
from naive import move as naive_move
from serving import Server

from td2048.games.tiles import tile_value
from td2048.models import shipped_model

DIRECTIONS = ["up", "right", "down", "left"]


@pytest.fixture(scope="module")
def server():
    s = Server("--threads", 1, "--max-depth", 3)
    yield s
    assert s.stop() == 0


@pytest.fixture
def page(browser, server):
    # Playwright waits on conditions by evaluating text, which the page's Content-Security-Policy forbids:
    # the tests lift it (test_the_page_works_under_its_policy runs under it)
    page = browser.new_page(viewport={"width": 900, "height": 700}, bypass_csp=True)
    errors = []
    page.on("pageerror", lambda e: errors.append(e))
    page.goto(server.url + "/")
    page.wait_for_function("document.getElementById('play-board').dataset.gameId")
    yield page
    assert errors == []
    page.close()


def test_the_page_works_under_its_policy(browser, server):
    page = browser.new_page(viewport={"width": 900, "height": 700})
    errors, requests = [], []
    page.on("pageerror", lambda e: errors.append(e))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("request", lambda r: requests.append(r.url))
    page.goto(server.url + "/")
    page.wait_for_selector("#play-board[data-game-id][data-moves='0']")
    # a legal move of the game's first board (an illegal one does nothing, which leaves nothing to wait for);
    # the board from the API, since the policy forbids evaluating script
    tiles = server.ok("GET", f"/api/games/{page.get_attribute('#play-board', 'data-game-id')}")["board"]
    board = grid([tile.bit_length() - 1 if tile else 0 for tile in tiles])
    legal = next(d for d in range(4) if naive_move(board, d)[0] != board)
    page.keyboard.press(["ArrowUp", "ArrowRight", "ArrowDown", "ArrowLeft"][legal])
    page.wait_for_selector("#play-board:not([data-moves='0'])")
    assert errors == [] and all(url.startswith(server.url + "/") for url in requests), (errors, requests)
    page.close()


def cells(page, board="#play-board"):
    """The codes the page shows, row-major."""
    return page.eval_on_selector_all(f"{board} .cell", "cs => cs.map(c => Number(c.dataset.code))")


def grid(codes):
    return [codes[r:r + 4] for r in range(0, 16, 4)]


def moves_shown(page):
    return int(page.get_attribute("#play-board", "data-moves"))


def assert_hint_of_the_board_shown(page, server, game="2048"):
    """The hint panel is hidden and empty, or its best move is legal on the board shown and is /api/move's
    for that board, value for value. Returns whether it was shown."""
    codes = cells(page)
    if page.is_hidden("#hint"):
        assert page.text_content("#hint-best") == ""
        assert page.eval_on_selector_all("#hint-values tr", "rs => rs.length") == 0
        return False
    best = page.text_content("#hint-best").split()[-1]
    if game == "2048":
        board = grid(codes)
        assert best in [d for k, d in enumerate(DIRECTIONS) if naive_move(board, k)[0] != board], (best, board)
    depth = int(re.search(r"depth (\d+)", page.text_content("#hint-depth")).group(1))
    expected = server.ok("POST", "/api/move", {"board": [tile_value(game, c) for c in codes], "depth": depth})
    assert best == expected["move"]
    assert float(page.get_attribute(f"#hint-values tr[data-move={best}]", "data-value")) == expected["value"]
    assert page.get_attribute("#hint", "data-moves") == page.get_attribute("#play-board", "data-moves")
    return True


def test_keyboard_play_follows_the_rules(page, server):
    game_id = page.get_attribute("#play-board", "data-game-id")
    assert [tile_value("2048", c) for c in cells(page)] == server.ok("GET", f"/api/games/{game_id}")["board"]
    asked = []  # the moves the page sent to the server
    page.on("request", lambda r: asked.append(r.post_data_json["move"]) if r.url.endswith("/moves") else None)
    played = 0
    for key in ["ArrowLeft", "ArrowUp", "d", "s", "ArrowRight", "a", "w", "ArrowDown"] * 2:
        before = grid(cells(page))
        direction = {"ArrowUp": 0, "w": 0, "ArrowRight": 1, "d": 1, "ArrowDown": 2, "s": 2, "ArrowLeft": 3,
                     "a": 3}[key]
        after, reward = naive_move(before, direction)
        page.keyboard.press(key)
        if after == before:  # an illegal move does nothing: the board stays, nothing is sent, no error shown
            assert grid(cells(page)) == before and moves_shown(page) == played
            continue
        played += 1
        page.wait_for_function(f"document.getElementById('play-board').dataset.moves == {played}")
        state = server.ok("GET", f"/api/games/{game_id}")
        assert state["history"][-1] == DIRECTIONS[direction]
        placed = state["placed"][-1]
        assert after[placed["cell"] // 4][placed["cell"] % 4] == 0
        after[placed["cell"] // 4][placed["cell"] % 4] = placed["tile"].bit_length() - 1
        assert grid(cells(page)) == after
        assert int(page.text_content("#play-score")) == state["score"]
        assert state["legal"] == [d for k, d in enumerate(DIRECTIONS) if naive_move(after, k)[0] != after]
    assert played >= 4
    assert asked == state["history"] and page.text_content("#play-status") == ""


def test_hint_is_the_move_of_the_api(page, server):
    for depth in ("1", "2"):
        page.select_option("#depth", depth)
        page.click("#hint-button")
        page.wait_for_function(f"!document.getElementById('hint').hidden && "
                               f"document.getElementById('hint-depth').textContent.includes('depth {depth}')")
        board = [tile_value("2048", c) for c in cells(page)]
        expected = server.ok("POST", "/api/move", {"board": board, "depth": int(depth)})
        assert page.text_content("#hint-best").split()[-1] == expected["move"]
        shown = page.get_attribute(f"#hint-values tr[data-move={expected['move']}]", "data-value")
        assert float(shown) == expected["value"]
        board = grid(cells(page))
        legal = next(d for d in (2, 3, 1, 0) if naive_move(board, d)[0] != board)
        page.keyboard.press(["ArrowUp", "ArrowRight", "ArrowDown", "ArrowLeft"][legal])  # the hint goes with a move
        page.wait_for_function("document.getElementById('hint').hidden")


def test_engine_plays_until_paused_and_can_be_taken_over(page):
    page.select_option("#depth", "1")
    page.select_option("#engine-speed", "1000")
    page.click("#engine")
    page.wait_for_function("Number(document.getElementById('play-board').dataset.moves) >= 15")
    page.click("#engine")  # pause
    page.wait_for_function("document.getElementById('play-board').dataset.engine === 'off'")
    page.wait_for_timeout(300)  # a move on its way when paused still lands
    paused_at = moves_shown(page)
    page.wait_for_timeout(500)
    assert moves_shown(page) == paused_at
    assert page.text_content("#engine") == "engine plays"
    board = grid(cells(page))
    legal = next(d for d in range(4) if naive_move(board, d)[0] != board)
    page.keyboard.press(["ArrowUp", "ArrowRight", "ArrowDown", "ArrowLeft"][legal])  # taken over by the player
    page.wait_for_function(f"document.getElementById('play-board').dataset.moves == {paused_at + 1}")
    page.keyboard.press("e")  # and handed back
    page.wait_for_function(f"Number(document.getElementById('play-board').dataset.moves) >= {paused_at + 6}")
    page.keyboard.press("e")


def test_the_hint_is_always_of_the_board_shown(page, server):
    page.select_option("#depth", "1")
    page.select_option("#engine-speed", "1000")
    page.keyboard.press("h")
    page.wait_for_function("!document.getElementById('hint').hidden")
    assert assert_hint_of_the_board_shown(page, server)
    page.click("#engine")  # the engine plays: each of its moves makes a new board, and the hint goes
    page.wait_for_function("Number(document.getElementById('play-board').dataset.moves) >= 10")
    page.click("#engine")  # pause
    page.wait_for_function("document.getElementById('play-board').dataset.engine === 'off'")
    page.wait_for_timeout(300)  # a move on its way when paused still lands
    assert not assert_hint_of_the_board_shown(page, server)  # the engine's values were of the board before its move
    assert re.fullmatch(r"The engine played . (up|right|down|left) \(value [\d.]+ at depth 1\)\.",
                        page.text_content("#last-move"))
    page.keyboard.press("h")  # asked now: the board's own
    page.wait_for_function("!document.getElementById('hint').hidden")
    assert assert_hint_of_the_board_shown(page, server)
    moves = moves_shown(page)
    page.keyboard.press("u")  # an undo: a new board, no hint
    page.wait_for_function(f"document.getElementById('play-board').dataset.moves == {moves - 1}")
    assert not assert_hint_of_the_board_shown(page, server) and page.text_content("#last-move") == ""
    page.keyboard.press("h")
    page.wait_for_function("!document.getElementById('hint').hidden")
    assert assert_hint_of_the_board_shown(page, server)
    page.keyboard.press("n")  # a new game: no hint
    page.wait_for_function("document.getElementById('play-board').dataset.moves == 0")
    assert not assert_hint_of_the_board_shown(page, server)


def test_analysis_board_shows_the_values_of_the_api(page, server):
    page.click("#tab-analyse")
    tiles = {0: 2, 1: 4, 2: 8, 5: 2, 15: 16}
    for cell, tile in tiles.items():
        page.click(f"#palette button[data-tile='{tile}']")
        page.click(f"#analysis-board .cell[data-cell='{cell}']")
    page.select_option("#analysis-depth", "3")
    board = [tiles.get(i, 0) for i in range(16)]
    assert [tile_value("2048", c) for c in cells(page, "#analysis-board")] == board
    expected = server.ok("POST", "/api/analyze", {"board": board, "depth": 3})
    page.wait_for_function("document.getElementById('analysis-board').dataset.analysed == "
                           f"{len(tiles) + 1}")
    for name, value in expected["moves"].items():
        row = f"#analysis-values tr[data-move={name}]"
        if value is None:
            assert page.get_attribute(row, "class") == "illegal"
        else:
            assert float(page.get_attribute(row, "data-value")) == value
    assert page.text_content("#analysis-best").split()[-1] == expected["best"]
    page.click("#analysis-board .cell[data-cell='0']", button="right")  # empties it
    page.wait_for_function("document.getElementById('analysis-board').dataset.analysed == "
                           f"{len(tiles) + 2}")
    assert cells(page, "#analysis-board")[0] == 0


def test_every_tile_of_the_model_is_in_the_palette_and_analysed(page, server):
    tiles = server.ok("GET", "/api/model")["tiles"]
    assert tiles[-1] == 32768  # 4-bit cells: the largest tile they hold
    page.click("#tab-analyse")
    assert page.eval_on_selector_all("#palette button", "bs => bs.map(b => Number(b.dataset.tile))") == tiles
    board = [32768, 16384, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2]
    for cell, tile in enumerate(board):
        if tile:
            page.click(f"#palette button[data-tile='{tile}']")
            page.click(f"#analysis-board .cell[data-cell='{cell}']")
    page.select_option("#analysis-depth", "2")
    page.wait_for_function("document.getElementById('analysis-board').dataset.analysed == 5")
    assert [tile_value("2048", c) for c in cells(page, "#analysis-board")] == board
    expected = server.ok("POST", "/api/analyze", {"board": board, "depth": 2})
    for name, value in expected["moves"].items():
        row = f"#analysis-values tr[data-move={name}]"
        assert page.get_attribute(row, "class") == "illegal" if value is None else (
            float(page.get_attribute(row, "data-value")) == value)
    assert page.text_content("#analysis-best").split()[-1] == expected["best"]
    assert page.text_content("#analysis-status") == ""


@pytest.fixture(scope="module")
def record(tmp_path_factory, cli_env):
    """A record file of two games of the shipped model."""
    record = tmp_path_factory.mktemp("replay") / "games.txt"
    r = td2048("eval", shipped_model(), "--games", 2, "--seed", 5, "--record", record, env=cli_env)
    assert r.returncode == 0, r.stderr
    return record


def test_a_record_file_replays_in_the_viewer(page, record):
    page.click("#tab-replay")
    page.set_input_files("#replay-file", str(record))
    page.wait_for_function("document.getElementById('board').dataset.game == '1'")
    assert re.fullmatch(r"0 / \d+", page.text_content("#move"))
    page.keyboard.press("ArrowRight")
    assert page.get_attribute("#board", "data-step") == "1"
    page.select_option("#game", "1")
    assert page.get_attribute("#board", "data-game") == "2"
    page.click("#tab-play")
    page.keyboard.press("ArrowRight")  # the game's keys again, not the viewer's
    assert page.get_attribute("#board", "data-step") == "0"


def test_a_file_that_is_not_a_record_clears_the_replay(page, record, tmp_path):
    page.click("#tab-replay")
    page.set_input_files("#replay-file", str(record))
    page.wait_for_function("document.getElementById('board').dataset.game == '1'")
    page.click("#play")  # playing when the next file comes
    bad = tmp_path / "notes.txt"
    bad.write_text("these are notes, not games\n")
    page.set_input_files("#replay-file", str(bad))
    page.wait_for_function("document.getElementById('replay-status').classList.contains('error')")
    assert page.text_content("#replay-status").startswith("notes.txt: ")
    assert page.is_hidden("#viewer") and page.eval_on_selector_all("#game option", "os => os.length") == 0
    assert page.text_content("#about") == "" and page.get_attribute("#board", "data-game") is None
    page.wait_for_timeout(300)  # the playback stopped: the board stays empty
    assert cells(page, "#board") == [0] * 16
    page.keyboard.press("ArrowRight")  # the viewer's keys are off while nothing is shown
    assert cells(page, "#board") == [0] * 16
    page.set_input_files("#replay-file", str(record))  # and a record again replays
    page.wait_for_function("document.getElementById('board').dataset.game == '1'")
    assert page.is_visible("#viewer") and page.eval_on_selector_all("#game option", "os => os.length") == 2
    assert not page.get_attribute("#replay-status", "class").endswith("error")


# ---- the layout at a desktop's size and a phone's ----------------------------------------------------------
SIZES = {"desktop": (1280, 800), "phone": (390, 844)}


def box(page, selector):
    return page.eval_on_selector(selector, "e => { const r = e.getBoundingClientRect(); "
                                           "return {left: r.left, right: r.right, top: r.top, bottom: r.bottom}; }")


def check_layout(page, size, name, tmp_path):
    """What the layout must be at ``size`` once a hint is shown: the tabs on the title's line and the model's
    description below both, the hint right after the controls, on a phone the board centred and filling the
    width (cells of 88 px at most); then the analysis panel, which starts where the play panel does (the palette
    below the board no wider than it). Screenshots of both, to look at."""
    width, _ = SIZES[size]
    title, tabs, model = box(page, "h1"), box(page, "nav"), box(page, "#model")
    assert tabs["top"] < title["bottom"] and tabs["bottom"] > title["top"], (title, tabs)  # one line
    assert model["top"] >= max(title["bottom"], tabs["bottom"]) - 1 and page.text_content("#model")
    page.keyboard.press("h")
    page.wait_for_function("!document.getElementById('hint').hidden")
    controls = page.eval_on_selector_all("#panel-play .controls", "cs => cs.map(c => c.getBoundingClientRect()"
                                                                  ".bottom)")
    gap = box(page, "#hint")["top"] - max(controls)
    assert 0 <= gap <= 24, gap  # no empty status lines between them
    board, columns = box(page, "#play-board"), int(page.eval_on_selector("#play-board", "b => b.dataset.cols || 4"))
    cell = box(page, "#play-board .cell")
    assert abs((cell["right"] - cell["left"]) - (cell["bottom"] - cell["top"])) <= 1  # square cells
    if size == "phone":
        assert abs(board["left"] - (width - board["right"])) <= 1, board  # centred
        assert board["right"] - board["left"] >= min(width - 40, columns * 96 + 8) - 1, board  # the width it has
    shots = Path(os.environ.get("TD2048_SCREENSHOTS") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(shots / f"{name}-{size}-play.png"), full_page=True)
    play_panel = box(page, "#panel-play .panel")
    page.click("#tab-analyse")
    analyse_panel = box(page, "#panel-analyse .panel")
    assert abs(analyse_panel["left"] - play_panel["left"]) <= 2, (play_panel, analyse_panel)
    help_text = page.text_content("#panel-analyse .help")
    assert "tap" in help_text and "empty" in help_text  # how a touch screen empties a cell
    assert box(page, "#palette")["top"] >= box(page, "#analysis-board")["bottom"]
    page.screenshot(path=str(shots / f"{name}-{size}-analyse.png"), full_page=True)


@pytest.mark.parametrize("size", SIZES)
def test_the_layout_at_a_desktops_size_and_a_phones(browser, server, size, tmp_path):
    width, height = SIZES[size]
    page = browser.new_page(viewport={"width": width, "height": height}, bypass_csp=True)
    errors = []
    page.on("pageerror", lambda e: errors.append(e))
    page.goto(server.url + "/")
    page.wait_for_function("document.getElementById('play-board').dataset.gameId")
    assert page.text_content("#model").startswith("4x5-tc.td2048.xz: network 4x5 (four 5-cell tuples), 2048")
    check_layout(page, size, "4x4", tmp_path)
    page.close()
    assert errors == []


def test_the_first_game_shows_that_it_is_on_its_way(browser, server):
    """Until the server deals the first game (held back here), the page says so and the board is dimmed."""
    page = browser.new_page(viewport={"width": 900, "height": 700}, bypass_csp=True)
    held = []
    page.route("**/api/games", lambda route: held.append(route))
    page.goto(server.url + "/")
    page.wait_for_function("document.getElementById('play-board').children.length == 16")
    for _ in range(100):
        if held:
            break
        page.wait_for_timeout(50)
    assert held and page.get_attribute("#play-board", "aria-busy") == "true"
    assert page.is_visible("#play-status") and page.text_content("#play-status") == "Starting a game \u2026"
    assert float(page.eval_on_selector("#play-board", "b => getComputedStyle(b).opacity")) < 1
    held[0].continue_()
    page.wait_for_function("document.getElementById('play-board').dataset.gameId")
    assert page.get_attribute("#play-board", "aria-busy") == "false" and page.text_content("#play-status") == ""
    assert float(page.eval_on_selector("#play-board", "b => getComputedStyle(b).opacity")) == 1
    page.close()
