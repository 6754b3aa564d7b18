"""Explicit random state for kernels: xoshiro256** on a ``uint64[4]`` array.

No kernel touches a global generator: the state goes in as an array and comes back
advanced, so a run is reproducible from its seed and the state can be saved with a run.
Threads each get a state of their own, from one seed (:func:`thread_rng_states`), each on cache
lines of its own (:func:`thread_rng_rows`): the learner and the agent hold them the same way.
"""

import numpy as np

from td2048.config import njit

U64 = np.uint64


def make_rng_state(seed: int | np.random.SeedSequence | None) -> np.ndarray:
    """A fresh ``uint64[4]`` state from a seed or a spawned ``SeedSequence`` (``None``: fresh entropy)."""
    seq = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    state = seq.generate_state(4, dtype=np.uint64)
    if not state.any():  # the all-zero state is the one fixed point of xoshiro
        state[0] = 1
    return state


RNG_STRIDE = 16  # uint64s per thread's row of random state: 128 bytes, two cache lines of its own


def thread_rng_states(seed: int | np.random.SeedSequence | None, threads: int) -> np.ndarray:
    """The random states of ``threads`` threads from one seed (all seeding of threads goes through here).

    Parameters
    ----------
    seed : int, numpy.random.SeedSequence or None
        The seed; None: fresh entropy.
    threads : int
        How many states.

    Returns
    -------
    numpy.ndarray
        ``uint64[threads, 4]``: one thread's state is the seed's; more are ``SeedSequence(seed).spawn(threads)``.
    """
    children = np.random.SeedSequence(seed).spawn(threads) if threads > 1 else [seed]
    return np.stack([make_rng_state(child) for child in children])


def thread_rng_rows(states: np.ndarray) -> np.ndarray:
    """The threads' states, each on cache lines of its own.

    A state is written on every move: two threads' states in one 64-byte line would cost more than
    the second thread gains (false sharing). So each state starts a row of :data:`RNG_STRIDE` words.

    Parameters
    ----------
    states : numpy.ndarray
        ``uint64[threads, 4]`` (or anything that reshapes to it).

    Returns
    -------
    numpy.ndarray
        ``uint64[threads, RNG_STRIDE]``, thread t's state in ``[t, :4]`` (the view the kernels take).
    """
    states = np.asarray(states, dtype=np.uint64).reshape(-1, 4)
    rows = np.zeros((states.shape[0], RNG_STRIDE), np.uint64)
    rows[:, :4] = states
    return rows


# literal constants as globals: Numba takes them as compile-time constants, while each U64(...)
# call is typed again wherever an inlined function lands (a large share of compile time)
_U11 = U64(11)
_U17 = U64(17)
_U32 = U64(32)
_U5 = U64(5)
_U9 = U64(9)


@njit(inline="always")
def _rotl(x, k):
    return (x << U64(k)) | (x >> U64(64 - k))


@njit(inline="always")
def next_u64(s):
    """Next 64 random bits; advances ``s`` in place."""
    result = _rotl(s[1] * _U5, 7) * _U9
    t = s[1] << _U17
    s[2] ^= s[0]
    s[3] ^= s[1]
    s[1] ^= s[2]
    s[0] ^= s[3]
    s[2] ^= t
    s[3] = _rotl(s[3], 45)
    return result


@njit(inline="always")
def below(s, n):
    """Uniform integer in ``0..n-1`` (Lemire's multiply-shift on 32 bits; n <= 2**32)."""
    r = next_u64(s) >> _U32
    return np.int64((r * U64(n)) >> _U32)


@njit(inline="always")
def uniform(s):
    """Uniform float in [0, 1) with 53 random bits."""
    return np.float64(next_u64(s) >> _U11) * (1.0 / 9007199254740992.0)
