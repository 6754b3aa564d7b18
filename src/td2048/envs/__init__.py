"""Gymnasium environments of 2048 and 2584, registered for ``gymnasium.make`` once both td2048
and Gymnasium are imported, in either order::

    import gymnasium as gym
    import td2048  # noqa: F401

    env = gym.make("td2048/2048-v0")                      # one game
    envs = gym.make_vec("td2048/2048-v0", num_envs=4096)  # thousands, one compiled call a step
    small = gym.make("td2048/2048-v0", size=3)            # on the 3x3 board; size=(2, 4): 2 rows of 4

``import td2048`` does not import Gymnasium itself (a third of the CLI's start-up time): a
post-import hook registers the environments when Gymnasium is imported. (``wrapt`` has such
hooks, but importing it costs about half as much as Gymnasium.) The classes' docstrings
(:class:`~td2048.envs.game_env.TileGameEnv`, :class:`~td2048.envs.game_env.TileGameVectorEnv`)
specify observations, actions, rewards and the ends of games; ``TileGameSB3VecEnv``
(:mod:`td2048.envs.sb3`) is the same boards behind Stable-Baselines3's ``VecEnv``.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys

ENV_IDS = {"2048": "td2048/2048-v0", "2584": "td2048/2584-v0"}


def register() -> None:
    """Register both games with Gymnasium (again is harmless: the first registration stays)."""
    import gymnasium as gym

    for game, env_id in ENV_IDS.items():
        if env_id not in gym.registry:  # classes by name: they load at make (this may run while they import)
            gym.register(env_id, entry_point="td2048.envs.game_env:TileGameEnv",
                         vector_entry_point="td2048.envs.game_env:TileGameVectorEnv", kwargs={"game": game})


class _CallAfter(importlib.abc.Loader):
    """A module's own loader, then a callback once the module has run."""

    def __init__(self, loader, callback):
        self.loader, self.callback = loader, callback

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        self.loader.exec_module(module)
        module.__loader__ = self.loader
        self.callback()

    def __getattr__(self, name):  # anything else a loader offers (resources, source)
        return getattr(self.loader, name)


class _AfterImport(importlib.abc.MetaPathFinder):
    """Finds ``name`` with the other finders and calls ``callback`` once it is imported."""

    def __init__(self, name, callback):
        self.name, self.callback = name, callback

    def find_spec(self, fullname, path=None, target=None):
        if fullname != self.name:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)
        if spec is not None and spec.loader is not None:
            spec.loader = _CallAfter(spec.loader, self.callback)
        return spec


def register_when_imported() -> None:
    """Register now if Gymnasium is loaded, else as soon as it is."""
    if "gymnasium" in sys.modules:
        register()
    elif not any(isinstance(f, _AfterImport) for f in sys.meta_path):
        sys.meta_path.insert(0, _AfterImport("gymnasium", register))


def __getattr__(name):  # the environment classes import Gymnasium (and SB3): only when asked for
    if name in ("TileGameEnv", "TileGameVectorEnv"):
        from td2048.envs import game_env

        return getattr(game_env, name)
    if name == "TileGameSB3VecEnv":
        from td2048.envs import sb3

        return sb3.TileGameSB3VecEnv
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["ENV_IDS", "TileGameEnv", "TileGameSB3VecEnv", "TileGameVectorEnv", "register", "register_when_imported"]
