"""td2048 serve --solution: the web app and the API on a solved board (2x3), with a model and without. The exact
values the API answers are Solution.move_values', number for number; each move of a game says what it lost
against perfect play; without a model the engine is perfect play; a solution of another board or game, or a
truncated or altered file, is refused in one line before the server starts; a board the start never reaches is
analysed as not reachable (200), not refused. In Chromium: the hint panel shows the perfect move and every move's
exact value, a line after each move says what it lost, a loss reads the same wherever it shows, and building a
position in the Analyse tab asks nothing the server refuses and shows no error on the way."""

from __future__ import annotations

import math
import re

import pytest
from commands import assert_one_line_error, td2048
from naive import move as naive_move
from serving import Server, assert_refused

import td2048 as api
from td2048.games.tiles import tile_value
from td2048.models import shipped_model
from td2048.search_settings import parse_search
from td2048.solve import load_solution
from td2048.solve.policy import RTOL

DIRECTIONS = ["up", "right", "down", "left"]
ROWS, COLS = 2, 3


@pytest.fixture(scope="module")
def files(tmp_path_factory, cli_env):
    """A 2x3 solution (td2048 solve) and a small 2x3 model (td2048 train), made by the CLI."""
    tmp = tmp_path_factory.mktemp("serve-solution")
    r = td2048("solve", "--board", "2x3", "--out", tmp / "2x3.solution", env=cli_env)
    assert r.returncode == 0, r.stderr
    r = td2048("train", "--board", "2x3", "--network", "2x3", "--episodes", 1500, "--seed", 1, "--out", tmp / "run",
               "--quiet", env=cli_env)
    assert r.returncode == 0, r.stderr
    return tmp


@pytest.fixture(scope="module")
def solution(files):
    return load_solution(files / "2x3.solution")


@pytest.fixture(scope="module")
def perfect(files):
    """A server without a model: perfect play from the solution."""
    server = Server("--solution", files / "2x3.solution", "--threads", 1)
    yield server
    assert server.stop() == 0


@pytest.fixture(scope="module")
def modelled(files):
    """A server of the 2x3 model with the solution beside it."""
    server = Server(files / "run" / "model.td2048", "--solution", files / "2x3.solution", "--threads", 1, "--depth", 1,
                    "--max-depth", 2)
    yield server
    assert server.stop() == 0


def codes(tiles):
    return [tile.bit_length() - 1 if tile else 0 for tile in tiles]


def grid(cells):
    return [cells[r * COLS:(r + 1) * COLS] for r in range(ROWS)]


def exact_of(solution, tiles):
    """What the API must answer as ``exact`` for a board: from Solution.move_values."""
    q = solution.move_values(codes(tiles))
    moves = {name: None if math.isnan(v) else float(v) for name, v in zip(DIRECTIONS, q, strict=True)}
    best = max((name for name in DIRECTIONS if moves[name] is not None), key=lambda name: moves[name])
    return {"moves": moves, "best": best, "value": moves[best]}


def amount(loss):
    """A loss as the page shows it: 0 for nothing lost, else two decimals, "< 0.01" for one that they would show
    as 0.00."""
    return "0" if loss == 0 else "< 0.01" if loss < 0.005 else f"{loss:.2f}"


def loss_of(exact, move):
    best, played = exact["value"], exact["moves"][move]
    return 0.0 if played >= best - RTOL * abs(best) else best - played


