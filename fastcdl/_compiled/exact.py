"""Exact decisions in floating point: the signs of small sums of products, with
no rounding error and no allocation (so they inline into loops compiled without numba's
reference counting).

Every float is a dyadic rational, so a sum of products of floats and integers has an exact
value; these kernels return its sign. They rest on error-free transformations: Knuth's
TwoSum (a + b = s + e exactly) and Veltkamp's splitting (a float times an integer below
2^26 as two exact products). The fast path is the plain float expression when its error
bound leaves the sign certain; the exact path runs only near a tie. Cost: a few flops.

References: D. E. Knuth, TAOCP vol. 2, 4.2.2 (TwoSum); T. J. Dekker, A floating-point
technique for extending the available precision, Numer. Math. 18, 1971 (Veltkamp's
splitting); G. Bohlender, Floating-point computation of functions with maximum accuracy,
IEEE Trans. Computers 26, 1977 (distillation); J. R. Shewchuk, Adaptive precision
floating-point arithmetic and fast robust geometric predicates, Discrete Comput. Geom. 18,
1997 (filters and exact signs).

>>> sign_dot2(0.25, 2, 0.75, 6, -5)  # 0.25*2 + 0.75*6 - 5 = 0 exactly
0
>>> 0.25 * 0.2 + 0.75 * 0.6 - 0.5 < 0  # the same tie in floats, on the stated values 1/5 and 3/5
True
"""

from fastcdl._compiled._jit import kernel

_SPLIT = 134217729.0  # 2^27 + 1: Veltkamp's splitter, a 53-bit significand into 26 + 27 bits
EPS = 2.0**-53  # unit roundoff
INT_BITS = 26  # integers multiplied exactly: |x| < 2^26


@kernel(inline="always")
def two_sum(a, b):
    """(s, e) with s = fl(a + b) and a + b = s + e exactly (Knuth; any finite a, b)."""
    s = a + b
    bb = s - a
    e = (a - (s - bb)) + (b - bb)
    return s, e


@kernel(inline="always")
def split_times(p, x):
    """(h, l) with h + l = p x exactly, for a float p (|p| < 2^996) and an integer |x| < 2^26:
    p is split into 26 and 27 significant bits (Veltkamp), and each part times x fits in 53
    bits, subnormals included. The pair is not normalised."""
    c = _SPLIT * p
    hi = c - (c - p)
    xf = float(x)
    return hi * xf, (p - hi) * xf


@kernel(inline="always")
def _sign(x):
    return 1 if x > 0.0 else (-1 if x < 0.0 else 0)


@kernel(inline="always")
def sign_sum5(a, b, c, d, e):
    """Sign of a + b + c + d + e, exactly (-1, 0 or 1), for finite floats whose sum does not
    overflow.

    Distillation: a pass of TwoSum from the first term to the last leaves the sum unchanged
    and moves it into the last term, the rounding errors into the others. The pass stops
    when the others, summed in float with a bound on that sum's error, are smaller than the
    last term in magnitude (or all zero): then the last term has the sum's sign. Repeated
    passes reach a non-overlapping sequence after at most n - 1 = 4 (Bohlender 1977), where
    that certificate holds; the loop allows more and never needs them.
    """
    for _ in range(16):
        s, e1 = two_sum(a, b)
        s, e2 = two_sum(s, c)
        s, e3 = two_sum(s, d)
        s, e4 = two_sum(s, e)
        rest = abs(e1) + abs(e2) + abs(e3) + abs(e4)
        if rest == 0.0 or rest * (1.0 + 8.0 * EPS) < abs(s):
            return _sign(s)
        a, b, c, d, e = e1, e2, e3, e4, s
    return _sign(s)  # not reached: see above


@kernel
def sign_sum(t):
    """Sign of t[0] + ... + t[n-1], exactly (-1, 0 or 1), for finite floats whose sum does not
    overflow; t is overwritten (it ends as the distilled terms).

    :func:`sign_sum5` for n terms: passes of TwoSum move the sum into the last term and the
    rounding errors into the others, until the others, summed in float with a bound on that
    sum's error, are smaller than the last term (or all zero). At most n - 1 passes are
    needed (Bohlender 1977). O(n) a pass, no allocation.

    Examples
    --------
    >>> import numpy as np
    >>> sign_sum(np.array([1e16, 1.0, -1e16])), sign_sum(np.array([0.1, -0.1]))
    (1, 0)
    """
    n = t.shape[0]
    if n == 0:
        return 0
    s = t[0]
    for _ in range(n + 16):
        s = t[0]
        for i in range(1, n):
            s, e = two_sum(s, t[i])
            t[i - 1] = e
        t[n - 1] = s
        rest = 0.0
        for i in range(n - 1):
            rest += abs(t[i])
        if rest == 0.0 or rest * (1.0 + 2.0 * n * EPS) < abs(s):
            return _sign(s)
    return _sign(s)  # not reached: see above


