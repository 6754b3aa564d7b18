"""The td2048 command in real subprocesses: output, run directory, exit codes, one-line errors."""

import json
import subprocess
import sys

import numpy as np
import pytest
from commands import assert_one_line_error, start_td2048, td2048

from td2048.io.model import load_model, save_model
from td2048.network import Network
from td2048.spec import parse_network, parse_stages


def test_train_writes_tables_log_and_model(tmp_path, cli_env):
    out = tmp_path / "run"
    r = td2048("train", "--network", "2x4", "--episodes", 300, "--block", 100, "--seed", 1, "--out", out, env=cli_env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("avg = ") == 3 and "note:" not in r.stderr
    assert "\n100\tavg = " in r.stdout and "\n300\tavg = " in r.stdout
    log = [json.loads(line) for line in (out / "log.jsonl").read_text().splitlines()]
    assert [b["episodes"] for b in log] == [100, 200, 300]
    for block in log:
        assert {"episodes", "avg", "max", "reach", "moves", "seconds"} <= set(block)
        assert all(isinstance(k, str) and 0 <= v <= 1 for k, v in block["reach"].items())
    settings = json.loads((out / "settings.json").read_text())
    assert settings["network"] == "2x4" and settings["seed"] == 1 and settings["alpha"] == 0.1
    net, header = load_model(out / "model.td2048")
    assert header["training"]["episodes"] == 300 and net.spec.isomorphisms == 8 and net.weights.any()
    assert (out / "progress.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    again = td2048("train", "--network", "2x4", "--episodes", 300, "--block", 100, "--seed", 1,
                   "--out", tmp_path / "again", "--quiet", env=cli_env)
    assert again.returncode == 0 and again.stdout == ""
    assert np.array_equal(load_model(tmp_path / "again" / "model.td2048")[0].weights, net.weights)


def test_train_says_when_a_tuple_repeats_another_on_a_symmetric_board(tmp_path, cli_env):
    # on a 2x3 board the two rows are mirror images: the second table holds the first one's features
    r = td2048("train", "--board", "2x3", "--network", "012,345", "--episodes", 10, "--block", 10,
               "--out", tmp_path / "run", env=cli_env)
    assert r.returncode == 0, r.stderr
    notes = [line for line in r.stderr.splitlines() if line.startswith("td2048 train: note:")]
    assert len(notes) == 1 and "tuple 345 reads the cells of 012" in notes[0]


def test_train_stops_when_the_weights_diverge_and_saves_none_of_them(tmp_path, cli_env):
    # alpha 100 on a 2x3 row: the values overshoot their targets a hundredfold and reach NaN within a block
    out = tmp_path / "run"
    r = td2048("train", "--board", "2x3", "--network", "012", "--alpha", 100, "--episodes", 3000, "--block", 1000,
               "--seed", 1, "--out", out, "--quiet", env=cli_env)
    assert_one_line_error(r, "the weights diverged", "--alpha 100", f"--resume {out} --alpha 50", code=1)
    assert not (out / "model.td2048").exists() and not (out / "snapshot.td2048").exists()
    again = td2048("train", "--resume", out, "--alpha", 0.1, "--quiet", env=cli_env)
    assert again.returncode == 0, again.stderr
    net, header = load_model(out / "model.td2048")
    assert header["training"]["episodes"] == 3000 and np.isfinite(net.weights).all() and net.weights.any()


def test_train_refuses_to_overwrite_a_run(tmp_path, cli_env):
    out = tmp_path / "run"
    assert td2048("train", "--network", "2x4", "--episodes", 10, "--out", out, env=cli_env).returncode == 0
    assert_one_line_error(td2048("train", "--network", "2x4", "--episodes", 10, "--out", out, env=cli_env),
                          "already holds a run")


@pytest.mark.parametrize("args, fragment", [
    (["--network", "01z3"], "not a tuple of hex cells"),
    (["--network", "0113"], "repeats a cell"),
    (["--network", "012345678"], "over the memory limit"),
    (["--network", "0123,,4567"], "empty tuple"),
    (["--network", "8x6", "--memory-limit", "512MB"], "over the memory limit"),
    (["--network", "4x6", "--memory-limit", "lots"], "bad size"),
    (["--alpha", "-1"], "positive"),
    (["--episodes", "0"], "at least 1"),
    (["--isomorphisms", "3"], "invalid choice"),
    (["--update", "sideways"], "invalid choice"),
    (["--method", "states"], "invalid choice"),
    (["--frobnicate"], "unrecognized arguments"),
    (["--lambda", "1.5"], "--lambda must be in [0, 1]"),
    (["--lambda", "-0.1"], "--lambda must be in [0, 1]"),
    (["--lambda", "0.5", "--update", "forward"], "need --update backward"),
    (["--lambda", "0.5", "--nstep", "3"], "give one of them"),
    (["--nstep", "0"], "at least 1"),
    (["--alpha-schedule", "cosine"], "bad --alpha-schedule"),
    (["--alpha-schedule", "step:0.1@x"], "bad --alpha-schedule"),
    (["--alpha-schedule", "invsqrt:-5"], "bad --alpha-schedule"),
    (["--explore", "const:2"], "bad --explore"),
    (["--explore", "sometimes"], "bad --explore"),
    (["--merge-every", "0"], "positive"),
    (["--merge-every", "soon"], "bad number"),
    (["--merge-every", "0.5"], "add --threads N"),
    (["--merge-every", "0.5", "--threads", "2", "--tc"], "share one table"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, args, fragment, cli_env):
    assert_one_line_error(td2048("train", "--episodes", 5, *args, "--out", tmp_path / "x", env=cli_env), fragment)


def test_unwritable_out_dir(tmp_path, cli_env):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    assert_one_line_error(td2048("train", "--network", "2x4", "--out", blocker / "run", env=cli_env),
                          "cannot write to directory")


def test_no_command_and_unknown_command():
    """Plain td2048 lists every command with its one-line purpose (exit 2, as a usage error)."""
    from td2048.cli.__main__ import COMMANDS

    r = td2048()
    assert r.returncode == 2 and r.stdout == "" and "Traceback" not in r.stderr
    lines = r.stderr.splitlines()
    assert lines[0].startswith("usage: td2048 COMMAND") and "td2048 COMMAND --help" in lines[0]
    listed = {line.split()[0]: line.split(None, 1)[1] for line in lines[lines.index("commands:") + 1:]}
    assert listed == {name: module.HELP for name, module in COMMANDS.items()}
    assert_one_line_error(td2048("fly"), "invalid choice")
    assert "did you mean" not in td2048("fly").stderr  # nothing close: no guess


def test_a_mistyped_command_option_or_choice_gets_a_suggestion():
    """Exit 2 and one line, as every usage error, ending with what was probably meant."""
    assert_one_line_error(td2048("trian"), "td2048: error:", "invalid choice: 'trian'", "did you mean train?")
    assert_one_line_error(td2048("train", "--episdoes", 10), "td2048 train: error:", "unrecognized arguments",
                          "did you mean --episodes?", "see td2048 train --help")
    assert_one_line_error(td2048("eval", "m.td2048", "--gmaes=5", "--sed", 1), "did you mean --games (for --gmaes=5), "
                          "--seed (for --sed)?")
    assert_one_line_error(td2048("train", "--update", "backwrd"), "invalid choice", "did you mean backward?")


def test_options_are_checked_before_the_compiled_code_loads(tmp_path):
    """--help and a bad option, of argparse's or of the settings', answer without importing Numba or
    matplotlib: the checks are plain Python (td2048.settings), and those imports are most of the start-up.
    (What this guards is what gets imported, not a time.)"""
    script = "\n".join([
        "import contextlib, io, sys",
        "from td2048.cli.__main__ import main",
        "for argv in (['--help'], ['train', '--help'], ['train', '--network', '01z3'], ['train', '--lambda', '2'],",
        "             ['train', '--network', '8x6', '--memory-limit', '512MB'], ['eval', 'none.td2048'],",
        "             ['watch', 'none.td2048'], ['sweep', 'none.toml'], ['convert', 'a.td2048', 'b.zip']):",
        "    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):",
        "        try:",
        "            assert main(argv) == 2, argv",
        "        except SystemExit as e:",
        "            assert e.code in (0, 2), argv",
        "print(sorted(m for m in ('numba', 'matplotlib', 'gymnasium', 'ray', 'rich') if m in sys.modules))"])
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0 and r.stdout == "[]\n", (r.stdout, r.stderr)


def test_help_explains_the_alpha_split():
    r = td2048("train", "--help")
    assert r.returncode == 0 and "tuples x isomorphisms" in r.stdout


def test_bench_json(cli_env):
    r = td2048("bench", "--network", "2x4", "--seconds", "0.3", "--json", env=cli_env)
    assert r.returncode == 0, r.stderr
    result = json.loads(r.stdout)
    assert {"network", "train_moves_per_s", "test_moves_per_s", "compile_s"} <= set(result)
    assert result["network"] == "2x4" and result["train_moves_per_s"] > 0 and result["test_moves_per_s"] > 0
    text = td2048("bench", "--network", "2x4", "--seconds", "0.2", env=cli_env)
    assert text.returncode == 0 and "moves/s" in text.stdout
    assert_one_line_error(td2048("bench", "--seconds", "0"), "positive")


@pytest.fixture(scope="module")
def staged_model(tmp_path_factory):
    """A 2x4 network of two stages (from 64) with zero weights: the staged network of test_methods' learning
    tests, whose kernels the bench tests below then share instead of compiling their own."""
    path = tmp_path_factory.mktemp("bench") / "staged.td2048"
    save_model(path, Network(parse_network("2x4", stages=parse_stages("64"))))
    return path


@pytest.mark.parametrize("records", [(), ("--tc-records",)])
def test_bench_tc_on_threads(cli_env, records, staged_model):
    r = td2048("bench", "--weights", staged_model, "--episodes", 40, "--tc", "--threads", 2, *records, "--json",
               env=cli_env)
    assert r.returncode == 0, r.stderr
    result = json.loads(r.stdout)
    assert result["tc"] is True and result["threads"] == 2 and result["episodes"] == 40
    assert result["tc_records"] is bool(records)  # and the test games play what the records learned:
    assert result["train_moves_per_s"] > 0 and result["nonzero_weights"] > 0


@pytest.mark.parametrize("copies", [(), ("--merge-every", "0.05")])
def test_bench_td_on_threads_on_one_table_or_on_copies(cli_env, copies, staged_model):
    r = td2048("bench", "--weights", staged_model, "--episodes", 40, "--threads", 2, *copies, "--json", env=cli_env)
    assert r.returncode == 0, r.stderr
    result = json.loads(r.stdout)
    assert result["threads"] == 2 and result["merge_every"] == (0.05 if copies else None)
    assert result["train_moves_per_s"] > 0 and result["nonzero_weights"] > 0


def test_help_of_every_command():
    for command in ("train", "eval", "plot", "convert", "bench"):
        r = td2048(command, "--help")
        assert r.returncode == 0 and "usage: td2048 " + command in r.stdout
    assert "not reproducible" in td2048("train", "--help").stdout


def test_lambda_and_alpha_schedule(tmp_path, cli_env):
    out = tmp_path / "run"
    r = td2048("train", "--network", "2x4", "--episodes", 400, "--block", 100, "--seed", 1, "--lambda", "0.5",
               "--alpha-schedule", "step:0.1@0,0.02@200", "--explore", "exp:1:0.01:300", "--out", out, "--quiet",
               env=cli_env)
    assert r.returncode == 0, r.stderr
    log = [json.loads(line) for line in (out / "log.jsonl").read_text().splitlines()]
    assert [b["alpha"] for b in log] == [0.1, 0.1, 0.02, 0.02]
    header = load_model(out / "model.td2048")[1]["training"]
    assert header["lambda"] == 0.5 and header["alpha_schedule"] == "step:0.1@0,0.02@200"
    assert header["explore"] == "exp:1:0.01:300"


def test_train_piped_into_head_still_saves_the_run(tmp_path, cli_env):
    """`td2048 train ... | head -2`: the reader leaves early; training goes on to its end and saves."""
    out = tmp_path / "run"
    proc = start_td2048("train", "--network", "2x4", "--episodes", "3000", "--block", "500", "--seed", "1",
                        "--out", out, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=cli_env)
    proc.stdout.readline()  # the header line, then the reader goes away
    proc.stdout.close()
    _, err = proc.communicate(timeout=600)
    assert proc.returncode == 0 and b"Traceback" not in err, err
    net, header = load_model(out / "model.td2048")
    assert header["training"]["episodes"] == 3000
    assert len((out / "log.jsonl").read_text().splitlines()) == 6


def test_convert_reads_a_compressed_model(tmp_path, cli_env):
    import lzma

    import td2048 as api

    net, _ = api.train(api.TrainSettings(network="2x4", episodes=20, seed=0))
    api.save(net, tmp_path / "m.td2048")
    (tmp_path / "m.td2048.xz").write_bytes(lzma.compress((tmp_path / "m.td2048").read_bytes()))
    r = td2048("convert", tmp_path / "m.td2048.xz", tmp_path / "m.bin", env=cli_env)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "m.bin").stat().st_size > net.weights.nbytes // 2
