"""Each small board's recipe: the research page's `## Recipes` block is :mod:`td2048.recipes` spelled out, each
line learns from play alone and runs (at a small scale), and ``td2048 train --board B`` alone trains B's recipe."""

import json
import re
import shlex
from pathlib import Path

import pytest
from commands import td2048

import td2048.cli.train as train_command
from td2048.cli.train import _new_settings
from td2048.errors import TD2048Error
from td2048.recipes import RECIPES, peak_memory, recipe, recipe_command, recipes

PAGE = Path(__file__).resolve().parent.parent / "docs" / "research" / "perfect-play.md"


def recipe_lines() -> list[str]:
    """The command lines of the page's `## Recipes` section's sh block."""
    text = PAGE.read_text()
    section = text[text.index("\n## Recipes\n"):]
    section = section[:section.find("\n## ", 1)] if "\n## " in section[1:] else section
    block = re.search(r"```sh\n(.*?)```", section, re.S).group(1)
    return [line for line in block.split("\n\n") if line.strip() and not line.startswith("#")]


def test_the_page_holds_one_line_per_recipe_as_the_code_has_it():
    expected = [recipe_command(board, game, i, wrap=True)
                for game, board in RECIPES for i in range(len(RECIPES[game, board]))]
    assert [line.strip() for line in recipe_lines()] == expected  # one group of options a line
    assert all(len(line) <= 96 for command in expected for line in command.splitlines())  # no line wraps


@pytest.mark.parametrize("line", recipe_lines(), ids=lambda line: "-".join(shlex.split(line)[3:8:2]))
def test_each_recipe_learns_from_play_alone_and_runs(line, tmp_path):
    words = shlex.split(line.replace("\\\n", " "))
    assert words[:3] == ["td2048", "train", "--board"]
    for forbidden in ("--teacher", "--exact", "--init", "--out"):
        assert forbidden not in words
    # the same recipe at a small scale: fewer episodes, and whole-board tables of fewer codes a cell
    small = {"--episodes": "400", "--block": "200", "--clamp": "5", "--start-over-at": "200"}
    words = [small.get(words[i - 1], w) if i else w for i, w in enumerate(words)]
    words = [w.split(":")[0] + ":400" if i and words[i - 1] == "--pretrain" else w for i, w in enumerate(words)]
    words = [w.split("@")[0] + "@200" if i and words[i - 1].startswith("--start-over-") and "@" in w else w
             for i, w in enumerate(words)]  # a check at its own episode
    run = tmp_path / "run"
    r = td2048(*words[1:], "--seed", 1, "--quiet", "--out", run)
    assert r.returncode == 0, r.stderr
    log = [json.loads(line) for line in (run / "log.jsonl").read_text().splitlines()]
    assert [b["episodes"] for b in log] == [200, 400]


@pytest.mark.parametrize("game, board", [("2048", "2x2"), ("2048", "2x3"), ("2048", "3x2"), ("2048", "2x4"),
                                         ("2048", "4x2"), ("2048", "3x3"), ("2048", "4x3"), ("2048", "3x4"),
                                         ("2584", "2x3")])
def test_a_board_alone_trains_its_recipe(game, board, monkeypatch):
    monkeypatch.setattr(train_command, "available_memory", lambda: 64 << 30)
    given = {"board": board} if game == "2048" else {"board": board, "game": game}
    settings = _new_settings(given)
    for key, value in recipe(board, game).items():
        assert getattr(settings, key) == value, key


def test_an_option_given_overrides_its_part_and_a_named_network_is_plain_td():
    settings = _new_settings({"board": "2x3", "episodes": 1000})
    assert (settings.network, settings.target, settings.episodes) == ("1x6", "expected", 1000)
    settings = _new_settings({"board": "2x3", "network": "2x3"})
    assert (settings.target, settings.alpha, settings.optimistic) == ("sample", 0.1, 0.0)
    settings = _new_settings({"board": "4x4"})
    assert (settings.network, settings.target) == ("4x6", "sample")


def test_td2048_train_board_2x2_alone_learns_perfect_play(tmp_path):
    solution = tmp_path / "2x2.solution"
    assert td2048("solve", "--board", "2x2", "--out", solution).returncode == 0
    run = tmp_path / "run"
    r = td2048("train", "--board", "2x2", "--quiet", "--out", run)
    assert r.returncode == 0, r.stderr
    settings = json.loads((run / "settings.json").read_text())
    assert (settings["network"], settings["target"]) == ("1x4", "expected")
    r = td2048("eval", run / "model.td2048", "--exact", solution, "--symmetric", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["loss"] == pytest.approx(0.0, abs=1e-9)


def test_a_machine_without_the_memory_of_the_best_recipe_trains_the_one_that_fits(monkeypatch, capsys):
    best, small = recipes("3x3")
    assert peak_memory(small, "3x3") < 1 << 30 < 4 << 30 < peak_memory(best, "3x3")
    monkeypatch.setattr(train_command, "available_memory", lambda: 6 << 30)  # an 8 GiB laptop
    settings = _new_settings({"board": "3x3"}, quiet=False)
    assert (settings.network, settings.clamp) == ("01234567", 9)
    said = capsys.readouterr().out
    assert said.count("\n") == 1 and "network 01234567" in said and "6 GiB of memory is free" in said
    monkeypatch.setattr(train_command, "available_memory", lambda: 256 << 20)
    with pytest.raises(TD2048Error, match="td2048 train --board 3x3 --network 2x6"):
        _new_settings({"board": "3x3"})
    assert recipe("3x3", memory=256 << 20) == {}


def test_a_recipe_cut_short_pretrains_in_proportion(monkeypatch):
    monkeypatch.setattr(train_command, "available_memory", lambda: 64 << 30)
    assert _new_settings({"board": "3x3", "episodes": 1000}).pretrain == "2x6:3000"
    assert _new_settings({"board": "3x3", "episodes": 100}).pretrain == "2x6:1000"  # at least a thousand
    assert _new_settings({"board": "3x3", "episodes": 5_000_000}).pretrain == "2x6:3000000"  # at most the recipe's
    assert _new_settings({"board": "3x3", "episodes": 1000, "pretrain": "2x6:50"}).pretrain == "2x6:50"
