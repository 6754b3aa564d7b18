"""The end of a training run: one full-size weight file (the model, holding what a resume needs), resumes from
every point giving the uninterrupted run's weights bit for bit, and the "next" commands printed at the end."""

import json
import lzma
import os
import shlex
import shutil
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import numpy as np
import pytest
from commands import td2048
from test_wide_training import FIB_CLAMP, FIB_NETWORK

from td2048 import run as run_module
from td2048.errors import TD2048Error
from td2048.io.model import load_model, read_header, save_model
from td2048.run import SNAPSHOT_HEADROOM, TrainingRun, resume_source, snapshot_copy_fits
from td2048.settings import TrainSettings
from td2048.training import train

# one thread (reproducible), with everything a resume must carry: optimistic TD then TC (the accumulators), two
# stages with promotion, restarts (each thread's ring of kept boards), and the random states
METHODS = dict(network="2x4", stages="64", optimistic=20000, tc_from="200", restarts=0.2, restart_tile=128,
               update="forward", block=100, seed=5)
TOTAL = 600


def weight_files(run):
    return sorted(p.name for p in run.iterdir() if ".td2048" in p.name)


def assert_one_weight_file(run):
    assert weight_files(run) == ["model.td2048"]
    stat = (run / "model.td2048").stat()
    assert stat.st_nlink == 1
    assert not list(run.glob(".*.tmp"))


def logged_episodes(run):
    return [json.loads(line)["episodes"] for line in (run / "log.jsonl").read_text().splitlines()]


def train_to_end(run):
    for _ in run.blocks():
        pass
    return run.finish()


@pytest.fixture(scope="module")
def whole():
    """The uninterrupted run: its network and the state its model holds."""
    network, _ = train(TrainSettings(**METHODS, episodes=TOTAL))
    return network


def assert_same_as_whole(model, whole):
    net, header = load_model(model)
    assert np.array_equal(net.weights, whole.weights) and np.array_equal(net.accumulators, whole.accumulators)
    assert header["state"]["episodes"] == TOTAL
    run = model.parent
    assert logged_episodes(run) == list(range(100, TOTAL + 1, 100))
    assert_one_weight_file(run)


def test_a_finished_run_keeps_its_model_alone_and_it_holds_what_a_resume_needs(tmp_path, whole):
    run = TrainingRun.create(tmp_path / "run", TrainSettings(**METHODS, episodes=300, snapshot_every=100))
    model = train_to_end(run)
    assert_one_weight_file(run.directory)
    net, header = load_model(model)
    state = header["state"]
    assert state["episodes"] == 300 and len(state["rng_states"]) == 1 and len(state["restart_pools"]) == 1
    assert net.accumulators is not None and net.accumulators.any()  # TC's, in TC since episode 200
    assert resume_source(run.directory) == model

    resumed = TrainingRun.resume(run.directory, {"episodes": TOTAL})
    assert resumed.done == 300
    assert_same_as_whole(train_to_end(resumed), whole)


def test_a_snapshot_whose_copy_does_not_fit_is_written_from_the_weights_and_the_run_ends_the_same(
        tmp_path, whole, monkeypatch):
    """With too little memory free for a copy of the weights (a 15 GiB network on a 24 GiB machine), each snapshot
    is written in the foreground, from the weights themselves: none is left pending, and the run learns the same."""
    network = whole.copy()
    size = network.weights.nbytes + network.accumulators.nbytes
    assert snapshot_copy_fits(network, None) and snapshot_copy_fits(network, size + SNAPSHOT_HEADROOM)
    assert not snapshot_copy_fits(network, size + SNAPSHOT_HEADROOM - 1)

    monkeypatch.setattr(run_module, "available_memory", lambda: size)
    run = TrainingRun.create(tmp_path / "run", TrainSettings(**METHODS, episodes=TOTAL, snapshot_every=100))
    copies = []
    monkeypatch.setattr(run_module.Network, "copy", lambda net: copies.append(net) or net)
    for stats in run.blocks():
        assert run._pending is None  # every snapshot written before training went on
        if stats.episodes == 300:
            assert read_header(run.directory / "snapshot.td2048")["state"]["episodes"] == 200
    assert copies == []
    assert_same_as_whole(run.finish(), whole)


