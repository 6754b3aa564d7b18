"""``td2048 train --exact SOLUTION``: the network's greedy policy valued exactly while it trains, on a solved 2x3
board, in real subprocesses; the refusals; resume; Ctrl-C; threads and Ray; and ``td2048 plot``'s panel of it."""

import json
import signal
import subprocess
import time

import pytest
from commands import assert_one_line_error, start_td2048, td2048

from td2048.io.model import load_model
from td2048.play import Agent
from td2048.plot import EXACT_TITLE, runs_figure
from td2048.solve import agent_policy, exact_policy_value, load_solution

BOARD = ("--board", "2x3", "--network", "2x3")
RUN = (*BOARD, "--block", 500, "--seed", 1)


@pytest.fixture(scope="module")
def solution_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("solution") / "2x3.solution"
    r = td2048("solve", "--board", "2x3", "--out", path)
    assert r.returncode == 0, r.stderr
    return path


@pytest.fixture(scope="module")
def solution(solution_file):
    return load_solution(solution_file)


@pytest.fixture(scope="module")
def trained(solution_file, tmp_path_factory):
    """The run of the issue: 3000 episodes in blocks of 500, valued every 2 blocks; (run directory, stdout)."""
    run = tmp_path_factory.mktemp("trained") / "run"
    r = td2048("train", *RUN, "--episodes", 3000, "--exact", solution_file, "--exact-every", 2, "--out", run)
    assert r.returncode == 0, r.stderr
    return run, r.stdout


def log(run):
    return [json.loads(line) for line in (run / "log.jsonl").read_text().splitlines()]


def exact_entries(run):
    return {b["episodes"]: b["exact"] for b in log(run) if "exact" in b}


def greedy_value(model, solution):
    """The exact value of a model's greedy policy, computed here (up to symmetry, as a run values its network)."""
    network, _ = load_model(model)
    assert network.spec.symmetric
    return exact_policy_value(solution, agent_policy(Agent(network, depth=1)), symmetric=True)


def test_a_run_logs_the_exact_value_every_two_blocks_and_at_the_end(trained, solution_file, solution):
    run, stdout = trained
    assert [b["episodes"] for b in log(run)] == [500, 1000, 1500, 2000, 2500, 3000]
    entries = exact_entries(run)
    assert sorted(entries) == [1000, 2000, 3000]
    for entry in entries.values():
        assert entry["optimal_expected_score"] == pytest.approx(solution.expected_score, rel=1e-12)
        assert entry["loss"] == pytest.approx(entry["optimal_expected_score"] - entry["expected_score"])
        assert entry["loss_share"] == pytest.approx(entry["loss"] / entry["optimal_expected_score"])
        assert 0 < entry["optimal_move_share"] < 1 and entry["moves"] > 0 and entry["positions"] > 0
        assert entry["reach"]["2"] == pytest.approx(1.0) and set(entry["reach"]) == {str(t) for t in solution.tiles}
        assert entry["seconds"] >= 0
    assert entries[3000]["loss"] < entries[1000]["loss"]  # the gap shrinks as the network learns
    settings = json.loads((run / "settings.json").read_text())
    assert settings["exact"] == str(solution_file) and settings["exact_every"] == 2

    # the block table shows each valuation below its block, with the gap to the optimum
    lines = [line for line in stdout.splitlines() if line.startswith("exact = ")]
    assert len(lines) == 3
    for line, episodes in zip(lines, (1000, 2000, 3000), strict=True):
        entry = entries[episodes]
        assert line.startswith(f"exact = {entry['expected_score']:.2f}\tgap = {entry['loss']:.2f} (")
        assert f"of the optimum {solution.expected_score:.2f})" in line
    assert stdout.split("\n3000\tavg = ")[1].split("\n\n")[0].splitlines()[-1] == lines[-1]

    # the last valuation is the finished model's, as td2048 eval --exact computes it
    r = td2048("eval", run / "model.td2048", "--exact", solution_file, "--symmetric", "--json")
    assert r.returncode == 0, r.stderr
    evaluated = json.loads(r.stdout.splitlines()[-1])
    assert entries[3000]["expected_score"] == pytest.approx(evaluated["expected_score"], rel=1e-12)
    assert entries[3000]["optimal_move_share"] == pytest.approx(evaluated["optimal_move_share"], rel=1e-12)
    assert entries[3000]["reach"] == pytest.approx(evaluated["reach"], rel=1e-12)