def test_the_cli_refuses_another_board_or_game_and_a_damaged_file(files, tmp_path, cli_env):
    model, solution = files / "run" / "model.td2048", files / "2x3.solution"
    r = td2048("solve", "--board", "2x2", "--game", "2584", "--out", tmp_path / "2x2-2584.solution", env=cli_env)
    assert r.returncode == 0, r.stderr
    r = td2048("train", "--board", "2x2", "--network", "2x2", "--episodes", 100, "--seed", 1, "--out", tmp_path / "m22",
               "--quiet", env=cli_env)
    assert r.returncode == 0, r.stderr
    data = solution.read_bytes()
    (tmp_path / "cut.solution").write_bytes(data[:len(data) // 2])
    altered = bytearray(data)
    altered[-100] ^= 1
    (tmp_path / "altered.solution").write_bytes(bytes(altered))
    before = sorted(p.name for p in tmp_path.iterdir())
    cases = [
        ((model, "--solution", tmp_path / "2x2-2584.solution"), ("2x2-2584.solution solves 2584 on 2x2",
                                                                 "the model plays 2048 on 2x3")),
        ((tmp_path / "m22" / "model.td2048", "--solution", tmp_path / "2x2-2584.solution"),
         ("solves 2584 on 2x2", "the model plays 2048 on 2x2")),
        ((shipped_model(), "--solution", solution), ("solves 2048 on 2x3", "the model plays 2048 on 4x4")),
        (("--solution", tmp_path / "cut.solution"), ("cut.solution is truncated or altered",)),
        ((model, "--solution", tmp_path / "altered.solution"), ("altered.solution is altered or damaged", "checksum")),
        (("--solution", tmp_path / "altered.solution"), ("checksum",)),
        (("--solution", model), ("is not a td2048 solution file",)),
        (("--solution", tmp_path / "none.solution"), ("cannot read", "none.solution")),
        (("--solution", solution, "--depth", 2), ("without a MODEL the engine plays perfectly",)),
    ]
    for args, fragments in cases:
        assert_one_line_error(td2048("serve", *args, "--port", 0, env=cli_env), *fragments)
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # nothing written


def test_without_a_model_the_engine_is_perfect_play(perfect, solution):
    assert "perfect play from 2x3.solution" in perfect.banner
    info = perfect.ok("GET", "/api/model")
    reach = info["solution"]["reach"]  # probabilities within [0, 1]: a sure tile's is 1.0, not 1.0000000000000002
    assert all(0 <= p <= 1 for p in reach.values()) and reach["2"] == reach["4"] == 1.0
    assert (info["file"], info["network"], info["depth"], info["board"], info["game"]) == (None, None, None, "2x3",
                                                                                           "2048")
    assert info["solution"]["file"] == "2x3.solution" and info["solution"]["positions"] == solution.positions
    assert info["solution"]["expected_score"] == solution.expected_score
    assert info["tiles"] == [tile_value("2048", c) for c in range(solution.aims)]
    game = perfect.ok("POST", "/api/games", {"seed": 4})
    state, lost, played = game, 0.0, 0
    for k in range(40):
        if state["over"]:
            break
        exact = exact_of(solution, state["board"])
        analysis = perfect.ok("POST", "/api/analyze", {"board": state["board"]})
        assert analysis == {"board": state["board"], "depth": None, "moves": exact["moves"], "best": exact["best"],
                            "reachable": True, "exact": exact}
        assert perfect.ok("POST", "/api/move", {"board": state["board"]}) == {"move": exact["best"],
                                                                               "value": exact["value"]}
        if k % 3:  # the engine: the perfect move, which loses nothing
            result = perfect.ok("POST", f"/api/games/{game['id']}/moves", {"engine": True})
            assert result["move"] == exact["best"] and result["values"] == exact["moves"] and result["depth"] is None
            assert result["loss"] == 0
        else:  # the player, every third move: the worst legal move
            worst = min(state["legal"], key=lambda name: exact["moves"][name])
            result = perfect.ok("POST", f"/api/games/{game['id']}/moves", {"move": worst})
            assert result["move"] == worst and result["loss"] == loss_of(exact, worst)
            assert "values" not in result
        assert result["exact"] == exact and result["loss"] >= 0
        lost += result["loss"]
        assert result["lost"] == pytest.approx(lost, rel=1e-12, abs=1e-12)
        state, played = result, played + 1
    assert played >= 10 and lost > 0
    undone = perfect.ok("POST", f"/api/games/{game['id']}/undo")
    assert undone["lost"] == pytest.approx(lost - state["loss"], rel=1e-12, abs=1e-12)
    assert perfect.ok("GET", f"/api/games/{game['id']}")["lost"] == undone["lost"]


def test_the_seed_deals_the_same_game_with_a_model_or_without(perfect, modelled):
    for seed in (0, 7, 2**40):
        assert perfect.ok("POST", "/api/games", {"seed": seed})["board"] == \
            modelled.ok("POST", "/api/games", {"seed": seed})["board"]


def test_without_a_model_bad_requests_get_one_line_4xx(perfect):
    game = perfect.ok("POST", "/api/games", {"seed": 1})["id"]
    cases = [
        ("/api/analyze", {"board": [2, 2, 0, 0, 0, 0], "depth": 2}, "no search depth"),
        ("/api/move", {"board": [2, 2, 0, 0, 0, 0], "depth": 1}, "no search depth"),
        (f"/api/games/{game}/moves", {"engine": True, "depth": 1}, "no search depth"),
        ("/api/move", {"board": [2, 0, 0, 0, 0, 0]}, "holds no value of this board"),  # one tile: never dealt
        ("/api/move", {"board": [65536, 2, 0, 0, 0, 2]}, "holds no value of this board"),  # past the solution's tiles
        ("/api/analyze", {"board": [2, 0, 0, 0]}, "this server plays on the 2x3 board, 6 tile values"),
        ("/api/analyze", {"board": [2, 3, 0, 0, 0, 0]}, "3 is not a tile"),
    ]
    for path, body, fragment in cases:
        status, answer = perfect.post(path, body)
        assert_refused(answer, status, 422, fragment)
    assert perfect.process.poll() is None


def test_a_board_the_start_never_reaches_is_analysed_as_not_reachable(perfect, modelled):
    """Not an error: a board set by hand passes through such boards on the way to a position (an empty board, a
    single tile, a tile past the largest the start reaches). Without a model there is no value of it at all."""
    for tiles in ([0] * 6, [2, 0, 0, 0, 0, 0], [256, 2, 0, 0, 0, 2], [0, 0, 0, 0, 0, 4]):
        assert perfect.ok("POST", "/api/analyze", {"board": tiles}) == {
            "board": tiles, "depth": None, "moves": None, "best": None, "reachable": False, "exact": None}
    for tiles in ([2, 0, 0, 0, 0, 0], [256, 2, 0, 0, 0, 2]):
        analysis = modelled.ok("POST", "/api/analyze", {"board": tiles, "depth": 1})
        assert analysis["reachable"] is False and analysis["exact"] is None and analysis["best"] is not None


def test_with_a_model_the_values_of_both_side_by_side(modelled, solution, files):
    assert "exact values from 2x3.solution" in modelled.banner
    info = modelled.ok("GET", "/api/model")
    assert info["network"]["name"] == "2x3" and info["solution"]["file"] == "2x3.solution"
    agents = {d: api.Agent(api.load(files / "run" / "model.td2048"), parse_search(d, 0, game="2048")) for d in (1, 2)}
    game = modelled.ok("POST", "/api/games", {"seed": 9})
    state, lost = game, 0.0
    for k in range(30):
        if state["over"]:
            break
        depth = 1 + k % 2
        exact = exact_of(solution, state["board"])
        analysis = modelled.ok("POST", "/api/analyze", {"board": state["board"], "depth": depth})
        model_values = agents[depth].analyze(api.Board.from_tiles(grid(state["board"])))
        assert analysis["moves"] == model_values and analysis["depth"] == depth and analysis["exact"] == exact
        assert analysis["reachable"] is True
        result = modelled.ok("POST", f"/api/games/{game['id']}/moves", {"engine": True, "depth": depth})
        assert result["move"] == analysis["best"] and result["values"] == model_values  # the model's policy
        assert result["exact"] == exact and result["loss"] == loss_of(exact, result["move"])
        lost += result["loss"]
        assert result["lost"] == pytest.approx(lost, rel=1e-12, abs=1e-12)
        state = result
    # a board the start never reaches: the model's values, and no exact ones
    analysis = modelled.ok("POST", "/api/analyze", {"board": [2, 0, 0, 0, 0, 0], "depth": 1})
    assert analysis["exact"] is None and analysis["reachable"] is False and analysis["moves"]["right"] is not None


def test_the_schema_fuzzer_finds_no_server_error_without_a_model(perfect):
    schemathesis = pytest.importorskip("schemathesis")
    from hypothesis import HealthCheck, given, settings
    from hypothesis.errors import Unsatisfiable
    from schemathesis import GenerationMode
    from schemathesis.specs.openapi.checks import positive_data_acceptance

    schema = schemathesis.openapi.from_url(perfect.url + "/openapi.json")
    game = perfect.ok("POST", "/api/games", {"seed": 1})["id"]
    statuses = {}
    for op in [result.ok() for result in schema.get_all_operations()]:
        if op.path == "/api/replay":  # the same as with a model (test_serve_fuzz.py)
            continue
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
            try:
                strategy = op.as_strategy(generation_mode=mode,
                                          path_parameters={"game_id": game} if "{game_id}" in op.path else None)
            except Exception:  # noqa: BLE001 - no negative data for an operation without inputs
                continue

            @given(case=strategy)
            @settings(max_examples=15, deadline=None, derandomize=True, database=None,
                      suppress_health_check=list(HealthCheck))
            def call(case):
                # boards the solution does not hold and moves the game refuses get a 4xx though they fit the schema
                response = case.call_and_validate(excluded_checks=[positive_data_acceptance])
                statuses[response.status_code] = statuses.get(response.status_code, 0) + 1
                assert response.status_code < 500

            try:
                call()
            except Unsatisfiable:
                assert mode == GenerationMode.NEGATIVE, op.label
    assert sum(statuses.values()) >= 80 and not any(code >= 500 for code in statuses), statuses
    assert perfect.process.poll() is None


# ---- the web app ---------------------------------------------------------------------------------------------
@pytest.fixture(params=["perfect", "modelled"])
def page(request, browser):
    server = request.getfixturevalue(request.param)
    page = browser.new_page(viewport={"width": 900, "height": 700}, bypass_csp=True)
    errors = []
    page.on("pageerror", lambda e: errors.append(e))
    page.goto(server.url + "/")
    page.wait_for_function("document.getElementById('play-board').dataset.gameId")
    yield page, server, request.param == "modelled"
    assert errors == []
    page.close()


def shown(page):
    return [tile_value("2048", int(c)) for c in
            page.eval_on_selector_all("#play-board .cell", "cs => cs.map(c => Number(c.dataset.code))")]


def test_the_hint_shows_the_perfect_move_and_every_exact_value(page, solution):
    page, server, with_model = page
    assert page.is_visible("#depth") == with_model
    page.keyboard.press("h")
    page.wait_for_function("!document.getElementById('hint').hidden")
    board = shown(page)
    exact = exact_of(solution, board)
    assert page.text_content("#hint-perfect").split()[-1] == exact["best"]
    assert f"expected score {exact['value']:.2f}" in page.text_content("#hint-optimum")
    for name, q in exact["moves"].items():
        row = f"#hint-values tr[data-move={name}]"
        if q is None:
            assert page.get_attribute(row, "data-exact") is None and "illegal" in page.get_attribute(row, "class")
            continue
        assert float(page.get_attribute(row, "data-exact")) == q
        assert float(page.get_attribute(row, "data-loses")) == loss_of(exact, name)
        assert ("perfect" in page.get_attribute(row, "class").split()) == (loss_of(exact, name) == 0)
        loses = page.text_content(f"{row} td:nth-child(3)")
        assert loses == ("0 (perfect)" if loss_of(exact, name) == 0 else amount(loss_of(exact, name)))
    if with_model:  # the model's values beside, at the depth chosen
        expected = server.ok("POST", "/api/analyze", {"board": board, "depth": int(page.input_value("#depth"))})
        assert page.text_content("#hint-best").split()[-1] == expected["best"]
        for name, value in expected["moves"].items():
            if value is not None:
                assert float(page.get_attribute(f"#hint-values tr[data-move={name}]", "data-value")) == value
        assert page.eval_on_selector_all("#hint-values th", "hs => hs.map(h => h.textContent)") == [
            "move", "exact value", "loses", "model"]
    else:
        assert page.is_hidden("#hint-best")
        assert page.eval_on_selector_all("#hint-values th", "hs => hs.map(h => h.textContent)") == [
            "move", "exact value", "loses"]


def test_each_move_says_what_it_lost(page, solution):
    page, server, _ = page
    lost_shown = False
    for played in range(1, 13):
        board = shown(page)
        exact = exact_of(solution, board)
        legal = [name for name in DIRECTIONS if exact["moves"][name] is not None]
        assert legal == [d for k, d in enumerate(DIRECTIONS) if naive_move(grid(codes(board)), k)[0] != grid(
            codes(board))]
        worst = min(legal, key=lambda name: exact["moves"][name])
        move = worst if played % 3 else exact["best"]  # the worst legal move, and every third the perfect one
        page.keyboard.press({"up": "ArrowUp", "right": "ArrowRight", "down": "ArrowDown", "left": "ArrowLeft"}[move])
        page.wait_for_function(f"document.getElementById('play-board').dataset.moves == {played}")
        line = page.text_content("#move-loss")
        loss = loss_of(exact, move)
        if loss == 0:
            assert line.startswith("Perfect move.")
        else:
            assert line.startswith(f"This move lost {amount(loss)} expected score (the perfect move was ")
            assert line.split("(the perfect move was ")[1].split(")")[0].split()[-1] == exact["best"]
            lost_shown = True
        assert page.is_hidden("#hint")  # the new board has no hint until asked
        game = server.ok("GET", f"/api/games/{page.get_attribute('#play-board', 'data-game-id')}")
        assert page.text_content("#play-lost") == amount(game["lost"])
        if game["over"]:
            break
    assert lost_shown
    page.keyboard.press("u")  # an undo: no line of a move
    page.wait_for_function(f"document.getElementById('play-board').dataset.moves == {played - 1}")
    assert page.text_content("#move-loss") == ""


def test_the_engine_plays_perfectly_without_a_model(browser, perfect):
    page = browser.new_page(viewport={"width": 900, "height": 700}, bypass_csp=True)
    errors = []
    page.on("pageerror", lambda e: errors.append(e))
    page.goto(perfect.url + "/")
    page.wait_for_function("document.getElementById('play-board').dataset.gameId")
    page.select_option("#engine-speed", "1000")
    page.keyboard.press("e")
    page.wait_for_function("Number(document.getElementById('play-board').dataset.moves) >= 8 || "
                           "document.getElementById('play-status').textContent.startsWith('Game over')")
    page.keyboard.press("e")  # pause
    page.wait_for_function("document.getElementById('play-board').dataset.engine === 'off'")
    page.wait_for_timeout(300)  # a move on its way when paused still lands
    assert re.fullmatch(r"The engine played . (up|right|down|left) \(perfect play: expected score [\d.]+\)\.",
                        page.text_content("#last-move"))
    assert page.text_content("#move-loss") == "Perfect move." and page.text_content("#play-lost") == "0"
    page.close()
    assert errors == []


def test_a_loss_too_small_for_two_decimals_is_not_shown_as_zero(browser, perfect):
    """Moves whose exact values differ in the fourth decimal (all 2628.05 to two): the best's and those equal to
    it within the solution's precision (1e-9 relative) are perfect, another's loss is "< 0.01", not "0.00"; a
    move that lost so little says so, and so does the game's total."""
    page = browser.new_page(viewport={"width": 900, "height": 700}, bypass_csp=True)
    best = 2628.0512
    moves = {"up": best, "right": best - 4e-4, "down": best * (1 - 1e-12), "left": None}
    exact = {"moves": moves, "best": "up", "value": best}
    page.route("**/api/analyze", lambda route: route.fulfill(json={"board": [], "depth": None, "moves": moves,
                                                                    "best": "up", "exact": exact}))

    def lost_little(route):  # the server's answer to a move, as if the move had lost 4e-4
        answer = route.fetch().json()
        answer.update(loss=4e-4, lost=4e-4)
        route.fulfill(json=answer)

    page.route("**/api/games/*/moves", lost_little)
    page.goto(perfect.url + "/")
    page.wait_for_function("document.getElementById('play-board').dataset.gameId")
    page.keyboard.press("h")
    page.wait_for_function("!document.getElementById('hint').hidden")
    shown = {name: page.eval_on_selector(f"#hint-values tr[data-move={name}]", "r => [...r.cells].map(c => "
                                         "c.textContent)") for name in DIRECTIONS}
    assert shown == {"up": ["\u2191 up", "2628.05", "0 (perfect)"], "right": ["\u2192 right", "2628.05", "< 0.01"],
                     "down": ["\u2193 down", "2628.05", "0 (perfect)"], "left": ["\u2190 left", "illegal", ""]}
    perfect_rows = page.eval_on_selector_all("#hint-values tr.perfect", "rs => rs.map(r => r.dataset.move)")
    assert perfect_rows == ["up", "down"]
    assert page.get_attribute("#hint-values tr[data-move=right] td:nth-child(3)", "title") == \
        "0.000400 expected score"
    legal = perfect.ok("GET", f"/api/games/{page.get_attribute('#play-board', 'data-game-id')}")["legal"][0]
    page.keyboard.press({"up": "ArrowUp", "right": "ArrowRight", "down": "ArrowDown", "left": "ArrowLeft"}[legal])
    page.wait_for_function("document.getElementById('play-board').dataset.moves == 1")
    assert page.text_content("#move-loss").startswith("This move lost < 0.01 expected score (the perfect move was ")
    assert page.text_content("#move-loss").endswith("This game has lost < 0.01 so far.")
    assert page.text_content("#play-lost") == "< 0.01"
    page.close()


def watched_page(browser, server, size=(900, 700)):
    """A page of the server at a size, and what went wrong in it: the script's errors, the console's (Chromium
    says there when a request answers an error status) and every answer of 400 and up."""
    page = browser.new_page(viewport={"width": size[0], "height": size[1]}, bypass_csp=True)
    problems = []
    page.on("pageerror", lambda e: problems.append(e))
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("response", lambda r: problems.append((r.status, r.url)) if r.status >= 400 else None)
    return page, problems


@pytest.mark.parametrize("size", ["desktop", "phone"])
@pytest.mark.parametrize("name", ["perfect", "modelled"])
def test_the_layout_on_a_solved_board(request, browser, name, size, tmp_path):
    """As on 4x4 (test_serve_browser): the long title of a model with a solution keeps the tabs beside "td2048";
    the 2x3 board centred on a phone, the Analyse tab's panel where the Play tab's is (a palette wider than the
    three columns' board would push it right); the palette holds the tiles a 2x3 board can hold, up to 128; the
    Replay tab says what the server plays, a model or perfect play."""
    from test_serve_browser import SIZES, check_layout

    server = request.getfixturevalue(name)
    page, problems = watched_page(browser, server, SIZES[size])
    page.goto(server.url + "/")
    page.wait_for_function("document.getElementById('play-board').dataset.gameId")
    if name == "modelled":
        assert page.text_content("#model") == ("model.td2048: network 2x3 (two 3-cell tuples), 2048 on the 2x3 "
                                               "board, afterstate values; exact values from 2x3.solution")
    else:
        assert page.text_content("#model") == "2x3.solution: perfect play, 2048 on the 2x3 board"
    check_layout(page, size, f"2x3-{name}", tmp_path)
    assert page.eval_on_selector_all("#palette button", "bs => bs.map(b => Number(b.dataset.tile))") == [
        0, 2, 4, 8, 16, 32, 64, 128]
    page.click("#tab-replay")
    words = page.text_content("#replay-board")
    assert words.startswith("This model plays the 2x3 board; " if name == "modelled"
                            else "This server plays perfectly on the 2x3 board; "), words
    assert "record files hold 4x4 games" in words and page.is_visible("#replay-board")
    page.close()
    assert problems == []


@pytest.mark.parametrize("size", ["desktop", "phone"])
@pytest.mark.parametrize("name", ["perfect", "modelled"])
def test_building_a_position_is_no_error(request, browser, solution, name, size):
    """Tile by tile, a position passes through boards the start never reaches (a single tile): the page says
    quietly that such a board is not reachable, with no request refused and nothing in red, and shows the exact
    values once it is; clear empties the board and asks nothing."""
    from test_serve_browser import SIZES

    server = request.getfixturevalue(name)
    page, problems = watched_page(browser, server, SIZES[size])
    page.goto(server.url + "/")
    page.wait_for_function("document.getElementById('play-board').dataset.gameId")
    page.click("#tab-analyse")
    steps = [(0, 2), (4, 2), (5, 4), (4, 0), (5, 0), (3, 4)]  # (cell, tile): 0 empties the cell (a right-click)
    board, seen = [0] * ROWS * COLS, []
    for asked, (cell, tile) in enumerate(steps, 1):
        if tile:
            page.click(f"#palette button[data-tile='{tile}']")
        page.click(f"#analysis-board .cell[data-cell='{cell}']", button="left" if tile else "right")
        board[cell] = tile
        try:
            solution.move_values(codes(board))
            reachable = True
        except api.TD2048Error:  # the solution holds no value of a board the start never reaches
            reachable = False
        seen.append(reachable)
        page.wait_for_function(f"document.getElementById('analysis-board').dataset.analysed == {asked}")
        assert page.get_attribute("#analysis-board", "data-reachable") == str(reachable).lower(), board
        assert page.text_content("#analysis-status") == ""
        assert "error" not in page.get_attribute("#analysis-status", "class").split()
        rows = "#analysis-values tr[data-move]"
        if not reachable:
            assert page.text_content("#analysis-perfect") == "\u2014"
            assert page.text_content("#analysis-optimum").startswith("(not reachable: ")
            assert page.is_visible("#analysis-optimum")
            # no values without a model; the model's values, with no exact ones, beside a model
            assert page.eval_on_selector_all(rows, "rs => rs.length") == (4 if name == "modelled" else 0)
            assert page.eval_on_selector_all("#analysis-values tr[data-exact]", "rs => rs.length") == 0
            continue
        exact = exact_of(solution, board)
        assert page.text_content("#analysis-perfect").split()[-1] == exact["best"]
        assert f"expected score {exact['value']:.2f}" in page.text_content("#analysis-optimum")
        for move, q in exact["moves"].items():
            shown = page.get_attribute(f"#analysis-values tr[data-move={move}]", "data-exact")
            assert (None if shown is None else float(shown)) == q
    assert seen == [False, True, True, True, False, True]  # the start's two tiles reached, and left again
    page.click("#analysis-clear")  # the empty board: nothing to ask
    page.wait_for_function(f"document.getElementById('analysis-board').dataset.analysed == {len(steps) + 1}")
    assert page.eval_on_selector_all("#analysis-values tr", "rs => rs.length") == 0
    assert page.text_content("#analysis-perfect") == "\u2014" and page.text_content("#analysis-optimum") == ""
    assert page.text_content("#analysis-status") == ""
    page.close()
    assert problems == []


def test_a_loss_reads_the_same_while_the_game_loads_and_after(browser, perfect):
    """Nothing lost is "0" in the panel's total, while the first game is on its way and once it is there, as
    beside a perfect move in the table ("0 (perfect)")."""
    page, problems = watched_page(browser, perfect)
    held = []
    page.route("**/api/games", lambda route: held.append(route))
    page.goto(perfect.url + "/")
    for _ in range(100):
        if held:
            break
        page.wait_for_timeout(50)
    assert held and page.get_attribute("#play-board", "aria-busy") == "true"
    assert page.is_visible("#play-lost") and page.text_content("#play-lost") == "0"
    held[0].continue_()
    page.wait_for_function("document.getElementById('play-board').dataset.gameId")
    assert page.text_content("#play-lost") == "0"
    page.keyboard.press("h")
    page.wait_for_function("!document.getElementById('hint').hidden")
    perfect_moves = page.eval_on_selector_all("#hint-values tr.perfect td:nth-child(3)", "cs => cs.map(c => "
                                              "c.textContent)")
    assert perfect_moves and set(perfect_moves) == {"0 (perfect)"}
    page.close()
    assert problems == []