def stop_at(run: TrainingRun, episodes: int) -> None:
    """Train until the block that ends at ``episodes`` is logged, then stop there (as a kill would, past the last
    snapshot), once any snapshot in the background is written."""
    blocks = run.blocks()
    for stats in blocks:
        if stats.episodes == episodes:
            break
    blocks.close()
    run.wait()


def test_a_run_stopped_mid_way_resumes_from_its_snapshot(tmp_path, whole):
    """Stopped (as by SIGKILL) at 400 episodes with its snapshot at 300: no model; the log cut back to 300."""
    run = TrainingRun.create(tmp_path / "run", TrainSettings(**METHODS, episodes=TOTAL, snapshot_every=100))
    stop_at(run, 400)
    assert weight_files(run.directory) == ["snapshot.td2048"]
    assert read_header(run.directory / "snapshot.td2048")["state"]["episodes"] == 300
    assert logged_episodes(run.directory)[-1] == 400

    resumed = TrainingRun.resume(run.directory)
    assert resumed.done == 300 and logged_episodes(run.directory)[-1] == 300
    assert_same_as_whole(train_to_end(resumed), whole)


def test_a_finished_run_resumed_then_stopped_resumes_from_its_new_snapshot(tmp_path, whole):
    """Finished at 200, resumed to train on, stopped after the snapshot at 400: the old model and the new snapshot;
    the snapshot (more episodes) is taken, and at the end the model alone is left."""
    directory = tmp_path / "run"
    train_to_end(TrainingRun.create(directory, TrainSettings(**METHODS, episodes=200, snapshot_every=100)))
    run = TrainingRun.resume(directory, {"episodes": TOTAL})
    stop_at(run, 500)
    assert weight_files(directory) == ["model.td2048", "snapshot.td2048"]
    assert resume_source(directory) == directory / "snapshot.td2048"

    resumed = TrainingRun.resume(directory)
    assert resumed.done == 400
    assert_same_as_whole(train_to_end(resumed), whole)


def test_a_run_stopped_between_writing_its_model_and_removing_its_snapshot(tmp_path, whole):
    """Both files, the snapshot older: the model is taken, and the stale snapshot removed."""
    directory = tmp_path / "run"
    run = TrainingRun.create(directory, TrainSettings(**METHODS, episodes=300, snapshot_every=100))
    for stats in run.blocks():
        if stats.episodes == 300:
            run.wait()
            shutil.copy(directory / "snapshot.td2048", tmp_path / "at-200.td2048")
    run.finish()
    shutil.copy(tmp_path / "at-200.td2048", directory / "snapshot.td2048")
    assert resume_source(directory) == directory / "model.td2048"

    resumed = TrainingRun.resume(directory, {"episodes": TOTAL})
    assert resumed.done == 300 and not (directory / "snapshot.td2048").exists()
    assert_same_as_whole(train_to_end(resumed), whole)


def test_the_file_a_run_resumes_from(tmp_path):
    run = TrainingRun.create(tmp_path / "run", TrainSettings(network="2x4", episodes=200, block=100, seed=1))
    directory = run.directory
    assert resume_source(directory) is None  # nothing saved yet: the run starts again
    model = train_to_end(run)
    net, header = load_model(model)

    # a run finished by a td2048 that kept both files: the same episodes, the snapshot is taken
    save_model(directory / "snapshot.td2048", net, training=header["training"], state=header["state"])
    assert resume_source(directory) == directory / "snapshot.td2048"
    (directory / "snapshot.td2048").unlink()

    # the model compressed (xz -9 model.td2048) resumes as the model
    (directory / "model.td2048.xz").write_bytes(lzma.compress(model.read_bytes(), format=lzma.FORMAT_XZ))
    model.unlink()
    assert resume_source(directory) == directory / "model.td2048.xz"
    resumed = TrainingRun.resume(directory, {"episodes": 300})
    assert resumed.done == 200
    assert train_to_end(resumed) == model and load_model(model)[1]["state"]["episodes"] == 300
    (directory / "model.td2048.xz").unlink()

    # a model for playing only put in its place: refused, not trained from zero (which would cut the log)
    save_model(model, net)
    with pytest.raises(TD2048Error, match="holds no training state"):
        TrainingRun.resume(directory, {"episodes": 400})
    assert logged_episodes(directory) == [100, 200, 300]