def test_a_resumed_run_keeps_valuing_and_each_entry_is_its_models_value(trained, solution_file, solution, tmp_path):
    """With one thread a run is reproducible: stopped at 1000 and 2000 episodes and resumed, it logs the
    uninterrupted run's valuations, and each is the exact value of the model of that moment."""
    run = tmp_path / "run"
    r = td2048("train", *RUN, "--episodes", 1000, "--exact", solution_file, "--exact-every", 2, "--out", run,
               "--quiet")
    assert r.returncode == 0, r.stderr
    entries = exact_entries(trained[0])
    first = exact_entries(run)
    assert sorted(first) == [1000]
    assert {k: v for k, v in first[1000].items() if k != "seconds"} == \
        {k: v for k, v in entries[1000].items() if k != "seconds"}
    assert greedy_value(run / "model.td2048", solution).expected_score == \
        pytest.approx(entries[1000]["expected_score"], rel=1e-12)

    r = td2048("train", "--resume", run, "--episodes", 2000, "--quiet")  # the settings keep --exact
    assert r.returncode == 0, r.stderr
    value = greedy_value(run / "model.td2048", solution)
    assert value.expected_score == pytest.approx(entries[2000]["expected_score"], rel=1e-12)
    assert value.optimal_move_share == pytest.approx(entries[2000]["optimal_move_share"], rel=1e-12)

    copy = tmp_path / "copy.solution"  # another file of the same board and game: taken
    copy.write_bytes(solution_file.read_bytes())
    r = td2048("train", "--resume", run, "--episodes", 3000, "--exact", copy)
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("\nexact = ") == 1
    resumed = exact_entries(run)
    assert sorted(resumed) == [1000, 2000, 3000]
    for episodes in resumed:
        for key in ("expected_score", "loss", "optimal_move_share", "positions"):
            assert resumed[episodes][key] == pytest.approx(entries[episodes][key], rel=1e-12), (episodes, key)
    assert json.loads((run / "settings.json").read_text())["exact"] == str(copy)

    # --exact-every changes on resume; --exact off stops the valuations
    r = td2048("train", "--resume", run, "--episodes", 4000, "--exact-every", 1, "--quiet")
    assert r.returncode == 0, r.stderr
    assert sorted(exact_entries(run)) == [1000, 2000, 3000, 3500, 4000]
    r = td2048("train", "--resume", run, "--episodes", 5000, "--exact", "off", "--quiet")
    assert r.returncode == 0, r.stderr
    assert sorted(exact_entries(run)) == [1000, 2000, 3000, 3500, 4000]
    assert [b["episodes"] for b in log(run)][-2:] == [4500, 5000]
    settings = json.loads((run / "settings.json").read_text())
    assert settings["exact"] is None and settings["exact_every"] is None


def test_refusals_are_one_line_and_write_nothing(solution_file, tmp_path):
    other_board = tmp_path / "2x2.solution"
    assert td2048("solve", "--board", "2x2", "--out", other_board).returncode == 0
    data = solution_file.read_bytes()
    truncated = tmp_path / "truncated.solution"
    truncated.write_bytes(data[:len(data) - 8])
    altered = tmp_path / "altered.solution"
    altered.write_bytes(data[:-8] + bytes(b ^ 0xFF for b in data[-8:]))  # the last value's bytes
    out = tmp_path / "run"
    cases = [
        (("--exact", other_board), ("solves 2048 on 2x2", "trains 2048 on 2x3")),
        (("--game", "2584", "--exact", solution_file), ("solves 2048 on 2x3", "trains 2584 on 2x3")),
        (("--exact", truncated), ("truncated or altered",)),
        (("--exact", altered), ("checksum",)),
        (("--exact", tmp_path / "missing.solution"), ("cannot read",)),
        (("--exact-every", 2), ("--exact-every", "add --exact")),
        (("--exact", "off"), ("--exact off",)),
        (("--exact", solution_file, "--exact-every", 0), ("--exact-every", "at least 1")),
    ]
    for options, fragments in cases:
        assert_one_line_error(td2048("train", *RUN, "--episodes", 1000, *options, "--out", out), *fragments)
        assert not out.exists(), options

    # on resume: the same checks, before the run is touched
    r = td2048("train", *RUN, "--episodes", 500, "--out", out, "--quiet")
    assert r.returncode == 0, r.stderr
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    assert_one_line_error(td2048("train", "--resume", out, "--episodes", 1000, "--exact", other_board),
                          "solves 2048 on 2x2", "trains 2048 on 2x3")
    assert_one_line_error(td2048("train", "--resume", out, "--episodes", 1000, "--exact", altered), "checksum")
    assert_one_line_error(td2048("train", "--resume", out, "--episodes", 1000, "--exact-every", 3), "add --exact")
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


