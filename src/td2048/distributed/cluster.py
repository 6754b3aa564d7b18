"""Reaching Ray: importing it (an optional dependency), connecting to a cluster, the workers' environment.

Ray is installed with ``pip install 'td2048[ray]'`` and imported only when a command uses it. The
kernel caches named on the driver (``TD2048_CACHE_DIR``, ``NUMBA_CACHE_DIR``, ``XDG_CACHE_HOME``)
follow it to the workers, so that each node compiles a network once.
"""

from __future__ import annotations

import logging
import os

from td2048.errors import TD2048Error

REACH_SECONDS = 5  # a cluster address that does not answer a TCP connection within this is an error
RAY_MISSING = "--ray needs Ray, which is not installed: pip install 'td2048[ray]'"
# environment variables that follow the driver to the workers (the kernel caches)
FORWARDED_ENV = ("TD2048_CACHE_DIR", "NUMBA_CACHE_DIR", "XDG_CACHE_HOME")


def import_ray():
    """The ``ray`` module.

    Returns
    -------
    module
        ``ray``.

    Raises
    ------
    TD2048Error
        One line saying how to install it, when it is not installed.
    """
    try:
        import ray
    except ImportError:
        raise TD2048Error(RAY_MISSING) from None
    return ray


def forwarded_env() -> dict[str, str]:
    """The driver's variables that the workers need, for Ray's ``runtime_env``.

    Returns
    -------
    dict of str to str
        Each variable of :data:`FORWARDED_ENV` that is set, with its value.
    """
    return {name: os.environ[name] for name in FORWARDED_ENV if os.environ.get(name)}


def connect_ray(address: str | None = None, num_cpus: int | None = None) -> bool:
    """Connect to a Ray cluster, or start a local one, quietly.

    Parameters
    ----------
    address : str or None
        The cluster's address (``"auto"``: the one this machine belongs to, ``host:6379``,
        ``ray://host:10001``); None: start a local instance.
    num_cpus : int or None
        A local instance's CPUs; None: all.

    Returns
    -------
    bool
        True when this call connected (the caller then disconnects with ``ray.shutdown()``), False when
        this process was connected already.

    Raises
    ------
    TD2048Error
        Ray is not installed, or cannot be reached or started (one line).
    """
    ray = import_ray()
    if ray.is_initialized():
        return False
    _check_reachable(address)
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # no usage-statistics notice
    os.environ.setdefault("RAY_DEDUP_LOGS", "0")
    options = {"address": address or "local", "logging_level": logging.ERROR, "log_to_driver": False,
               "configure_logging": True, "runtime_env": {"env_vars": forwarded_env()}}
    if address is None:
        options.update(num_cpus=num_cpus, include_dashboard=False)
    try:
        ray.init(**options)
    except (ConnectionError, RuntimeError, ValueError) as e:
        raise TD2048Error(f"cannot connect to Ray at {address or 'a new local instance'}: "
                          f"{str(e).splitlines()[0] if str(e) else type(e).__name__}") from None
    return True


def _check_reachable(address: str | None) -> None:
    """A ``host:port`` (or ``ray://host:port``) that nothing answers at is one line now, not minutes of Ray's
    retries: a TCP connection is tried first, for a few seconds."""
    import socket

    if not address or address in ("auto", "local"):
        return
    hostport = address.split("://", 1)[-1]
    host, _, port = hostport.rpartition(":")
    if not host or not port.isdigit():
        return  # Ray says what is wrong with it
    try:
        socket.create_connection((host, int(port)), timeout=REACH_SECONDS).close()
    except OSError as e:
        raise TD2048Error(f"cannot connect to Ray at {address}: {e.strerror or e} (is the cluster up? "
                          "`ray start --head` starts one)") from None


__all__ = ["FORWARDED_ENV", "RAY_MISSING", "connect_ray", "forwarded_env", "import_ray"]
