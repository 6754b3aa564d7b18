"""Real training subprocesses killed (SIGKILL, SIGTERM) at bad moments, then resumed."""

import json
import os
import signal
import subprocess
import time

import numpy as np
import pytest
from commands import start_td2048, td2048

from td2048.io.model import load_model
from td2048.io.rundir import read_log

TRAIN = ["train", "--network", "2x4", "--block", "100", "--seed", "3",
         "--snapshot-every", "1000"]


def run_train(*args, env=None):
    return td2048(*TRAIN, *args, timeout=300, env={**os.environ, **(env or {})})


def start_train(*args, env=None):
    return start_td2048(*TRAIN, *args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                        env={**os.environ, **(env or {})})


def wait_for(condition, timeout=120.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.02)
    raise AssertionError("timed out")


def logged_episodes(run):
    # read_log: a run still training may be halfway through writing its last line when it is read
    return [block["episodes"] for block in read_log(run / "log.jsonl")]


def assert_complete(run, episodes):
    assert logged_episodes(run) == list(range(100, episodes + 1, 100))  # every block exactly once
    net, header = load_model(run / "model.td2048")
    assert header["training"]["episodes"] == episodes and net.weights.any()
    assert header["state"]["episodes"] == episodes  # the model holds what a resume needs
    assert not list(run.glob(".*.tmp")) and not (run / "snapshot.td2048").exists()  # one copy of the weights


def test_sigkill_during_training_then_resume(tmp_path):
    run = tmp_path / "run"
    proc = start_train("--episodes", 1_000_000, "--out", run, "--quiet")
    wait_for(lambda: (run / "snapshot.td2048").exists() and len(logged_episodes(run)) >= 15)
    proc.kill()
    proc.wait()
    assert not (run / "model.td2048").exists()
    snapshot_episodes = load_model(run / "snapshot.td2048")[1]["state"]["episodes"]
    assert snapshot_episodes % 1000 == 0 and len(logged_episodes(run)) * 100 >= snapshot_episodes

    r = run_train("--resume", run, "--episodes", snapshot_episodes + 1500)
    assert r.returncode == 0, r.stderr
    assert f"resuming at episode {snapshot_episodes}" in r.stdout
    assert_complete(run, snapshot_episodes + 1500)


def test_sigkill_while_writing_a_snapshot_then_resume(tmp_path):
    """A finished run (its model alone, which holds what a resume needs) resumed to train on, killed while it
    writes its first snapshot: it resumes from the model."""
    run = tmp_path / "run"
    assert run_train("--episodes", 2000, "--out", run).returncode == 0
    assert not (run / "snapshot.td2048").exists()  # the model replaced it
    before = (run / "model.td2048").read_bytes()
    # the next snapshot (at 3000) stays half-written for 60 s: kill the process then
    proc = start_train("--resume", run, "--episodes", 1_000_000, "--quiet", env={"TD2048_TEST_SLOW_SAVE": "60"})
    wait_for(lambda: list(run.glob(".snapshot.td2048.*.tmp")))
    proc.kill()
    proc.wait()
    assert (run / "model.td2048").read_bytes() == before and not (run / "snapshot.td2048").exists()
    assert max(logged_episodes(run)) > 2000

    r = run_train("--resume", run, "--episodes", 3500)
    assert r.returncode == 0, r.stderr
    assert "resuming at episode 2000" in r.stdout
    assert_complete(run, 3500)


@pytest.mark.parametrize("signals", [1, 2], ids=["once", "twice-at-once"])
def test_sigterm_saves_and_says_how_to_resume(tmp_path, signals):
    """timeout(1) signals the process and then its group: two SIGTERMs at once are one request, not an abort."""
    run = tmp_path / "run"
    proc = start_td2048(*TRAIN, "--episodes", "1000000", "--out", run, stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE, text=True)
    wait_for(lambda: (run / "log.jsonl").exists() and len(logged_episodes(run)) >= 3)
    for _ in range(signals):
        proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0 and "interrupted" not in err, err
    assert f"td2048 train --resume {run}" in out and "# next:" not in out
    assert not (run / "snapshot.td2048").exists()  # the model holds what the resume needs
    done = load_model(run / "model.td2048")[1]["training"]["episodes"]
    assert logged_episodes(run) == list(range(100, done + 1, 100))
    r = run_train("--resume", run, "--episodes", done + 200)
    assert r.returncode == 0 and f"resuming at episode {done}" in r.stdout
    assert_complete(run, done + 200)


def test_resume_refuses_what_is_not_a_run(tmp_path):
    r = run_train("--resume", tmp_path / "nothing")
    assert r.returncode == 2 and "no training run to resume" in r.stderr


def test_threads_and_init(tmp_path):
    r = run_train("--episodes", 1000, "--threads", 2, "--merge-every", "0.01", "--out", tmp_path / "a", "--quiet")
    assert r.returncode == 0, r.stderr
    assert logged_episodes(tmp_path / "a") == list(range(100, 1001, 100))
    assert json.loads((tmp_path / "a" / "settings.json").read_text())["merge_every"] == 0.01
    r = run_train("--resume", tmp_path / "a", "--episodes", 1200, "--merge-every", "off")  # on to one table
    assert r.returncode == 0, r.stderr
    assert "copies" not in r.stdout.splitlines()[0] and logged_episodes(tmp_path / "a")[-1] == 1200
    assert json.loads((tmp_path / "a" / "settings.json").read_text())["merge_every"] is None
    r = run_train("--init", tmp_path / "a" / "model.td2048", "--episodes", 200, "--out", tmp_path / "b")
    assert r.returncode == 0, r.stderr
    settings = json.loads((tmp_path / "b" / "settings.json").read_text())
    assert settings["network"] == "2x4" and settings["init"].endswith("model.td2048")