# ------------------------------------------------------------------ the command line


def next_block(stdout):
    """The commands of the "# next:" block at the end of the output."""
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("# next:"))
    block = lines[start:]
    assert all(line.startswith("# ") and line.endswith(")") for line in block), block
    commands = [line[len("# next:"):].rsplit("   (", 1)[0].strip() for line in block]
    return {shlex.split(command)[1]: shlex.split(command) for command in commands}


def run_printed(command, cli_env, cwd):
    assert command[0] == "td2048"
    r = td2048(*command[1:], env=cli_env, cwd=cwd, timeout=300)
    assert r.returncode == 0, r.stderr
    return r


def test_train_ends_with_the_next_commands_for_its_model(tmp_path, cli_env):
    out = tmp_path / "my runs" / "a"
    r = td2048("train", "--network", "2x4", "--episodes", 300, "--block", 100, "--seed", 1, "--snapshot-every", 100,
               "--out", out, env=cli_env)
    assert r.returncode == 0, r.stderr
    assert_one_weight_file(out)
    assert r.stdout.splitlines()[-5].startswith("# done: 300 episodes; model saved to ")
    commands = next_block(r.stdout)
    assert list(commands) == ["eval", "watch", "serve", "plot"]
    model = str(out / "model.td2048")
    assert commands["eval"] == ["td2048", "eval", model, "--games", "1000"]
    assert commands["watch"] == ["td2048", "watch", model] and commands["serve"] == ["td2048", "serve", model]
    assert commands["plot"] == ["td2048", "plot", str(out), "-o", str(out / "progress.png")]
    assert f"'{model}'" in r.stdout  # the path has a space: quoted for the shell

    (out / "progress.png").unlink()
    before = sorted(tmp_path.rglob("*"))
    evaluated = run_printed(commands["eval"], cli_env, tmp_path)
    assert "avg = " in evaluated.stdout
    run_printed(commands["plot"], cli_env, tmp_path)
    assert (out / "progress.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # nothing a next line writes lands outside the run directory (a checkout's git status stays clean)
    assert sorted(tmp_path.rglob("*")) == sorted([*before, out / "progress.png"])


def test_a_2584_run_ends_with_commands_that_play_2584(tmp_path, cli_env):
    out = tmp_path / "2584"
    r = td2048("train", "--game", "2584", "--network", FIB_NETWORK, "--clamp", FIB_CLAMP, "--episodes", 200,
               "--block", 100, "--seed", 1, "--out", out, env=cli_env)  # the suite's 2584 kernels (no new compile)
    assert r.returncode == 0, r.stderr
    assert_one_weight_file(out)
    commands = next_block(r.stdout)
    evaluated = run_printed([*commands["eval"][:-1], "100"], cli_env, tmp_path)  # 100 games: quicker
    assert "avg = " in evaluated.stdout and "\t233\t" in evaluated.stdout  # 2584's tiles (Fibonacci numbers)
    watched = run_printed(commands["watch"], cli_env, tmp_path)
    assert "(two 4-cell tuples), 2584, " in watched.stdout and "game over" in watched.stdout


def test_a_quiet_run_prints_nothing_and_keeps_one_weight_file(tmp_path, cli_env):
    r = td2048("train", "--network", "2x4", "--episodes", 100, "--block", 100, "--seed", 1, "--out", tmp_path / "q",
               "--quiet", env=cli_env)
    assert r.returncode == 0 and r.stdout == ""
    assert_one_weight_file(tmp_path / "q")


def test_resuming_a_finished_run_on_the_command_line_is_the_uninterrupted_run(tmp_path, cli_env):
    common = ["train", "--network", "2x4", "--block", 100, "--seed", 7, "--tc-from", 200, "--restarts", 0.2,
              "--quiet"]
    assert td2048(*common, "--episodes", 400, "--out", tmp_path / "whole", env=cli_env).returncode == 0
    assert td2048(*common, "--episodes", 200, "--out", tmp_path / "run", env=cli_env).returncode == 0
    assert_one_weight_file(tmp_path / "run")
    r = td2048("train", "--resume", tmp_path / "run", "--episodes", 400, env=cli_env)
    assert r.returncode == 0, r.stderr
    assert "resuming at episode 200" in r.stdout and "# next:" in r.stdout
    a, _ = load_model(tmp_path / "whole" / "model.td2048")
    b, header = load_model(tmp_path / "run" / "model.td2048")
    assert np.array_equal(a.weights, b.weights) and np.array_equal(a.accumulators, b.accumulators)
    assert header["state"]["episodes"] == 400 and logged_episodes(tmp_path / "run") == [100, 200, 300, 400]
    assert_one_weight_file(tmp_path / "run")


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))


