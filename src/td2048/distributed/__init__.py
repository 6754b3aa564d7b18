"""Playing and training beyond one process: one module per job.

    shards.py     evaluation in shards, each game with a seed of its own: the same games on any
                  number of threads, workers or nodes (no Ray)
    ray_eval.py   the same shards played as Ray tasks (``td2048 eval --ray``)
    ray_train.py  one training run across Ray workers (``td2048 train --ray``): the driver and its syncs
    ray_worker.py the worker actor that learns on its threads, and the merge of the workers' changes
    sweep.py      grid and random sweeps of training runs on Ray Tune (``td2048 sweep``)
    cluster.py    importing Ray, connecting to a cluster, the environment the workers get

Ray is an optional dependency (``pip install 'td2048[ray]'``), imported only when a job uses it;
importing this package or any of its modules loads neither Ray nor compiled code.
"""

from td2048.distributed.cluster import connect_ray
from td2048.distributed.ray_eval import play_on_ray
from td2048.distributed.shards import (
    DEFAULT_SHARD_SIZE,
    Shard,
    ShardedRun,
    ShardResult,
    merge_shards,
    plan_shards,
    play_shard,
    play_sharded,
)
from td2048.distributed.sweep import SweepPlan, finished_sweep, load_sweep, run_sweep

__all__ = ["DEFAULT_SHARD_SIZE", "Shard", "ShardResult", "ShardedRun", "connect_ray", "merge_shards",
           "plan_shards", "play_on_ray", "play_shard", "play_sharded",
           "SweepPlan", "finished_sweep", "load_sweep", "run_sweep"]
