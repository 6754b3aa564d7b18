"""Gymnasium environments of 2048 and 2584, registered when td2048 is imported::

    import gymnasium as gym
    import td2048  # noqa: F401  (registers td2048/2048-v0 and td2048/2584-v0)

    env = gym.make("td2048/2048-v0")                   # one game
    envs = gym.make_vec("td2048/2048-v0", num_envs=4096)  # thousands, one compiled call a step

See :mod:`td2048.envs.game_env` for observations, actions, rewards and the choices made.
"""

from __future__ import annotations

import gymnasium as gym

from td2048.envs.game_env import TileGameEnv, TileGameVectorEnv

ENV_IDS = {"2048": "td2048/2048-v0", "2584": "td2048/2584-v0"}


def register() -> None:
    """Register both games (again is harmless: Gymnasium keeps the first registration)."""
    for game, env_id in ENV_IDS.items():
        if env_id not in gym.registry:
            gym.register(env_id, entry_point=TileGameEnv, vector_entry_point=TileGameVectorEnv,
                         kwargs={"game": game})


__all__ = ["ENV_IDS", "TileGameEnv", "TileGameVectorEnv", "register"]
