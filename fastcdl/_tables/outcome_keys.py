"""Sorted outcome keys of rounds (p's bits, then y): the sort behind every exact bucket table.

Below _RADIX_FROM rounds numpy sorts them; from there on, whichever of numpy's sort and the
radix sort is faster on this machine (measured once per process); from _PAIRED_SORT_FROM
rounds on, two halves are sorted side by side. Every path gives the same keys.
"""

from __future__ import annotations

import math
import time

import numba
import numpy as np

from fastcdl._parallel import pair, wake
from fastcdl._compiled import buckets as _kb
from fastcdl._compiled.sort import sort_keys_into

# From this many rounds on the outcome keys are sorted by whichever of numpy's sort and the radix
# sort (sort_keys_into) runs faster on this machine (numpy_sorts_faster); below, numpy sorts
# them and the radix kernel is never compiled. Which is faster depends on the CPU: the radix
# sort was 2.5-3.4x faster than numpy's on the Xeon of results/benchmarks/metrics.md, numpy's
# (its AVX-512 sort) 1.8-2.5x faster than the radix sort on the AMD EPYC (Zen 5) of
# results/benchmarks/bucket-speed.md, from 2^14 to 10^7 keys (one-off timings; docs/metrics.md).
_RADIX_FROM = 1 << 14
_SORT_TRIAL_KEYS = 1 << 16
_numpy_sorts_faster = None


def numpy_sorts_faster() -> bool:
    """Whether numpy's sort of outcome keys beats the radix sort here: both sort the same
    2^16 keys of random predictions three times, once per process, and the best times are
    compared (about 2 ms). Either sort gives the same keys, so the choice changes no result."""
    global _numpy_sorts_faster
    if _numpy_sorts_faster is None:
        rng = np.random.default_rng(0)
        p = rng.random(_SORT_TRIAL_KEYS)
        keys = np.empty(_SORT_TRIAL_KEYS, dtype=np.uint64)
        _kb.outcome_keys((rng.random(_SORT_TRIAL_KEYS) < p).view(np.uint8), p.view(np.uint64), keys)
        a, b = np.empty_like(keys), np.empty_like(keys)
        best = [math.inf, math.inf]
        for _ in range(3):
            for i in (0, 1):
                a[:] = keys
                t = time.perf_counter()
                if i == 0:
                    a.sort()
                else:
                    sort_keys_into(a, b)
                best[i] = min(best[i], time.perf_counter() - t)
        _numpy_sorts_faster = bool(best[0] < best[1])
    return _numpy_sorts_faster


_SIGN_OFF = np.uint64(0x7FFF_FFFF_FFFF_FFFF)
_ONE = np.uint64(1)


def outcome_keys_numpy(y, p_bits, keys):
    """fastcdl._compiled.buckets.outcome_keys in numpy, into ``keys``: the same keys (integer
    operations), for the inputs below _RADIX_FROM rounds, which then compile no kernel to build
    their table. Returns ``keys``."""
    np.bitwise_and(p_bits, _SIGN_OFF, out=keys)
    keys <<= _ONE
    keys |= y != 0
    return keys


def runs_of_sorted_keys(keys):
    """(q, n, s) of sorted outcome keys: the distinct predictions (float64), their rounds and
    their rounds with y = 1 (int64), as fastcdl._compiled.buckets.count_runs and runs_of_keys
    make them; in numpy below _RADIX_FROM keys (no compilation for a small input), by the
    kernels from there on. The same arrays either way. O(T)."""
    T = keys.shape[0]
    if T >= _RADIX_FROM:
        m = _kb.count_runs(keys)
        q, n, s = np.empty(m), np.empty(m, dtype=np.int64), np.empty(m, dtype=np.int64)
        _kb.runs_of_keys(keys, q.view(np.uint64), n, s)
        return q, n, s
    bits = keys >> _ONE
    first = np.empty(T, dtype=bool)
    first[:1] = True
    np.not_equal(bits[1:], bits[:-1], out=first[1:])
    starts = np.flatnonzero(first)
    q = bits[starts].view(np.float64)
    n = np.diff(starts, append=T).astype(np.int64, copy=False)
    s = np.add.reduceat((keys & _ONE).astype(np.int64), starts) if T else np.zeros(0, dtype=np.int64)
    return q, n, s


def sort_outcome_keys(keys, spare):
    """Sort outcome keys with numpy's sort or the radix sort, whichever is faster here
    (:func:`numpy_sorts_faster`); returns the buffer that holds them (keys or spare). Both
    release the GIL."""
    if numpy_sorts_faster():
        keys.sort()
        return keys
    return sort_keys_into(keys, spare)


# From this many rounds on the two halves of the keys are sorted side by side (see
# sorted_outcome_keys_and_spare); below, handing one over costs about what it saves.
_PAIRED_SORT_FROM = 1 << 16


def sorted_outcome_keys(y, p):
    """The rounds' outcome keys (p's bits, then y: fastcdl._compiled.buckets.outcome_keys),
    sorted: by prediction, then outcome. Checked rounds only. From _RADIX_FROM rounds on,
    the faster here of numpy's sort and the radix sort (O(T) passes), numpy's sort below. The kernels write into arrays numpy
    allocates (huge pages for large arrays, see outcome_keys)."""
    return sorted_outcome_keys_and_spare(y, p)[0]


def sorted_outcome_keys_and_spare(y, p):
    """(:func:`sorted_outcome_keys`, spare): the spare is an array as long, free for the
    caller (the radix sort's other buffer), so a caller that needs one more array of T
    words does not have to allocate it.

    From _PAIRED_SORT_FROM rounds on (and two threads allowed), the keys are written in two
    parts split at the median of a sample of the predictions, and the parts are sorted side
    by side (fastcdl.pair: the second on a helper thread if it starts in time).
    The sorted keys are the same either way."""
    T = p.shape[0]
    p_bits = p.view(np.uint64)
    keys = np.empty(T, dtype=np.uint64)
    spare = np.empty_like(keys)
    if T < _RADIX_FROM:
        outcome_keys_numpy(y, p_bits, keys)
        keys.sort()
        return keys, spare
    if T < _PAIRED_SORT_FROM or numba.config.NUMBA_NUM_THREADS < 2:
        _kb.outcome_keys(y, p_bits, keys)
        out = sort_outcome_keys(keys, spare)
        return out, (spare if out is keys else keys)
    wake()  # while the keys are written
    pivot = np.median(p[:: max(1, T // 1023)])  # any pivot is correct; the median balances the parts
    below = _kb.outcome_keys_split(y, p_bits, np.uint64(np.float64(pivot).view(np.uint64)) << np.uint64(1), keys)
    done = [None, None]
    parts = ((keys[:below], spare[:below]), (keys[below:], spare[below:]))

    def part(i):
        return lambda: done.__setitem__(i, sort_outcome_keys(*parts[i]) is parts[i][0])

    pair(part(0), part(1))
    if done[0] != done[1]:  # the parts ended in different buffers (passes skipped in one)
        parts[1][0 if done[0] else 1][:] = parts[1][0 if done[1] else 1]
    return (keys, spare) if done[0] else (spare, keys)
