"""exp and expm1 as plain arithmetic, so that loops over many lanes compile to SIMD code.

numba calls the C library for math.exp one lane at a time (its vectorised SVML path needs
an Intel runtime that these llvmlite wheels lack), so a loop of exps never vectorises.
Written as range reduction and a polynomial, with no call and no branch, the same loop
becomes AVX2/AVX-512 code (docs/algorithm1.md, "The vectorised oracle").

Method, for z in [-1400, 710] (clamped outside; NaN passes through):

    n = round(z / ln 2),  r = (z - n ln2_hi) - n ln2_lo,  |r| <= ln(2)/2 + 1e-16,
    expm1(r) = r + r^2 (1/2! + r/3! + ... + r^11/13!)    (Taylor, degree 13, Estrin's scheme),
    exp(z)   = 2^h 2^(n-h) (1 + expm1(r)),  h = floor(n/2)  (two factors: no overflow of the
               scale in the subnormal and overflow ranges),
    expm1(z) = 2^h (2^(n-h) expm1(r) + (2^(n-h) - 2^-h))   (exact for n = 0; = 2^n (1 + expm1(r)) - 1).

ln2_hi has 21 trailing zero bits, so n ln2_hi is exact for |n| < 2^21 and r carries the
reduction error |n| |ln 2 - ln2_hi - ln2_lo| < 2^11 * 2^-88. The truncation error of the
polynomial is at most |r|^14 / 14! e^|r| < 6e-18 (0.03 ulp of 1); with the rounding of the
Horner/Estrin steps the measured error against the C library is at most 1 ulp for exp over
[-708, 709.7] and at most 2 ulps for expm1, and exp is within 2^-1074 of it in the subnormal
range (tests/test_lane_exp.py states and checks these bounds, with the edges). Evaluated
without fused multiply-adds (numba's default), so the results are the same on every x86-64
machine, whatever the C library.

Cost: about 30 floating-point operations per lane, all vectorisable; about 1 ns a lane in a
16-lane AVX-512 loop against about 4 ns for a math.exp call.

>>> import math
>>> abs(exp_lane(1.0) - math.e) <= 2.3e-16 * math.e
True
>>> expm1_lane(1e-20)
1e-20
"""

from llvmlite import ir
from numba.core import types
from numba.extending import intrinsic

from fastcdl._compiled._jit import kernel

LOG2E = 1.4426950408889634  # 1 / ln 2
LN2_HI = 0.6931471803691238  # 0x3fe62e42fee00000: ln 2 to 32 bits
LN2_LO = 1.9082149292705877e-10  # ln 2 - LN2_HI
ROUND = 6755399441055744.0  # 1.5 * 2^52: x + ROUND - ROUND rounds x to an integer (|x| < 2^51)
Z_MIN = -1400.0  # exp(z) underflows to 0 well above this
Z_MAX = 710.0  # exp(z) overflows to inf below this


@intrinsic
def _float_from_bits(typingctx, bits):
    """The float64 whose IEEE bits are the int64 ``bits`` (a register move in vector code)."""
    if not isinstance(bits, types.Integer):
        return None

    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], ir.DoubleType())

    return types.float64(types.int64), codegen


@kernel(inline="always")
def _pow2(n):
    """2^n for integer n in [-1022, 1023], from its exponent bits."""
    return _float_from_bits((n + 1023) << 52)


@kernel(inline="always")
def _reduce(z):
    """(n, r, n as int64) with z = n ln 2 + r, |r| <= ln(2)/2 (z clamped to [Z_MIN, Z_MAX])."""
    zc = min(max(z, Z_MIN), Z_MAX)
    n = (zc * LOG2E + ROUND) - ROUND
    r = (zc - n * LN2_HI) - n * LN2_LO
    return r, int(n)


@kernel(inline="always")
def _expm1_poly(r):
    """expm1(r) for |r| <= ln(2)/2: Taylor to degree 13, evaluated by Estrin's scheme."""
    r2 = r * r
    r4 = r2 * r2
    r8 = r4 * r4
    a = 1.0 / 2 + r * (1.0 / 6)
    b = 1.0 / 24 + r * (1.0 / 120)
    c = 1.0 / 720 + r * (1.0 / 5040)
    d = 1.0 / 40320 + r * (1.0 / 362880)
    e = 1.0 / 3628800 + r * (1.0 / 39916800)
    f = 1.0 / 479001600 + r * (1.0 / 6227020800)
    low = (a + r2 * b) + r4 * (c + r2 * d)
    high = e + r2 * f
    return r + r2 * (low + r8 * high)


@kernel(inline="always")
def exp_lane(z):
    """e^z, within 1 ulp of math.exp (to 2^-1074 when subnormal); inf above 709.78, 0 below
    -745.1, NaN for NaN. Branch-free, so a loop of them vectorises."""
    r, n = _reduce(z)
    h = n >> 1
    out = ((1.0 + _expm1_poly(r)) * _pow2(h)) * _pow2(n - h)
    return out if z == z else z


@kernel(inline="always")
def expm1_lane(z):
    """e^z - 1 to 2 ulps, exact in relative terms near 0 (expm1(z) = z for |z| < 2^-54);
    -1 below -38, inf above 709.78, NaN for NaN. Branch-free, so a loop of them vectorises."""
    r, n = _reduce(z)
    h = n >> 1
    s = _pow2(n - h)
    t = _pow2(h)
    out = t * (s * _expm1_poly(r) + (s - _pow2(-h)))
    return out if z == z else z
