"""Work arrays on huge pages (fastcdl._compiled.hugepages): the same arrays as np.empty, with
numpy's advice above 4 MiB; and the radix sort that uses them, at the digits it may skip."""

import sys
from pathlib import Path

import numpy as np
import pytest

from fastcdl._compiled.hugepages import HUGE_MIN, advise_huge, empty_huge
from fastcdl._compiled._jit import readonly
from fastcdl._compiled.sort import sort_pairs

THP = Path("/sys/kernel/mm/transparent_hugepage/enabled")


@pytest.mark.parametrize("dtype", [np.float64, np.int64, np.uint64, np.int8])
@pytest.mark.parametrize("n", [0, 1, 1000, HUGE_MIN // 8 + 3])
def test_empty_huge_is_np_empty(n, dtype):
    a = empty_huge(n, dtype)
    assert a.shape == (n,) and a.dtype == np.dtype(dtype) and a.flags.c_contiguous
    a[:] = 7  # writable over its whole length
    assert (a == 7).all()


def test_advice_only_from_4_mib():
    small = np.empty(HUGE_MIN // 8 - 1)
    assert advise_huge(small.ctypes.data, small.nbytes) == 1  # below numpy's threshold: not asked
    big = np.empty(HUGE_MIN // 8 + 1000)
    status = advise_huge(big.ctypes.data, big.nbytes)
    if sys.platform.startswith("linux") and THP.exists():
        assert status == 0  # the kernel accepted the advice (the range is whole pages)
    else:
        assert status in (0, 1, -1)


@pytest.mark.parametrize("case", ["all equal", "low bits", "high bits", "one outlier", "signs"])
def test_radix_skips_only_digits_that_agree(case):
    """The radix sort skips a pass whose digit is the same for every key and stops above the
    highest bit in which two keys differ: inputs whose keys differ only in low bits, only in
    high bits, or not at all still sort as np.argsort(kind="stable")."""
    rng = np.random.default_rng(len(case))
    n = 3000
    if case == "all equal":
        x = np.full(n, 0.3)
    elif case == "low bits":
        x = (np.full(n, 0.3).view(np.uint64) + rng.integers(0, 5, n).astype(np.uint64)).view(np.float64)
    elif case == "high bits":
        x = rng.choice([0.25, 0.5, 1.0, 2.0, 1024.0, 2.0**-30], n)
    elif case == "one outlier":
        x = np.full(n, 0.75)
        x[1234] = 0.0
    else:
        x = rng.choice([-1.5, -0.0, 0.0, 1.5, -np.inf, np.inf, 1e-300, -1e-300], n)
    x = x[rng.permutation(n)] if case != "one outlier" else x
    keys, order = sort_pairs(readonly(x))  # read-only, as the kernels that call it type it
    want = np.argsort(x, kind="stable")
    assert np.array_equal(order, want)
    assert np.array_equal(keys.view(np.uint64), x[want].view(np.uint64))  # bit for bit: -0.0 kept