@kernel(inline="always")
def sign_dot2(p0, x0, p1, x1, c):
    """Sign of p0 x0 + p1 x1 + c, exactly, for floats p0, p1 (|p| < 2^996) and integers
    x0, x1, c with |x0|, |x1| < 2^26 and |c| < 2^53.

    The float expression decides when its error bound (3 roundings) leaves the sign certain;
    otherwise the products are split exactly (:func:`split_times`) and the five terms'
    sign is found by :func:`sign_sum5`. O(1), no allocation."""
    a0 = p0 * float(x0)
    a1 = p1 * float(x1)
    cf = float(c)
    s = (a0 + a1) + cf
    if abs(s) > 4.0 * EPS * (abs(a0) + abs(a1) + abs(cf)):
        return _sign(s)
    h0, l0 = split_times(p0, x0)
    h1, l1 = split_times(p1, x1)
    return sign_sum5(h0, h1, cf, l0, l1)


@kernel(inline="always")
def two_prod(a, b):
    """(p, e) with p = fl(a b) and a b = p + e exactly (Dekker), for floats with |a|, |b| <
    2^996 whose product's error term does not underflow (|a b| > 2^-969)."""
    p = a * b
    c = _SPLIT * a
    ah = c - (c - a)
    al = a - ah
    c = _SPLIT * b
    bh = c - (c - b)
    bl = b - bh
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    return p, e


@kernel(inline="always")
def sign_int_plus(i, k, x):
    """Sign of i + k x, exactly, for integers |i|, |k| < 2^53 and a float x with k x = 0 or
    |k x| > 2^-969 (a step-1 bias m G_b = i + (m D_b) delta)."""
    kf = float(k)
    prod = kf * x
    s = float(i) + prod
    if abs(s) > 4.0 * EPS * (abs(float(i)) + abs(prod)):
        return _sign(s)
    h, lo = two_prod(kf, x)
    return sign_sum5(float(i), h, lo, 0.0, 0.0)


@kernel
def rational_grid(q, num):
    """The stated values q as fractions num / den with one denominator den <= 2^20: writes
    the numerators into ``num`` and returns den, or 0 when some q_b is not the float nearest
    to a fraction with a denominator that small (then nothing is exact about the grid).

    Each q_b's fraction is found among the convergents of its continued fraction: a
    fraction k/d with d <= 2^20 within half an ulp of q_b is a convergent (Legendre:
    |q - k/d| < 1/(2 d^2)) and the only such fraction (two differ by >= 2^-40). den is the
    least common multiple of the denominators. O(m log(1/eps)).

    >>> import numpy as np
    >>> num = np.zeros(3, dtype=np.int64)
    >>> int(rational_grid(np.array([1/3, 1/2, 2/3]), num)), num.tolist()
    (6, [2, 3, 4])
    """
    limit = 1 << 20
    den = 1
    for b in range(q.shape[0]):
        x = q[b]
        if not (x >= 0.0 and x <= 1.0):
            return 0
        d = _denominator(x, limit)
        if d == 0:
            return 0
        g = _gcd(den, d)
        den = den // g * d
        if den > limit:
            return 0
    for b in range(q.shape[0]):
        k = round(q[b] * den)
        if k / den != q[b]:
            return 0
        num[b] = k
    return den


@kernel
def _gcd(a, b):
    while b:
        a, b = b, a % b
    return a


@kernel
def _denominator(x, limit):
    """The denominator d <= limit of the fraction k/d whose float is x, or 0 (continued
    fraction convergents h/k of x; x in [0, 1])."""
    h0, k0 = 0, 1  # convergent n-2
    h1, k1 = 1, 0  # convergent n-1
    r = x
    for _ in range(64):
        a = int(r // 1.0)
        h0, h1 = h1, a * h1 + h0
        k0, k1 = k1, a * k1 + k0
        if k1 > limit:
            return 0
        if h1 / k1 == x:
            return k1
        frac = r - a
        if frac <= 0.0:
            return 0
        r = 1.0 / frac
    return 0
