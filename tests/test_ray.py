"""Evaluation in shards (td2048.distributed), locally and on a real two-node Ray cluster on this machine (a worker
killed from outside in the middle of a shard included), ``td2048 eval --ray``, and a sweep stopped with Ctrl-C and
finished on the cluster. One cluster serves the whole module: each Ray start-up costs seconds."""

import json
import logging
import os
import re
import signal
import subprocess
import sys
import threading
import time
import warnings

import numpy as np
import pytest
from commands import start_td2048, td2048
from test_state_values import random_weights
from test_sweep import TINY, write

from td2048.distributed.ray_eval import _shared_writable, play_on_ray
from td2048.distributed.shards import plan_shards, play_shard, play_sharded
from td2048.errors import TD2048Error
from td2048.io.model import save_model
from td2048.network import Network, parse_network
from td2048.play import Agent, Search

ray = pytest.importorskip("ray")
psutil = pytest.importorskip("psutil")  # Ray's own (ray/thirdparty_files), importable once Ray is

GREEDY = Search(1)
DEPTH2 = Search(2, tt_size=1 << 20)


@pytest.fixture(scope="module")
def network():
    return random_weights(Network(parse_network("2x4")), 3)


@pytest.fixture(scope="module")
def model(network, tmp_path_factory):
    path = tmp_path_factory.mktemp("ray") / "2x4.td2048"
    save_model(path, network)
    return path


@pytest.fixture(scope="module")
def cluster():
    """Two Ray nodes on this machine: a head with no CPU for tasks, and a second node with 2 CPUs and the
    resource ``second``; so every task runs on a node other than the driver's. This process is connected."""
    from ray.cluster_utils import Cluster

    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0, "include_dashboard": False})
    try:
        cluster.second_node_id = cluster.add_node(num_cpus=2, resources={"second": 2}).node_id
        ray.init(address=cluster.address, logging_level=logging.ERROR, log_to_driver=False)
        yield cluster
    finally:
        ray.shutdown()
        cluster.shutdown()


def same_results(a, b) -> None:
    """Everything but the seconds."""
    drop = ("seconds", "moves_per_s")
    assert {k: v for k, v in a.stats.to_json().items() if k not in drop} == \
           {k: v for k, v in b.stats.to_json().items() if k not in drop}
    assert a.search_counts == b.search_counts
    assert (a.seed, a.shard_size, a.shards) == (b.seed, b.shard_size, b.shards)


def without_times(lines):
    """Record lines without TICK, TOCK and the decisions' milliseconds."""
    return [re.sub(r"@\d+", "@T", re.sub(r"\(\d+\)", "", line)) for line in lines]


# ------------------------------------------------------------------------------------ shards, locally

def test_shards_cover_the_games_in_order():
    shards = plan_shards(120, 50)
    assert [(s.index, s.start, s.games) for s in shards] == [(0, 0, 50), (1, 50, 50), (2, 100, 20)]
    with pytest.raises(TD2048Error):
        plan_shards(10, 0)


def test_a_shard_plays_its_games_of_the_run(network):
    shard = plan_shards(30, 10)[2]
    result = play_shard(network, GREEDY, 5, shard)
    scores, codes, moves = (np.zeros(30, np.int64) for _ in range(3))
    Agent(network, GREEDY, 5).play_into(scores, codes, moves)
    assert np.array_equal(result.scores, scores[20:]) and np.array_equal(result.moves, moves[20:])
    assert np.array_equal(result.max_codes, codes[20:])


@pytest.mark.parametrize("search", [GREEDY, DEPTH2], ids=["depth1", "depth2"])
def test_sharded_results_do_not_depend_on_threads(network, search):
    one = play_sharded(network, search, 45, seed=11, shard_size=10, threads=1)
    two = play_sharded(network, search, 45, seed=11, shard_size=10, threads=2)
    same_results(one, two)
    assert one.stats.games == 45 and one.shards == 5
    assert one.stats.avg != play_sharded(network, search, 45, seed=12, shard_size=10).stats.avg


def test_sharded_records_are_the_games_in_order(network):
    one = play_sharded(network, GREEDY, 25, seed=2, shard_size=10, names=("p", "e"))
    two = play_sharded(network, GREEDY, 25, seed=2, shard_size=10, threads=2, names=("p", "e"))
    plain = play_sharded(network, GREEDY, 25, seed=2, shard_size=10)
    assert len(one.records) == 25 and without_times(one.records) == without_times(two.records)
    same_results(one, plain)  # at depth 1 recording plays the same games


def test_the_object_stores_read_only_weights_are_shared_not_copied():
    weights = np.arange(100, dtype=np.float32)
    weights.flags.writeable = False
    view = _shared_writable(weights)
    assert view.flags.writeable and np.shares_memory(view, weights) and np.array_equal(view, weights)


