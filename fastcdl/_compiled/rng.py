"""xoshiro256** (Blackman and Vigna), the generator of every forecaster and adversary.

Each forecaster and adversary owns its state, a uint64 array of length 4, so interleaved
objects never share a stream (numba's global np.random state would). The compiled
simulate loops and the per-round Python API call these same functions on the same state
arrays, which is what makes the two paths give identical runs.
"""

import numpy as np
from fastcdl._compiled._jit import kernel

_U5 = np.uint64(5)
_U9 = np.uint64(9)
_U17 = np.uint64(17)
_U45 = np.uint64(45)
_U7 = np.uint64(7)
_U11 = np.uint64(11)
_U64 = np.uint64(64)
_TWO_M53 = 2.0**-53


@kernel
def _rotl(x, k):
    return (x << k) | (x >> (_U64 - k))


@kernel
def next_u64(state):
    """Advance the state in place and return the next 64-bit output."""
    s0 = state[0]
    s1 = state[1]
    s2 = state[2]
    s3 = state[3]
    result = _rotl(s1 * _U5, _U7) * _U9
    t = s1 << _U17
    s2 ^= s0
    s3 ^= s1
    s1 ^= s2
    s0 ^= s3
    s2 ^= t
    s3 = _rotl(s3, _U45)
    state[0] = s0
    state[1] = s1
    state[2] = s2
    state[3] = s3
    return result


@kernel
def uniform(state):
    """A uniform double in [0, 1): the top 53 bits of the next output times 2^-53.

    Parameters
    ----------
    state : ndarray of uint64, shape (4,)
        A generator's state (the ``rng`` an adversary receives), advanced in place.

    Returns
    -------
    float

    Examples
    --------
    >>> u = uniform(seed_states(0)[1])
    >>> 0.0 <= u < 1.0
    True
    """
    return np.float64(next_u64(state) >> _U11) * _TWO_M53


def seed_states(seed):
    """(forecaster state, adversary state): two independent child streams of SeedSequence(seed).

    Parameters
    ----------
    seed : int
        The run's seed.

    Returns
    -------
    forecaster, adversary : ndarray of uint64, shape (4,)
        Generator states for :func:`uniform`.

    Examples
    --------
    >>> f, a = seed_states(0)
    >>> f.shape, bool((f != a).any())
    ((4,), True)
    """
    children = np.random.SeedSequence(seed).spawn(2)
    states = []
    for child in children:
        st = child.generate_state(4, dtype=np.uint64)
        if not st.any():  # the one state xoshiro cannot leave; probability 2^-256
            st[0] = np.uint64(1)
        states.append(np.ascontiguousarray(st))
    return states[0], states[1]
