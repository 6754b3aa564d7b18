"""td2048 sweep: sweep files and trial settings. A real sweep, stopped and finished on a Ray cluster, is in
test_ray.py, beside the cluster it uses."""

import subprocess
import sys

import pytest

from td2048.distributed.sweep import (
    TrialSummary,
    _save_summary,
    finished_sweep,
    load_sweep,
    trial_name,
    trial_settings,
)
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
    assert trial_settings(plan, {"merge-every": "off"}).merge_every is None  # as td2048 train --merge-every off
    assert trial_settings(plan, {"merge-every": 0.5}).merge_every == 0.5
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


def test_a_sweep_without_ray_says_how_to_get_it(tmp_path, cli_env):
    code = ("import sys; sys.modules['ray'] = None; from td2048.cli.__main__ import main; "
            f"sys.exit(main(['sweep', {str(write(tmp_path, TINY))!r}, '--out', {str(tmp_path / 'o')!r}]))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=cli_env, timeout=300)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "pip install 'td2048[ray]'" in r.stderr



def test_a_finished_sweep_is_read_back_only_for_the_same_plan(tmp_path):
    """The summary a finished sweep leaves serves the same sweep file, as long as its run directories are there;
    a changed file, a missing run or a damaged summary go back to Tune (None)."""
    plan, out = load_sweep(write(tmp_path, TINY)), tmp_path / "out"
    run = out / "runs" / trial_name({"alpha": 0.1})
    run.mkdir(parents=True)
    trials = [TrialSummary(run.name, str(run), {"alpha": 0.1}, 6000, 0.98, 9300.5, "done")]
    assert finished_sweep(plan, out) is None  # no summary yet
    _save_summary(plan, out, trials)
    assert finished_sweep(plan, out) == trials
    assert finished_sweep(load_sweep(write(tmp_path, TINY.replace("0.02]", "0.03]"), "t.toml")), out) is None
    run.rmdir()
    assert finished_sweep(plan, out) is None
    run.mkdir()
    (out / "sweep.json").write_text("{not json")
    assert finished_sweep(plan, out) is None