def test_ctrl_c_values_the_last_block(solution_file, solution, tmp_path):
    """A run stopped by SIGTERM values the block it finishes, whatever --exact-every: its model's value."""
    run = tmp_path / "run"
    args = ["train", *RUN, "--episodes", 10**9, "--exact", solution_file, "--exact-every", 10**6, "--out", run,
            "--quiet"]
    proc = start_td2048(*args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 300
        while not ((run / "log.jsonl").exists() and len((run / "log.jsonl").read_text().splitlines()) >= 3):
            assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read() if proc.poll() else ""
            time.sleep(0.02)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=300) == 0, proc.stderr.read()
    finally:
        proc.kill()
        proc.wait()
        proc.stderr.close()
    blocks = log(run)
    assert all("exact" not in b for b in blocks[:-1]) and "exact" in blocks[-1]
    assert blocks[-1]["exact"]["expected_score"] == \
        pytest.approx(greedy_value(run / "model.td2048", solution).expected_score, rel=1e-12)


def test_threads_on_copies_are_merged_before_the_valuation(solution_file, tmp_path):
    run = tmp_path / "run"
    r = td2048("train", *RUN, "--episodes", 2000, "--threads", 2, "--merge-every", 0.001, "--exact", solution_file,
               "--out", run, "--quiet")
    assert r.returncode == 0, r.stderr
    entries = exact_entries(run)
    assert sorted(entries) == [500, 1000, 1500, 2000]  # --exact-every 1 by default
    r = td2048("eval", run / "model.td2048", "--exact", solution_file, "--symmetric", "--json")
    assert r.returncode == 0, r.stderr
    assert entries[2000]["expected_score"] == pytest.approx(json.loads(r.stdout)["expected_score"], rel=1e-12)


def test_ray_workers_are_synced_before_the_valuation(solution_file, tmp_path, cli_env):
    pytest.importorskip("ray")
    run = tmp_path / "run"
    r = td2048("train", *RUN, "--episodes", 2000, "--exact", solution_file, "--exact-every", 2, "--ray", "--workers",
               1, "--out", run, "--quiet", env=cli_env)
    assert r.returncode == 0, r.stderr
    entries = exact_entries(run)
    assert sorted(entries) == [1000, 2000]
    r = td2048("eval", run / "model.td2048", "--exact", solution_file, "--symmetric", "--json")
    assert r.returncode == 0, r.stderr
    assert entries[2000]["expected_score"] == pytest.approx(json.loads(r.stdout)["expected_score"], rel=1e-12)


def test_plot_draws_the_exact_expected_score_against_the_optimum(trained, solution, tmp_path):
    run, _ = trained
    out = tmp_path / "progress.png"
    r = td2048("plot", run, "-o", out)
    assert r.returncode == 0, r.stderr
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    plain = tmp_path / "plain"  # a run without valuations beside it: drawn as before, absent from the panel
    plain.mkdir()
    (plain / "log.jsonl").write_text(json.dumps({"episodes": 500, "avg": 100.0, "reach": {"64": 0.1}}) + "\n")
    assert [ax.get_title() for ax in runs_figure([plain]).axes] == ["Average score per block",
                                                                   "Games reaching a tile"]
    figure = runs_figure([run, plain])
    assert [ax.get_title() for ax in figure.axes] == ["Average score per block", EXACT_TITLE,
                                                      "Games reaching a tile"]
    panel = figure.axes[1]
    lines = {line.get_label(): line for line in panel.get_lines()}
    assert set(lines) == {"run", f"optimum {solution.expected_score:,.2f}"}
    entries = exact_entries(run)
    assert list(lines["run"].get_xdata()) == sorted(entries)
    assert list(lines["run"].get_ydata()) == [entries[e]["expected_score"] for e in sorted(entries)]
    optimum = lines[f"optimum {solution.expected_score:,.2f}"]
    assert all(y == pytest.approx(solution.expected_score, rel=1e-12) for y in optimum.get_ydata())
    assert [text.get_text() for text in panel.get_legend().get_texts()] == list(lines)
    assert len(figure.axes[0].get_lines()) == 2  # both runs' average scores