def test_after_the_readme_set_up_each_next_line_runs_as_printed(tmp_path, cli_env):
    """The README's set-up installs td2048 into .venv without activating it and runs .venv/bin/td2048 train: the
    run ends with lines that call .venv/bin/td2048, and each runs as printed, pasted into the same shell (cwd and
    PATH: .venv/bin not on it), the server until it has started (on a free port) and been stopped."""
    venv = tmp_path / ".venv"
    venv.symlink_to(Path(sys.prefix), target_is_directory=True)  # this environment, where the README puts one
    script = Path(sys.prefix) / "bin" / "td2048"
    assert script.exists(), "td2048's script is not installed in this environment: pip install -e ."
    path = os.pathsep.join(d for d in cli_env["PATH"].split(os.pathsep) if d and Path(d).resolve() != script.parent)
    env = {**cli_env, "PATH": path}
    r = subprocess.run([".venv/bin/td2048", "train", "--board", "2x3", "--network", "2x3", "--episodes", "200",
                        "--block", "100", "--seed", "1", "--out", "runs/first"], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    block = lines[next(i for i, line in enumerate(lines) if line.startswith("# next:")):]
    commands = [line[len("# next:"):].rsplit("   (", 1)[0].strip() for line in block]
    assert len(commands) == 4 and all(c.startswith(".venv/bin/td2048 ") for c in commands), commands

    def paste(command):
        done = subprocess.run(["bash", "-c", command], cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=300)
        assert done.returncode == 0 and "command not found" not in done.stderr, (command, done.stderr)
        return done.stdout

    assert "avg = " in paste(commands[0])  # eval
    assert "game over" in paste(commands[1])  # watch: one game, a line a move on a pipe
    serve = subprocess.Popen(["bash", "-c", f"exec {commands[2]} --port 0"], cwd=tmp_path, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        banner = serve.stdout.readline()
        assert banner.startswith("td2048 serve: http://127.0.0.1:"), (banner, serve.stderr.read())
        assert "model.td2048: network 2x3 (two 3-cell tuples), 2048 on the 2x3 board" in banner
        with urllib.request.urlopen(banner.split()[2] + "api/model", timeout=60) as answer:  # it serves
            assert json.load(answer)["network"]["label"] == "network 2x3 (two 3-cell tuples)"
    finally:
        serve.send_signal(signal.SIGINT)
        assert serve.wait(timeout=30) == 0
    paste(commands[3])  # plot
    out = tmp_path / "runs" / "first"
    assert (out / "progress.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and not (tmp_path / "progress.png").exists()


def test_the_printed_commands_call_td2048_as_it_was_called(tmp_path, monkeypatch):
    """By its script's path as typed unless that name on PATH finds the same program; python -m: td2048."""
    from td2048.cli import invoked_as

    bin_dir = tmp_path / "env" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "td2048").write_text("#!/bin/sh\n")
    (bin_dir / "td2048").chmod(0o755)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.setattr(sys, "argv", ["env/bin/td2048", "train"])
    assert invoked_as() == "env/bin/td2048"
    monkeypatch.setattr(sys, "argv", [str(tmp_path / "my env" / "bin" / "td2048")])
    assert invoked_as() == shlex.quote(str(tmp_path / "my env" / "bin" / "td2048"))
    monkeypatch.setenv("PATH", str(bin_dir))  # activated: the name finds the same program
    monkeypatch.setattr(sys, "argv", [str(bin_dir / "td2048")])
    assert invoked_as() == "td2048"
    monkeypatch.setattr(sys, "argv", ["/somewhere/td2048/cli/__main__.py"])  # python -m td2048.cli
    assert invoked_as() == "td2048"
