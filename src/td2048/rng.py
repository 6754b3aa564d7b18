"""Explicit random state for kernels: xoshiro256** on a ``uint64[4]`` array.

No kernel touches a global generator: the state goes in as an array and comes back
advanced, so a run is reproducible from its seed and the state can be saved with a run.
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
