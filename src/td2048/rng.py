"""Explicit random state for kernels: xoshiro256** on a ``uint64[4]`` array.

No kernel touches a global generator: the state goes in as an array and comes back
advanced, so a run is reproducible from its seed and the state can be saved with a run.
Threads each get a state of their own, from one seed (:func:`thread_rng_states`), each on cache
lines of its own (:func:`thread_rng_rows`): the learner and the agent hold them the same way.

Games played without learning get a state of their own, from the run's seed and the game's index
alone (:func:`game_rng_states`), so that what a game is does not depend on which thread, shard or
node plays it::

    seed S, game i --SeedSequence(S, spawn_key=(i,)).generate_state(4, uint64)--> game i's state

(numpy's SeedSequence, computed in compiled code: a fraction of a microsecond a game).
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


def rounding_states(states: np.ndarray, spares: list[int] | None = None) -> np.ndarray:
    """Each thread's random word for rounding the updates of 16-bit weights (see td2048.kernels.features), on a
    cache line of its own, seeded from the thread's random state, so that a block's roundings follow from the
    state a run saves.

    Parameters
    ----------
    states : numpy.ndarray
        ``uint64[threads, >= 4]``: the threads' random states (:func:`thread_rng_rows`).
    spares : list of int or None
        Each thread's spare weight (:meth:`td2048.spec.NetworkSpec.spare_weights`), for the kernels of threads
        that write one table; None: 0.

    Returns
    -------
    numpy.ndarray
        ``uint64[threads, 8]``: word 0 of each row is the thread's random word, word 1 its spare weight (the
        others pad the line).
    """
    words = np.zeros((len(states), 8), np.uint64)
    words[:, 0] = states[:, 0] ^ (states[:, 1] * U64(0x9E3779B97F4A7C15))  # wraps, as in the kernels
    if spares is not None:
        words[:, 1] = spares
    return words


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


def _uint32_words(value) -> list[int]:
    """``value`` (an int >= 0, or a sequence of them) as SeedSequence reads it: little-endian 32-bit words,
    at least one per int."""
    if isinstance(value, (int, np.integer)):
        value = int(value)
        if value < 0:
            raise ValueError(f"a seed is an int >= 0, not {value}")
        words = [value & 0xFFFFFFFF]
        value >>= 32
        while value:
            words.append(value & 0xFFFFFFFF)
            value >>= 32
        return words
    return [w for v in value for w in _uint32_words(v)]


def seed_words(seed: int | np.random.SeedSequence) -> np.ndarray:
    """What :func:`game_rng_states` needs of a seed: the words of SeedSequence's entropy before a game's index.

    Parameters
    ----------
    seed : int or numpy.random.SeedSequence
        The run's seed (a SeedSequence: its entropy and spawn key; game i is then its child ``spawn_key + (i,)``).

    Returns
    -------
    numpy.ndarray
        ``uint64[n]`` holding 32-bit words: the seed's entropy padded to SeedSequence's pool of 4 words, then its
        spawn key's words.
    """
    entropy, key = (seed.entropy, tuple(seed.spawn_key)) if isinstance(seed, np.random.SeedSequence) else (seed, ())
    words = _uint32_words(entropy)
    words += [0] * (_POOL - len(words))  # SeedSequence pads the entropy so when a spawn key follows
    return np.array(words + _uint32_words(key), np.uint64)


def game_rng_states(seed: int | np.random.SeedSequence, first: int, count: int) -> np.ndarray:
    """The first random states of games ``first .. first + count - 1`` of a run (all seeding of games goes through
    here).

    Game i's state is ``make_rng_state(SeedSequence(seed, spawn_key=(i,)))``: it depends on the seed and i
    alone, so the games are the same whoever plays them, in whatever order or split.

    Parameters
    ----------
    seed : int, numpy.random.SeedSequence or numpy.ndarray
        The run's seed, or its :func:`seed_words` (computed once by callers that ask often).
    first : int
        The index of the first game.
    count : int
        How many games.

    Returns
    -------
    numpy.ndarray
        ``uint64[count, 4]``, game ``first + k``'s state in row k.
    """
    words = seed if isinstance(seed, np.ndarray) else seed_words(seed)
    out = np.empty((count, 4), np.uint64)
    _spawned_states(words, first, out)
    return out


# numpy's SeedSequence (numpy/random/bit_generator.pyx), in 64-bit arithmetic masked to 32 bits
_POOL = 4
_M32 = U64(0xFFFFFFFF)
_INIT_A = U64(0x43B0D7E5)
_MULT_A = U64(0x931E8875)
_INIT_B = U64(0x8B51F9DD)
_MULT_B = U64(0x58F38DED)
_MIX_L = U64(0xCA01F9DD)
_MIX_R = U64(0x4973F715)
_U16 = U64(16)


@njit(inline="always")
def _hashmix(value, hash_const):
    value = value ^ hash_const
    hash_const = (hash_const * _MULT_A) & _M32
    value = (value * hash_const) & _M32
    return value ^ (value >> _U16), hash_const


@njit(inline="always")
def _mix(x, y):
    result = (_MIX_L * x - _MIX_R * y) & _M32
    return result ^ (result >> _U16)


@njit
def _spawned_states(words, first, out):
    """out[k] = the xoshiro state of SeedSequence(entropy ``words`` + the words of index first + k)."""
    n = words.shape[0]
    entropy = np.zeros(n + 2, np.uint64)
    for i in range(n):  # not a slice assignment: that compiles Numba's shape-mismatch error (seconds)
        entropy[i] = words[i]
    pool = np.zeros(_POOL, np.uint64)
    for k in range(out.shape[0]):
        index = U64(first + k)
        entropy[n] = index & _M32
        length = n + 1
        if index >> _U32:
            entropy[n + 1] = index >> _U32
            length = n + 2
        hash_const = _INIT_A
        for i in range(_POOL):
            pool[i], hash_const = _hashmix(entropy[i] if i < length else U64(0), hash_const)
        for src in range(_POOL):
            for dst in range(_POOL):
                if src != dst:
                    h, hash_const = _hashmix(pool[src], hash_const)
                    pool[dst] = _mix(pool[dst], h)
        for src in range(_POOL, length):
            for dst in range(_POOL):
                h, hash_const = _hashmix(entropy[src], hash_const)
                pool[dst] = _mix(pool[dst], h)
        hash_const = _INIT_B
        nonzero = False
        for i in range(8):  # generate_state(4, uint64): 8 words, two to a uint64, low word first
            value = pool[i % _POOL] ^ hash_const
            hash_const = (hash_const * _MULT_B) & _M32
            value = (value * hash_const) & _M32
            value ^= value >> _U16
            if i % 2 == 0:
                out[k, i // 2] = value
            else:
                out[k, i // 2] |= value << _U32
                nonzero = nonzero or out[k, i // 2] != U64(0)
        if not nonzero:  # as make_rng_state: the all-zero state is xoshiro's fixed point
            out[k, 0] = U64(1)