def test_without_ray_the_command_says_how_to_get_it(model, cli_env):
    code = ("import sys; sys.modules['ray'] = None; from td2048.cli.__main__ import main; "
            f"sys.exit(main(['eval', {str(model)!r}, '--ray', '--games', '5']))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=cli_env, timeout=300)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and "pip install 'td2048[ray]'" in r.stderr


# ------------------------------------------------------------------------------------- the cluster

@pytest.mark.parametrize("search", [GREEDY, DEPTH2], ids=["depth1", "depth2"])
def test_ray_plays_the_same_games_as_the_local_shards(network, search, cluster):
    seen = []
    on_ray = play_on_ray(network, search, 70, seed=4, shard_size=10, on_progress=seen.append)
    local = play_sharded(network, search, 70, seed=4, shard_size=10)
    same_results(on_ray, local)
    assert seen[-1] == 70 and seen == sorted(seen) and len(seen) == 7
    assert sum(on_ray.nodes.values()) == 7


def test_ray_records_are_the_local_records(network, cluster):
    on_ray = play_on_ray(network, DEPTH2, 12, seed=9, shard_size=5, names=("td2048", "random"))
    local = play_sharded(network, DEPTH2, 12, seed=9, shard_size=5, names=("td2048", "random"))
    assert without_times(on_ray.records) == without_times(local.records)
    same_results(on_ray, local)


def shard_workers() -> list:
    """This test's Ray workers that are running a shard now: descendants of this process (the cluster's nodes
    are its children) whose title Ray has set to the task's name."""
    found = []
    for proc in psutil.Process().children(recursive=True):
        try:
            if proc.cmdline()[:1] and proc.cmdline()[0].startswith("ray::ray_shard"):
                found.append(proc)
        except psutil.Error:  # ended meanwhile
            continue
    return found


def kill_a_shard_worker_during(job):
    """Run ``job()`` on a thread and meanwhile SIGKILL, from outside, the first worker seen running a shard, as
    a crash or the kernel's OOM killer would. Returns (job's result or the exception it raised, the killed
    process)."""
    outcome = []

    def run():
        try:
            outcome.append(job())
        except Exception as error:  # noqa: BLE001 - the caller looks at it
            outcome.append(error)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 300  # progress, not speed: only a hung task takes this long
    killed = None
    while killed is None and thread.is_alive() and time.monotonic() < deadline:
        workers = shard_workers()
        if workers:
            killed = workers[0]
            killed.send_signal(signal.SIGKILL)
        else:
            time.sleep(0.002)
    thread.join(300)
    assert killed is not None, "no worker was seen running a shard: make the shards longer"
    assert not thread.is_alive() and outcome
    killed.wait(60)
    return outcome[0], killed


# Shards of 20,000 greedy games (about a second each): the kill lands in the middle of one.
LONG_SHARD = 20_000


def test_a_worker_killed_mid_shard_loses_and_doubles_nothing(network, cluster):
    on_ray, killed = kill_a_shard_worker_during(
        lambda: play_on_ray(network, GREEDY, 3 * LONG_SHARD, seed=6, shard_size=LONG_SHARD))
    assert not killed.is_running()
    assert not isinstance(on_ray, Exception), on_ray  # the killed shard ran again on another worker
    same_results(on_ray, play_sharded(network, GREEDY, 3 * LONG_SHARD, seed=6, shard_size=LONG_SHARD))


def test_a_shard_whose_worker_dies_with_no_retry_left_fails_in_one_line(network, cluster):
    error, killed = kill_a_shard_worker_during(
        lambda: play_on_ray(network, GREEDY, 3 * LONG_SHARD, seed=6, shard_size=3 * LONG_SHARD, retries=0))
    assert isinstance(error, TD2048Error) and "a shard failed on Ray" in str(error) and "\n" not in str(error)


# ------------------------------------------------------------------------------------ the command

def test_eval_ray_matches_eval_shard_size(model, tmp_path, cli_env, cluster):
    """The command on the cluster: the same statistics and records as on one machine. (A command that starts
    a local Ray instance of its own: the sweep's test below; both go through connect_ray.)"""
    on_ray = td2048("eval", model, "--ray", cluster.address, "--games", 40, "--seed", 1, "--json",
                    "--record", tmp_path / "r", env=cli_env)
    local = td2048("eval", model, "--shard-size", 50, "--games", 40, "--seed", 1, "--json",
                   "--record", tmp_path / "l", env=cli_env)
    assert on_ray.returncode == 0 and local.returncode == 0, on_ray.stderr + local.stderr
    assert on_ray.stderr == ""  # Ray's logs stay off the user's terminal
    a, b = json.loads(on_ray.stdout), json.loads(local.stdout)
    assert a.pop("ray") == {"address": cluster.address, "nodes": 1}
    for out in (a, b):
        out.pop("seconds"), out.pop("moves_per_s")
    assert a == b and a["games"] == 40 and a["shards"] == 1 and a["seed"] == 1
    records = [without_times((tmp_path / name).read_text().splitlines()) for name in "rl"]
    assert records[0] == records[1] and len(records[0]) == 40


# what says how the games were split and how long they took: the rest of --json is the games' alone
HOW_SPLIT = ("seconds", "moves_per_s", "threads", "shard_size", "shards", "ray")


def test_eval_is_the_same_on_one_thread_two_threads_shards_and_ray(model, tmp_path, cli_env, cluster):
    """The command, four ways, at depth 2 with a transposition table: one --json but for the seconds and the
    split, and the same records in game order (each game from its own seed and with a table of its own)."""
    ways = {"one": (), "two": ("--threads", 2), "shards": ("--shard-size", 7),
            "ray": ("--ray", cluster.address, "--shard-size", 4)}
    outs, records = {}, {}
    for name, args in ways.items():
        command = ("eval", model, "--games", 30, "--depth", 2, "--tt-size", "1MiB", "--seed", 3, "--json",
                   "--record", tmp_path / name, *args)
        r = td2048(*command, env=cli_env)
        if name == "ray" and r.returncode < 0:
            # the driver died of a signal with nothing printed (once in CI: SIGSEGV, before the results, where no
            # compiled code of ours runs in it): said here, with its stack, and run once more
            warnings.warn(f"td2048 eval --ray died of signal {-r.returncode}; run again. "
                          f"Its stderr: {r.stderr[-3000:]}", stacklevel=1)
            r = td2048(*command, env=cli_env)
        assert r.returncode == 0, r.stderr
        outs[name] = {k: v for k, v in json.loads(r.stdout).items() if k not in HOW_SPLIT}
        records[name] = without_times((tmp_path / name).read_text().splitlines())
    assert outs["one"]["games"] == 30 and outs["one"]["seed"] == 3 and outs["one"]["search_counts"]["tt_hits"] > 0
    assert outs["one"] == outs["two"] == outs["shards"] == outs["ray"]
    assert len(records["one"]) == 30 and records["one"] == records["two"] == records["shards"] == records["ray"]


def test_shards_run_on_the_second_node_with_the_model(network, cluster):
    driver_node, second = ray.get_runtime_context().get_node_id(), cluster.second_node_id
    on_ray = play_on_ray(network, DEPTH2, 30, seed=3, shard_size=5, resources={"second": 1})
    assert set(on_ray.nodes) == {second} and second != driver_node and on_ray.nodes[second] == 6
    same_results(on_ray, play_sharded(network, DEPTH2, 30, seed=3, shard_size=5))  # the weights reached it whole


# ------------------------------------------------------------------------------------------ a sweep

def untimed(line: str) -> dict:
    return {k: v for k, v in json.loads(line).items() if k not in ("seconds", "moves_per_s")}


def test_a_sweep_stopped_with_ctrl_c_continues_on_two_nodes_and_is_done(tmp_path, cli_env, cluster):
    """Ctrl-C (SIGINT to the sweep's process group, Ray's processes included: a new local instance started by
    the command) once a trial has logged a block; the same command, on the two-node cluster, then finishes the
    sweep, each trial from its last snapshot (a block logged after it is played again, the same bit for bit);
    run once more, it trains nothing."""
    sweep, out = write(tmp_path, TINY), tmp_path / "out"
    proc = start_td2048("sweep", sweep, "--out", out, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                        env=cli_env, start_new_session=True)
    deadline = time.monotonic() + 300  # progress, not speed: only a hung sweep takes this long

    def logged():
        return {run.name: (run / "log.jsonl").read_text().splitlines() for run in (out / "runs").glob("*")
                if (run / "log.jsonl").exists()}

    while not any(logged().values()):
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGINT)
    stopped, err = proc.communicate(timeout=300)
    assert "Traceback" not in err, err
    assert "unfinished" in stopped and f"# stopped before the end; continue with: td2048 sweep {sweep} --out {out}" \
        in stopped, stopped
    before = logged()
    assert sum(map(len, before.values())) < 6  # stopped before the end
    assert not (out / "sweep.json").exists()  # not finished: the next run goes on through Tune

    # continued on the cluster, whose head has no CPU: the trials can only run on the second node
    r = td2048("sweep", sweep, "--out", out, "--ray", cluster.address, env=cli_env)
    finished = {run: (run / "log.jsonl").read_text() for run in (out / "runs").iterdir()}
    # finished: trains nothing, and needs no Ray (from the summary; nothing listens at that address)
    again = td2048("sweep", sweep, "--out", out, "--ray", "127.0.0.1:1", env=cli_env)
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
    assert json.loads((out / "sweep.json").read_text())["trials"][0]["directory"] == lines[1].split()[-1]
    assert again.stdout == r.stdout and {run: (run / "log.jsonl").read_text() for run in runs} == finished
