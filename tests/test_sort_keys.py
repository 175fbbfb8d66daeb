"""sort_keys (the radix sort of the exact table's outcome keys) equals np.sort, and the exact
table built with it equals the one numpy's sort builds, on both sides of the switch."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import fastcdl as fc
from fastcdl import metrics
from fastcdl._kernels.sort import sort_keys, sort_keys_into

U64 = st.integers(0, 2**64 - 1)


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
@pytest.mark.parametrize("T", [metrics._RADIX_FROM - 1, metrics._RADIX_FROM, 3 * metrics._RADIX_FROM])
@pytest.mark.parametrize("grid", [None, 50])
def test_exact_table_same_on_both_sides_of_the_switch(T, grid, monkeypatch):
    rng = np.random.default_rng(T)
    p = rng.random(T) if grid is None else rng.integers(0, grid + 1, T) / grid
    p[:3] = [0.0, -0.0, 1.0]
    y = (rng.random(T) < p).astype(np.uint8)
    radix = fc.bucket_stats(y, p)
    monkeypatch.setattr(metrics, "_RADIX_FROM", 2**62)  # numpy's sort at every size
    numpy = fc.bucket_stats(y, p)
    for a, b in ((radix.values, numpy.values), (radix.counts, numpy.counts), (radix.positives, numpy.positives)):
        assert np.array_equal(np.asarray(a), np.asarray(b))
    assert np.array_equal(np.asarray(radix.values).view(np.uint64), np.asarray(numpy.values).view(np.uint64))


def test_the_radix_sort_is_used_from_the_switch_on(monkeypatch):
    calls = []
    monkeypatch.setattr(metrics, "sort_keys_into",
                        lambda keys, scratch: calls.append(keys.shape[0]) or sort_keys_into(keys, scratch))
    rng = np.random.default_rng(1)
    for T in (metrics._RADIX_FROM - 1, metrics._RADIX_FROM):
        fc.bucket_stats(np.zeros(T, dtype=np.uint8), rng.random(T))
    assert calls == [metrics._RADIX_FROM]