def test_snapshot_interval():
    from td2048.errors import TD2048Error
    from td2048.schedules import snapshot_interval

    assert snapshot_interval("5m") == (None, 300.0) and snapshot_interval("30s") == (None, 30.0)
    assert snapshot_interval(10000) == (10000, None) and snapshot_interval("2h") == (None, 7200.0)
    for bad in ("0", "-5", "abc", "5x", "0m", ""):
        try:
            snapshot_interval(bad)
        except TD2048Error:
            continue
        raise AssertionError(bad)
    r = run_train("--snapshot-every", "soon", "--episodes", 10)
    assert r.returncode == 2 and "--snapshot-every must be" in r.stderr


def test_a_run_stopped_before_its_first_snapshot_starts_again_as_it_first_did(tmp_path):
    """Settings written, maybe a block logged, no snapshot yet: the resumed run is the uninterrupted one."""
    from td2048.run import TrainingRun
    from td2048.settings import TrainSettings

    settings = dict(network="2x4", episodes=300, block=100, seed=None)
    TrainingRun.create(tmp_path / "stopped", TrainSettings(**settings))  # killed here
    seed = json.loads((tmp_path / "stopped" / "settings.json").read_text())["seed"]
    resumed = TrainingRun.resume(tmp_path / "stopped")
    for _ in resumed.blocks():
        pass
    whole = TrainingRun.create(tmp_path / "whole", TrainSettings(**{**settings, "seed": seed}))
    for _ in whole.blocks():
        pass
    a, _ = load_model(resumed.finish())
    b, _ = load_model(whole.finish())
    assert (a.weights == b.weights).all() and a.weights.any()
    assert (tmp_path / "stopped" / "log.jsonl").read_text().count("\n") == 3


def test_a_snapshot_that_cannot_be_written_is_a_warning_and_training_goes_on(tmp_path, capsys):
    """The snapshot at 100 episodes cannot be written (a directory where its file goes: as a full disk, the
    write fails); the run warns once, goes on, and the snapshots after it and the model are written."""
    from td2048.run import TrainingRun
    from td2048.settings import TrainSettings

    run = TrainingRun.create(tmp_path / "run", TrainSettings(network="2x4", episodes=400, block=100, seed=4,
                                                             snapshot_every=100))
    blocker = run.directory / "snapshot.td2048"
    blocker.mkdir()
    (blocker / "in-the-way").touch()
    for stats in run.blocks():
        if stats.episodes == 200:
            run.wait()  # the snapshot at 100 has failed by now
            assert "the snapshot at episode 100 was not written" in capsys.readouterr().err
            (blocker / "in-the-way").unlink()
            blocker.rmdir()
        if stats.episodes == 300:
            run.wait()
            assert load_model(blocker)[1]["state"]["episodes"] == 200
    model, header = load_model(run.finish())
    assert header["state"]["episodes"] == 400 and model.weights.any()
    assert not blocker.exists() and "warning" not in capsys.readouterr().err  # the model replaced the snapshot
    assert [json.loads(line)["episodes"] for line in (run.directory / "log.jsonl").read_text().splitlines()] == \
        [100, 200, 300, 400]


def test_eight_threads_every_method_killed_then_resumed(tmp_path):
    """8 threads on this 2-core machine, with optimistic TD then TC, two stages with promotion and restarts: a run
    killed after its first snapshot resumes from it (each thread's random state and ring of kept boards) and
    finishes, with the accumulators in its model, having learned."""
    run = tmp_path / "run"
    methods = ["--threads", 8, "--optimistic", 20000, "--tc-from", 1000, "--stages", 64, "--restarts", 0.2,
               "--update", "forward"]
    proc = start_train("--episodes", 1_000_000, *methods, "--out", run, "--quiet")
    wait_for(lambda: (run / "snapshot.td2048").exists() and len(logged_episodes(run)) >= 25, timeout=300)
    proc.kill()
    proc.wait()
    net, header = load_model(run / "snapshot.td2048")
    done = header["state"]["episodes"]
    assert done >= 1000 and len(header["state"]["rng_states"]) == 8 and len(header["state"]["restart_pools"]) == 8
    assert net.accumulators is not None and np.isfinite(net.weights).all()

    r = run_train("--resume", run, "--episodes", done + 1000, *methods)
    assert r.returncode == 0, r.stderr
    assert f"resuming at episode {done}" in r.stdout
    assert_complete(run, done + 1000)
    net, header = load_model(run / "model.td2048")
    assert np.isfinite(net.weights).all() and np.isfinite(net.accumulators).all()
    assert header["training"]["threads"] == 8 and net.weights[net.spec.stage_markers + 1] == 1.0  # promoted
    log = [json.loads(line) for line in (run / "log.jsonl").read_text().splitlines()]
    assert log[-1]["tc"] and sum(b["restarted"] for b in log) > 0
    assert np.mean([b["avg"] for b in log[-5:]]) > 1.3 * np.mean([b["avg"] for b in log[:5]])


def test_a_resume_keeps_the_runs_memory_limit(tmp_path):
    run = tmp_path / "run"
    assert td2048("train", "--board", "2x3", "--network", "2x3", "--memory-limit", "3GiB", "--episodes", 100,
                  "--block", 100, "--seed", 1, "--quiet", "--out", run).returncode == 0
    r = td2048("train", "--resume", run, "--episodes", 200, "--quiet")  # no --memory-limit: the run's stays
    assert r.returncode == 0, r.stderr
    assert json.loads((run / "settings.json").read_text())["memory_limit"] == 3 << 30
