"""td2048 sweep: sweep files, trial settings, and a real 2-trial sweep on a local Ray instance."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from td2048.distributed import load_sweep, trial_name, trial_settings
from td2048.errors import TD2048Error

pytest.importorskip("ray")

TINY = """
[train]
network = "2x4"
episodes = 6000
block = 2000
snapshot-every = 2000

[grid]
alpha = [0.1, 0.02]

[random]
lambda = {uniform = [0.0, 0.5]}

[sweep]
metric = "reach:256"
scheduler = "asha"
grace = 1
seed = 0
"""


def write(tmp_path, text, name="s.toml"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_a_sweep_file_reads_as_train_options(tmp_path):
    plan = load_sweep(write(tmp_path, TINY))
    assert plan.grid == {"alpha": [0.1, 0.02]} and plan.metric_key == "reach_256" and plan.scheduler == "asha"
    settings = trial_settings(plan, {"alpha": 0.02, "lambda": 0.25})
    assert (settings.network, settings.alpha, settings.lam, settings.episodes, settings.snapshot_every) == \
           ("2x4", 0.02, 0.25, 6000, 2000)
    assert trial_settings(plan, {"tc": True}).tc_from == "0"
    assert trial_settings(plan, {"sample": 2}).seed == 2  # repetitions of a grid point: seeds 0, 1, 2, ...
    assert trial_name({"alpha": 0.1}) == trial_name({"alpha": 0.1}) != trial_name({"alpha": 0.02})


@pytest.mark.parametrize("text, message", [
    ("[train]\nalfa = 0.1\n", "unknown training option 'alfa'"),
    ("[train]\nout = 'x'\n", "set by the sweep itself"),
    ("[grid]\nalpha = 0.1\n", "must be a non-empty list"),
    ("[random]\nalpha = {normal = [0, 1]}\n", "must be one of"),
    ("[grid]\nalpha = [0.1]\n[train]\nalpha = 0.2\n", "more than one section"),
    ("[sweep]\nmetric = 'best'\n", "metric must be"),
    ("[train]\nalpha = -1.0\n", "--alpha must be a positive number"),
    ("[trian]\n", "unknown section"),
])
def test_bad_sweep_files_are_refused_in_one_line(tmp_path, text, message):
    with pytest.raises(TD2048Error, match=message):
        load_sweep(write(tmp_path, text))


def td2048(env, *args):
    return subprocess.run([sys.executable, "-m", "td2048.cli", *map(str, args)], capture_output=True, text=True,
                          env=env, timeout=600)


def untimed(line: str) -> dict:
    return {k: v for k, v in json.loads(line).items() if k not in ("seconds", "moves_per_s")}


def test_a_sweep_stopped_with_ctrl_c_continues_on_two_nodes_and_is_done(tmp_path, cli_env):
    """Ctrl-C (SIGINT to the sweep's process group, Ray's processes included) once a trial has logged a
    block; the same command, on a two-node cluster, then finishes the sweep, each trial from its last snapshot
    (a block logged after it is played again, the same bit for bit); run once more, it trains nothing."""
    sweep, out = write(tmp_path, TINY), tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "td2048.cli", "sweep", str(sweep), "--out", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=cli_env,
                            start_new_session=True)
    deadline = time.monotonic() + 300  # progress, not speed: only a hung sweep takes this long

    def logged():
        return {run.name: (run / "log.jsonl").read_text().splitlines() for run in (out / "runs").glob("*")
                if (run / "log.jsonl").exists()}

    while not any(logged().values()):
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=300)
    assert "Traceback" not in err, err
    before = logged()
    assert sum(map(len, before.values())) < 6  # stopped before the end

    # continued on a two-node cluster whose head has no CPU: the trials can only run on the second node
    from ray.cluster_utils import Cluster

    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0, "include_dashboard": False})
    try:
        cluster.add_node(num_cpus=2)
        r = td2048(cli_env, "sweep", sweep, "--out", out, "--ray", cluster.address)
        finished = {run: (run / "log.jsonl").read_text() for run in (out / "runs").iterdir()}
        again = td2048(cli_env, "sweep", sweep, "--out", out, "--ray", cluster.address)  # finished: trains nothing
    finally:
        cluster.shutdown()
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].split()[:5] == ["rank", "reach:256", "avg", "episodes", "status"]
    rows = [line.split() for line in lines[1:3]]
    assert [row[0] for row in rows] == ["1", "2"] and float(rows[0][1]) >= float(rows[1][1])
    assert {row[5] for row in rows} == {"0.1", "0.02"}  # the grid's alphas, with a lambda drawn for each
    assert (out / "sweep.png").stat().st_size > 0 and lines[-1] == f"# curves in {out / 'sweep.png'}"
    runs = sorted((out / "runs").iterdir())
    assert len(runs) == 2
    logs = [(run / "log.jsonl").read_text().splitlines() for run in runs]
    for run, log in zip(runs, logs):  # a normal run directory: settings first, a block per line
        settings = json.loads((run / "settings.json").read_text())
        assert settings["network"] == "2x4" and 0 <= settings["lam"] <= 0.5
        assert [json.loads(b)["episodes"] for b in log] == [2000, 4000, 6000][:len(log)] and log
        earlier = before.get(run.name, [])
        assert [untimed(b) for b in log[:len(earlier)]] == [untimed(b) for b in earlier]
    assert "done" in {row[4] for row in rows}
    assert again.returncode == 0, again.stderr
    assert again.stdout == r.stdout and {run: (run / "log.jsonl").read_text() for run in runs} == finished


def test_a_sweep_without_ray_says_how_to_get_it(tmp_path, cli_env):
    code = ("import sys; sys.modules['ray'] = None; from td2048.cli.__main__ import main; "
            f"sys.exit(main(['sweep', {str(write(tmp_path, TINY))!r}, '--out', {str(tmp_path / 'o')!r}]))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=cli_env, timeout=300)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "pip install 'td2048[ray]'" in r.stderr

