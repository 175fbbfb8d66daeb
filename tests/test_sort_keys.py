"""sort_keys (the radix sort of the exact table's outcome keys) equals np.sort, and the exact
table built with it equals the one numpy's sort builds, on both sides of the switch.

From _RADIX_FROM keys on, the exact table sorts with whichever of the two sorts runs faster
on the machine (fastcdl._tables.outcome_keys.numpy_sorts_faster); these tests pin the radix sort unless they say
otherwise, so that they check it on every machine."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import fastcdl as fc
from fastcdl._tables import outcome_keys as _outcome_keys
from fastcdl._compiled.sort import sort_keys, sort_keys_into

U64 = st.integers(0, 2**64 - 1)


@pytest.fixture(autouse=True)
def radix_sort(monkeypatch):
    monkeypatch.setattr(_outcome_keys, "_numpy_sorts_faster", False)


def test_the_faster_sort_is_chosen_once(monkeypatch):
    monkeypatch.setattr(_outcome_keys, "_numpy_sorts_faster", None)
    choice = _outcome_keys.numpy_sorts_faster()
    assert isinstance(choice, bool) and _outcome_keys._numpy_sorts_faster is choice
    monkeypatch.setattr(_outcome_keys, "sort_keys_into", lambda a, b: pytest.fail("timed again"))
    assert _outcome_keys.numpy_sorts_faster() is choice


@given(st.lists(U64, max_size=300))
def test_sort_keys_equals_numpy_on_any_keys(values):
    keys = np.array(values, dtype=np.uint64)
    before = keys.copy()
    assert np.array_equal(sort_keys(keys), np.sort(keys))
    assert np.array_equal(keys, before)  # a sorted copy; the input is untouched
    assert np.array_equal(sort_keys_into(keys.copy(), np.empty_like(keys)), np.sort(keys))


def test_sort_keys_shapes():
    rng = np.random.default_rng(5)
    cases = [
        np.zeros(0, dtype=np.uint64),
        np.array([7], dtype=np.uint64),
        np.full(1000, 2**63 + 3, dtype=np.uint64),  # every digit constant: no pass runs
        rng.integers(0, 256, 5000).astype(np.uint64),  # one byte varies
        (rng.integers(0, 256, 5000).astype(np.uint64) << np.uint64(56)),  # only the top byte varies
        rng.integers(0, 2**63, 20000, dtype=np.uint64) * np.uint64(2),  # the top bit set and not
        np.arange(10**4, dtype=np.uint64)[::-1].copy(),  # reversed
        np.repeat(rng.integers(0, 2**64 - 1, 50, dtype=np.uint64), 40),  # many ties
    ]
    for keys in cases:
        assert np.array_equal(sort_keys(keys), np.sort(keys))
        assert np.array_equal(sort_keys_into(keys.copy(), np.empty_like(keys)), np.sort(keys))


@pytest.mark.filterwarnings("ignore::fastcdl.SampleSizeWarning")  # continuous scores: tables compared, not read
@pytest.mark.parametrize("T", [_outcome_keys._RADIX_FROM - 1, _outcome_keys._RADIX_FROM, 3 * _outcome_keys._RADIX_FROM])
@pytest.mark.parametrize("grid", [None, 50])
def test_exact_table_same_on_both_sides_of_the_switch(T, grid, monkeypatch):
    rng = np.random.default_rng(T)
    p = rng.random(T) if grid is None else rng.integers(0, grid + 1, T) / grid
    p[:3] = [0.0, -0.0, 1.0]
    y = (rng.random(T) < p).astype(np.uint8)
    radix = fc.bucket_stats(y, p)
    monkeypatch.setattr(_outcome_keys, "_numpy_sorts_faster", True)  # numpy's sort chosen above the switch
    chosen = fc.bucket_stats(y, p)
    monkeypatch.setattr(_outcome_keys, "_RADIX_FROM", 2**62)  # numpy's sort at every size
    numpy = fc.bucket_stats(y, p)
    for other in (numpy, chosen):
        for a, b in ((radix.values, other.values), (radix.counts, other.counts), (radix.positives, other.positives)):
            assert np.array_equal(np.asarray(a), np.asarray(b))
        assert np.array_equal(np.asarray(radix.values).view(np.uint64), np.asarray(other.values).view(np.uint64))


def test_the_radix_sort_is_used_from_the_switch_on(monkeypatch):
    calls = []
    monkeypatch.setattr(
        _outcome_keys,
        "sort_keys_into",
        lambda keys, scratch: calls.append(keys.shape[0]) or sort_keys_into(keys, scratch),
    )
    rng = np.random.default_rng(1)
    for T in (_outcome_keys._RADIX_FROM - 1, _outcome_keys._RADIX_FROM):
        fc.bucket_stats(np.zeros(T, dtype=np.uint8), rng.random(T))
    assert calls == [_outcome_keys._RADIX_FROM]


def _want(y, p):
    from fastcdl._compiled.buckets import outcome_keys

    return np.sort(outcome_keys(y, p.view(np.uint64), np.empty(p.shape[0], dtype=np.uint64)))


@pytest.mark.parametrize("kind", ["uniform", "sorted", "grid", "one value", "zeros and ones", "tiny"])
def test_the_halves_sorted_side_by_side_give_the_same_keys(kind, monkeypatch):
    # from _PAIRED_SORT_FROM rounds the keys are split at a sampled median and the halves
    # sorted side by side: the same sorted keys, and a spare that is another buffer
    T = _outcome_keys._PAIRED_SORT_FROM + 999
    monkeypatch.setattr(
        _outcome_keys.numba.config, "NUMBA_NUM_THREADS", max(2, _outcome_keys.numba.config.NUMBA_NUM_THREADS)
    )
    rng = np.random.default_rng(len(kind))
    p = {
        "uniform": rng.random(T),
        "sorted": np.sort(rng.random(T)),
        "grid": rng.integers(0, 5, T) / 4,
        "one value": np.full(T, 0.3),
        "zeros and ones": rng.choice([0.0, -0.0, 1.0], T),
        "tiny": rng.random(T) * 1e-300,
    }[kind]
    y = (rng.random(T) < 0.5).astype(np.uint8)
    for paired_from in (_outcome_keys._PAIRED_SORT_FROM, 2**62):
        for numpy_faster in (False, True):
            monkeypatch.setattr(_outcome_keys, "_PAIRED_SORT_FROM", paired_from)
            monkeypatch.setattr(_outcome_keys, "_numpy_sorts_faster", numpy_faster)
            keys, spare = _outcome_keys.sorted_outcome_keys_and_spare(y, p)
            assert np.array_equal(keys, _want(y, p))
            assert spare.shape == keys.shape and not np.shares_memory(keys, spare)


def test_halves_that_end_in_different_buffers(monkeypatch):
    # below the median only p = 1/4 (the keys differ in one digit: one pass, the result in the
    # spare buffer); above it 1/2 and 3/4 (two digits: two passes, back in the first buffer)
    T = 2 * _outcome_keys._PAIRED_SORT_FROM
    # the paired path runs its second half on a Python helper thread; numba's thread count only
    # decides whether it is taken, so take it on a machine with one (NUMBA_NUM_THREADS=1) too
    monkeypatch.setattr(
        _outcome_keys.numba.config, "NUMBA_NUM_THREADS", max(2, _outcome_keys.numba.config.NUMBA_NUM_THREADS)
    )
    rng = np.random.default_rng(3)
    p = rng.choice([0.25, 0.25, 0.5, 0.75, 0.5, 0.75, 0.5, 0.75, 0.25, 0.25], T)
    y = (rng.random(T) < 0.5).astype(np.uint8)
    ends = []
    monkeypatch.setattr(
        _outcome_keys, "sort_keys_into", lambda a, b: ends.append(sort_keys_into(a, b) is a) or (a if ends[-1] else b)
    )
    keys, spare = _outcome_keys.sorted_outcome_keys_and_spare(y, p)
    assert sorted(ends) == [False, True]
    assert np.array_equal(keys, _want(y, p))
    assert not np.shares_memory(keys, spare)


@pytest.mark.parametrize("top_bit", [40, 57, 58, 63])
def test_six_bytes_and_ten_bits_or_eight_bytes(top_bit):
    # keys that differ only below bit 58 are sorted with six bytes and a 10-bit digit (bits
    # 48-57); one differing bit 58 or higher brings back the eight bytes
    rng = np.random.default_rng(top_bit)
    low = rng.integers(0, 2**64 - 1, 5000, dtype=np.uint64, endpoint=True) & np.uint64(2 ** (top_bit + 1) - 1)
    low[0] = 0
    low[1] = np.uint64(2**top_bit)
    keys = np.uint64(2**62 if top_bit < 62 else 0) | low
    keys[::7] = keys[3]  # ties
    assert int(np.bitwise_or.reduce(keys ^ keys[0])).bit_length() == top_bit + 1
    assert np.array_equal(sort_keys_into(keys.copy(), np.empty_like(keys)), np.sort(keys))


@pytest.mark.parametrize("pivot", [0.0, 0.3, 0.5, 1.0, 2.0])
def test_split_keys_from_the_definition(pivot):
    # the keys below the pivot's key first, the others after: the same keys as outcome_keys
    from fastcdl._compiled.buckets import outcome_keys_split

    rng = np.random.default_rng(9)
    p = rng.choice(np.r_[0.0, -0.0, 0.3, 0.5, 1.0, rng.random(50)], 2000)
    y = (rng.random(2000) < 0.5).astype(np.uint8)
    pivot_key = np.uint64(np.float64(pivot).view(np.uint64)) << np.uint64(1)
    keys = np.empty(2000, dtype=np.uint64)
    below = outcome_keys_split(y, p.view(np.uint64), pivot_key, keys)
    want = [(int(np.abs(v).view(np.uint64)) << 1) | int(b) for v, b in zip(p, y)]  # from the definition
    assert below == sum(k < int(pivot_key) for k in want)
    assert all(int(k) < int(pivot_key) for k in keys[:below]) and all(int(k) >= int(pivot_key) for k in keys[below:])
    assert sorted(int(k) for k in keys) == sorted(want)


PREDICTIONS = st.lists(st.sampled_from([0.0, -0.0, 0.125, 0.5, 0.7, 1.0]) | st.floats(0.0, 1.0), max_size=200)


@given(PREDICTIONS, st.sampled_from([np.uint8, np.int64, np.float64, np.bool_]), st.integers(0, 2**32 - 1))
def test_small_inputs_build_their_table_in_numpy_as_the_kernels_do(ps, dtype, seed):
    # below _RADIX_FROM rounds the keys and the runs come from numpy (no kernel compiled for a
    # small input): the same keys and the same table, bit for bit, ties, -0.0, 0 and 1 included
    from fastcdl._compiled import buckets as kb

    p = np.array(ps, dtype=np.float64)
    y = (np.random.default_rng(seed).random(p.shape[0]) < 0.5).astype(dtype)
    want = np.empty(p.shape[0], dtype=np.uint64)
    kb.outcome_keys(y, p.view(np.uint64), want)
    got = _outcome_keys.outcome_keys_numpy(y, p.view(np.uint64), np.empty_like(want))
    assert np.array_equal(got, want)
    want.sort()
    m = kb.count_runs(want)
    q, n, s = np.empty(m), np.empty(m, dtype=np.int64), np.empty(m, dtype=np.int64)
    kb.runs_of_keys(want, q.view(np.uint64), n, s)
    q2, n2, s2 = _outcome_keys.runs_of_sorted_keys(want)
    assert (q2.dtype, n2.dtype, s2.dtype) == (np.float64, np.int64, np.int64)
    assert np.array_equal(q2.view(np.uint64), q.view(np.uint64))
    assert np.array_equal(n2, n) and np.array_equal(s2, s)


@pytest.mark.parametrize("T", [0, 1, _outcome_keys._RADIX_FROM - 1, _outcome_keys._RADIX_FROM])
def test_the_runs_on_both_sides_of_the_switch(T, monkeypatch):
    rng = np.random.default_rng(T)
    p = rng.integers(0, 33, T) / 32
    y = (rng.random(T) < p).astype(np.uint8)
    keys = _want(y, p)
    q, n, s = _outcome_keys.runs_of_sorted_keys(keys)
    monkeypatch.setattr(_outcome_keys, "_RADIX_FROM", 1 << 62)  # numpy at every size
    q2, n2, s2 = _outcome_keys.runs_of_sorted_keys(keys)
    assert np.array_equal(q, q2) and np.array_equal(n, n2) and np.array_equal(s, s2)
    assert n.sum() == T and s.sum() == y.sum() and np.all(np.diff(q) > 0)
