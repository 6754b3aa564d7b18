"""Evaluation in shards (td2048.distributed), locally and on real Ray clusters: one node with 2 CPUs,
two nodes on this machine, a worker killed in the middle of a shard, and ``td2048 eval --ray``."""

import json
import logging
import os
import re
import subprocess
import sys

import numpy as np
import pytest
from test_state_values import random_weights

from td2048.distributed import (
    _shared_writable,
    plan_shards,
    play_on_ray,
    play_shard,
    play_sharded,
    shard_seed,
)
from td2048.errors import TD2048Error
from td2048.io.model import save_model
from td2048.network import Network, parse_network
from td2048.play import Agent, Search

ray = pytest.importorskip("ray")

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
def local_ray():
    """A local Ray instance of 2 CPUs for the module's tests (the two-node test replaces it)."""
    ray.init(num_cpus=2, include_dashboard=False, logging_level=logging.ERROR, log_to_driver=False)
    yield
    ray.shutdown()


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


def test_a_shards_seed_depends_on_the_run_seed_and_its_number_only():
    state = shard_seed(7, 3).generate_state(4)
    assert np.array_equal(state, np.random.SeedSequence(7).spawn(10)[3].generate_state(4))
    assert np.array_equal(state, np.random.SeedSequence(7).spawn(4)[3].generate_state(4))
    assert not np.array_equal(state, shard_seed(7, 2).generate_state(4))
    assert not np.array_equal(state, shard_seed(8, 3).generate_state(4))


def test_a_shard_plays_the_games_of_an_agent_with_its_seed(network):
    shard = plan_shards(30, 10)[2]
    result = play_shard(network, GREEDY, 5, shard)
    stats = Agent(network, GREEDY, shard_seed(5, 2)).play(10)
    assert (len(result.scores), int(result.scores.max()), int(result.moves.sum())) == (10, stats.max, stats.moves)
    assert float(result.scores.mean()) == stats.avg


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


# --------------------------------------------------------------------------------- one node, 2 CPUs

@pytest.mark.parametrize("search", [GREEDY, DEPTH2], ids=["depth1", "depth2"])
def test_ray_plays_the_same_games_as_the_local_shards(network, search, local_ray):
    seen = []
    on_ray = play_on_ray(network, search, 70, seed=4, shard_size=10, on_progress=seen.append)
    local = play_sharded(network, search, 70, seed=4, shard_size=10)
    same_results(on_ray, local)
    assert seen[-1] == 70 and seen == sorted(seen) and len(seen) == 7
    assert sum(on_ray.nodes.values()) == 7


def test_ray_records_are_the_local_records(network, local_ray):
    on_ray = play_on_ray(network, DEPTH2, 12, seed=9, shard_size=5, names=("td2048", "random"))
    local = play_sharded(network, DEPTH2, 12, seed=9, shard_size=5, names=("td2048", "random"))
    assert without_times(on_ray.records) == without_times(local.records)
    same_results(on_ray, local)


def test_a_worker_killed_mid_shard_loses_and_doubles_nothing(network, local_ray, tmp_path, monkeypatch):
    marker = tmp_path / "killed"
    monkeypatch.setenv("TD2048_TEST_KILL_SHARD", str(marker))
    on_ray = play_on_ray(network, GREEDY, 60, seed=6, shard_size=10)
    assert marker.exists()  # a worker did die (os._exit in its shard), and its shard ran again
    local = play_sharded(network, GREEDY, 60, seed=6, shard_size=10)
    same_results(on_ray, local)


def test_a_shard_whose_worker_dies_with_no_retry_left_fails_in_one_line(network, local_ray, tmp_path, monkeypatch):
    marker = tmp_path / "killed"
    monkeypatch.setenv("TD2048_TEST_KILL_SHARD", str(marker))
    with pytest.raises(TD2048Error, match="a shard failed on Ray"):
        play_on_ray(network, GREEDY, 10, seed=6, shard_size=10, retries=0)


# ------------------------------------------------------------------------------------ the command

def td2048(env, *args):
    return subprocess.run([sys.executable, "-m", "td2048.cli", *map(str, args)], capture_output=True, text=True,
                          env=env, timeout=600)


def test_eval_ray_matches_eval_shard_size(model, tmp_path, cli_env):
    """A new local Ray instance started by the command; the same statistics and records as one machine."""
    on_ray = td2048(cli_env, "eval", model, "--ray", "--games", 40, "--seed", 1, "--json", "--record", tmp_path / "r")
    local = td2048(cli_env, "eval", model, "--shard-size", 50, "--games", 40, "--seed", 1, "--json",
                   "--record", tmp_path / "l")
    assert on_ray.returncode == 0 and local.returncode == 0, on_ray.stderr + local.stderr
    assert on_ray.stderr == ""  # Ray's logs stay off the user's terminal
    a, b = json.loads(on_ray.stdout), json.loads(local.stdout)
    assert a.pop("ray") == {"address": "local", "nodes": 1}
    for out in (a, b):
        out.pop("seconds"), out.pop("moves_per_s")
    assert a == b and a["games"] == 40 and a["shards"] == 1 and a["seed"] == 1
    records = [without_times((tmp_path / name).read_text().splitlines()) for name in "rl"]
    assert records[0] == records[1] and len(records[0]) == 40


# -------------------------------------------------------------------------- two nodes on this machine

@pytest.fixture
def two_nodes(local_ray):
    """A head node with no CPU for tasks and a second node with 2 CPUs and the resource ``second``."""
    from ray.cluster_utils import Cluster

    ray.shutdown()
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0, "include_dashboard": False})
    second = cluster.add_node(num_cpus=2, resources={"second": 2})
    ray.init(address=cluster.address, logging_level=logging.ERROR, log_to_driver=False)
    yield second.node_id
    ray.shutdown()
    cluster.shutdown()


def test_shards_run_on_the_second_node_with_the_model(network, two_nodes):
    driver_node = ray.get_runtime_context().get_node_id()
    on_ray = play_on_ray(network, DEPTH2, 30, seed=3, shard_size=5, resources={"second": 1})
    assert set(on_ray.nodes) == {two_nodes} and two_nodes != driver_node and on_ray.nodes[two_nodes] == 6
    same_results(on_ray, play_sharded(network, DEPTH2, 30, seed=3, shard_size=5))  # the weights reached it whole
    assert os.environ.get("TD2048_TEST_KILL_SHARD") is None
