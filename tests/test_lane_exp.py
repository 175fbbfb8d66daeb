"""exp_lane and expm1_lane (fastcdl/_compiled/lane_exp.py) against the C library, with the
error bounds their docstrings state:

- exp_lane: at most 1 ulp from math.exp for results in the normal range (z in [-708.39, 709.78]),
  at most 1 unit of 2^-1074 from it in the subnormal range, 0 below, inf above;
- expm1_lane: at most 2 ulps from math.expm1 everywhere it is finite (and -1 or inf beyond);
- both pass NaN through and are exact at 0.

The oracle uses exp on [-1400, 710] (normaliser terms, weights relative to their largest)
and expm1 on (-inf, 0] (-2 eta |G|); the sample covers both ranges, the reduction's
boundaries z = (j + 1/2) ln 2 and the edges.
"""

import math
import os

import numpy as np
import pytest
from numba import njit

from conftest import host_cpu_features
from fastcdl._compiled.lane_exp import exp_lane, expm1_lane

TINY = 5e-324  # 2^-1074, the smallest subnormal
NORMAL_MIN = math.log(2.2250738585072014e-308)  # exp(z) is normal above this


@njit(error_model="numpy")
def _exp_all(z):
    out = np.empty_like(z)
    for i in range(z.shape[0]):
        out[i] = exp_lane(z[i])
    return out


@njit(error_model="numpy")
def _expm1_all(z):
    out = np.empty_like(z)
    for i in range(z.shape[0]):
        out[i] = expm1_lane(z[i])
    return out


def _ulps(got, want):
    """|got - want| in units of the spacing of floats at want (inf if one is finite and the other not)."""
    got, want = np.asarray(got), np.asarray(want)
    same = (got == want) | (np.isnan(got) & np.isnan(want))
    err = np.abs(got - want) / np.spacing(np.abs(want))
    return np.where(same, 0.0, err)


def _sample():
    rng = np.random.default_rng(20241124)
    ln2 = math.log(2)
    j = np.arange(-1075, 1025)
    edges = np.concatenate([(j + 0.5) * ln2, j * ln2])
    edges = np.concatenate([edges, np.nextafter(edges, np.inf), np.nextafter(edges, -np.inf)])
    return np.concatenate(
        [
            rng.uniform(-708.39, 709.78, 400_000),
            rng.uniform(-40.0, 40.0, 200_000),
            rng.uniform(-0.35, 0.35, 200_000),
            np.sign(rng.uniform(-1, 1, 100_000)) * 10.0 ** rng.uniform(-300, 0, 100_000),
            edges,
        ]
    )


def _reference(f, z):
    out = np.empty_like(z)
    for i, x in enumerate(z):
        try:
            out[i] = f(x)
        except OverflowError:
            out[i] = math.inf
    return out


def test_exp_within_one_ulp_in_the_normal_range():
    z = _sample()
    z = z[(z >= NORMAL_MIN) & (z <= 709.78)]
    err = _ulps(_exp_all(z), _reference(math.exp, z))
    assert err.max() <= 1.0, (err.max(), z[np.argmax(err)])
    assert np.mean(err > 0) < 0.2  # and most results are the correctly rounded ones


def test_exp_subnormal_range_and_limits():
    z = np.linspace(-745.2, NORMAL_MIN, 200_001)
    got, want = _exp_all(z), _reference(math.exp, z)
    assert np.max(np.abs(got - want)) <= TINY
    assert np.all(got >= 0.0)
    edge = np.array(
        [
            -745.2,
            -745.1,
            -800.0,
            -1e300,
            -np.inf,
            709.78,
            709.79,
            710.0,
            1e300,
            np.inf,
            0.0,
            -0.0,
            1e-300,
            -1e-300,
            np.nan,
        ]
    )
    got = _exp_all(edge)
    assert got[:5].tolist() == [0.0, TINY, 0.0, 0.0, 0.0]
    assert got[5] == math.exp(709.78) and np.all(np.isinf(got[6:10]))
    assert got[10:14].tolist() == [1.0, 1.0, 1.0, 1.0] and np.isnan(got[14])


def test_expm1_within_two_ulps():
    z = _sample()
    z = z[z <= 709.78]
    got, want = _expm1_all(z), _reference(math.expm1, z)
    err = _ulps(got, want)
    assert err.max() <= 2.0, (err.max(), z[np.argmax(err)])
    small = np.abs(z) < 1e-17  # expm1(z) = z exactly there
    assert np.array_equal(got[small], z[small])


def test_expm1_limits():
    edge = np.array([-40.0, -800.0, -np.inf, 709.79, np.inf, 0.0, -0.0, np.nan])
    got = _expm1_all(edge)
    assert got[0] == math.expm1(-40.0) and got[1] == -1.0 and got[2] == -1.0
    assert np.all(np.isinf(got[3:5])) and got[5] == 0.0 and got[6] == 0.0  # (the sign of a zero is not kept)
    assert np.isnan(got[7])


@pytest.mark.skipif(
    "avx2" not in host_cpu_features() or bool(os.environ.get("NUMBA_CPU_NAME")),
    reason="numba compiles for a CPU without AVX2 (packed 256-bit doubles) here",
)
@pytest.mark.parametrize("f", [_exp_all, _expm1_all])
def test_the_loops_are_vectorised(f):
    """The machine code of a loop of them holds packed double arithmetic (AVX2 ymm or AVX-512
    zmm registers) and no call to the C library's exp."""
    f(np.linspace(-1.0, 1.0, 64))
    asm = "\n".join(f.inspect_asm().values())
    if not asm.strip() or "Inspection disabled" in asm:
        pytest.skip("machine code not available (loaded from the cache)")
    assert "mulpd" in asm and ("ymm" in asm or "zmm" in asm)
    assert "exp@" not in asm and "callq\texp" not in asm
