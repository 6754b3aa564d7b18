"""td2048 replay: recorded games of both games as a self-contained page, checked in a real browser
against a plain-Python replay of the record (tests/naive.py's rules, not the page's data)."""

import re

import pytest
from commands import assert_one_line_error, td2048
from naive import move
from test_wide_training import FIB_CLAMP, FIB_NETWORK

from td2048.errors import TD2048Error
from td2048.games.tiles import tile_value
from td2048.io.replay_html import write_replay_html
from td2048.judge import SLIDE, parse_records


@pytest.fixture(scope="module")
def records(tmp_path_factory, cli_env):
    """Three recorded games of each game, from small models trained and evaluated by the CLI."""
    tmp = tmp_path_factory.mktemp("replay")
    out = {}
    # 2584 recorded at depth 2: each decision a timed search, from a game's empty board on 5-bit cells
    # (the 2584 network of the other 2584 tests: its kernels compile once for the suite)
    for game, network, episodes, depth in (("2048", ["2x4"], 200, 1), ("2584", [FIB_NETWORK, "--clamp", FIB_CLAMP],
                                                                       100, 2)):
        r = td2048("train", "--game", game, "--network", *network, "--episodes", episodes, "--seed", 1,
                   "--out", tmp / game, "--quiet", env=cli_env)
        assert r.returncode == 0, r.stderr
        r = td2048("eval", tmp / game / "model.td2048", "--games", 3, "--seed", 2, "--depth", depth,
                   "--record", tmp / f"{game}.txt", env=cli_env)
        assert r.returncode == 0, r.stderr
        out[game] = tmp / f"{game}.txt"
    return out


def reference(path, game, episode):
    """[(16 codes, score)] of every board of one game: after the start tiles, then after each move's new tile."""
    parsed = parse_records(path)
    grid, score, boards = [[0] * 4 for _ in range(4)], 0, []
    for i in range(parsed.starts[episode], parsed.starts[episode + 1]):
        if parsed.kinds[i] == SLIDE:
            grid, reward = move(grid, int(parsed.args[i]), 31, game)
            score += reward
            continue
        grid[parsed.args[i] // 4][parsed.args[i] % 4] = int(parsed.codes[i])
        if i > parsed.starts[episode]:
            boards.append(([c for row in grid for c in row], score))
    return boards


@pytest.mark.parametrize("game", ["2048", "2584"])
def test_page_is_self_contained(records, tmp_path, cli_env, game):
    r = td2048("replay", records[game], "--html", tmp_path / "a.html", env=cli_env)
    assert r.returncode == 0, r.stderr
    assert f"3 of 3 games of {game} (detected)" in r.stdout
    page = (tmp_path / "a.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and page.isascii()
    assert not re.search(r"https?:|//[a-z]|\bsrc\s*=|\bhref\s*=|url\(|@import|<link|fetch\(", page, re.IGNORECASE)
    summary = write_replay_html(records[game], tmp_path / "b.html", game=game)
    assert (summary.game, summary.detected, summary.games) == (game, False, 3)
    assert (tmp_path / "b.html").read_text() == page


def shown(page):
    """(codes, tile texts, score, step) as the page shows them."""
    cells = page.eval_on_selector_all("#board .cell", "cs => cs.map(c => [Number(c.dataset.code), c.textContent])")
    return ([c for c, _ in cells], [t for _, t in cells], int(page.text_content("#score")),
            int(page.get_attribute("#board", "data-step")))


@pytest.mark.parametrize("game", ["2048", "2584"])
def test_page_replays_the_record_in_a_browser(records, tmp_path, browser, game):
    out = tmp_path / "replay.html"
    r = td2048("replay", records[game], "--html", out, "--show", 3)
    assert r.returncode == 0, r.stderr
    boards = reference(records[game], game, 1)
    page = browser.new_page(viewport={"width": 800, "height": 560})
    errors = []
    page.on("pageerror", lambda e: errors.append(e))
    page.goto(out.as_uri())
    assert page.get_attribute("#board", "data-game") == "3" and page.input_value("#game") == "2"

    def check(step):
        codes, texts, score, at = shown(page)
        assert at == step
        assert (codes, score) == boards[step]
        assert texts == [str(tile_value(game, c)) if c else "" for c in codes]
        assert page.text_content("#move") == f"{step} / {len(boards) - 1}"

    page.select_option("#game", "1")
    check(0)
    for _ in range(5):
        page.click("#forward")
    check(5)
    page.click("#back")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    check(6)
    page.fill("#slider", "20")
    check(20)
    page.fill("#slider", str(len(boards) - 1))
    check(len(boards) - 1)
    assert page.text_content("#largest") == str(tile_value(game, max(boards[-1][0])))
    assert page.text_content("#last").split()[-1] in ("up", "right", "down", "left")
    page.keyboard.press("Home")
    check(0)
    # 20 moves/s: a few moves to see it play, and seconds before the game's end would stop it by itself
    page.select_option("#speed", "20")
    page.focus("#forward")
    page.keyboard.press(" ")  # space plays even on a focused button
    page.wait_for_function("Number(document.getElementById('board').dataset.step) >= 3")
    page.keyboard.press(" ")
    assert page.text_content("#play") == "play"
    check(shown(page)[3])
    page.screenshot(path=tmp_path / "replay.png")
    assert (tmp_path / "replay.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert errors == []
    page.close()


def test_bad_input_is_one_line(records, tmp_path, cli_env):
    out = tmp_path / "out.html"
    assert_one_line_error(td2048("replay", tmp_path / "none.txt", "--html", out, env=cli_env), "no such file")
    (tmp_path / "cut.txt").write_text(records["2048"].read_text()[:200] + "\n")
    assert_one_line_error(td2048("replay", tmp_path / "cut.txt", "--html", out, env=cli_env),
                          "cut.txt: line 1: truncated")
    lines = records["2048"].read_text().splitlines()
    slides = [m.start() for m in re.finditer("#", lines[1])]
    lines[1] = lines[1][:slides[-1]] + lines[1][slides[-1] + 2:]  # drop the last slide: two placements in a row
    (tmp_path / "illegal.txt").write_text("\n".join(lines) + "\n")
    for path, game, show, message in ((tmp_path / "illegal.txt", "2048", 1, "illegal.txt: line 2, action"),
                                      (tmp_path / "illegal.txt", None, 1, "not a legal record of either game"),
                                      (records["2584"], "2048", 1, "[2048 rules]"),
                                      (records["2048"], None, 4, "--show 4: the page holds games 1 to 3 of 3")):
        with pytest.raises(TD2048Error, match=re.escape(message)):
            write_replay_html(path, out, game, show)
    assert not out.exists()


def test_records_and_their_page_are_4x4(tmp_path, cli_env):
    """The course's record format holds 4x4 games: a 3x3 model's games are refused at the record, in one line."""
    r = td2048("train", "--board", "3x3", "--network", "3x3", "--episodes", 50, "--seed", 1, "--out", tmp_path / "run",
               "--quiet", env=cli_env)
    assert r.returncode == 0, r.stderr
    assert_one_line_error(td2048("eval", tmp_path / "run" / "model.td2048", "--games", 1, "--record",
                                 tmp_path / "games.txt", env=cli_env), "4x4", "3x3")
    assert not (tmp_path / "games.txt").exists()
