"""Confidence intervals of a bucket's frequency of y = 1: :func:`binomial_interval`.

A reliability diagram's band says how far each bin's frequency could be from its true
probability by chance. A bootstrap band fails where it matters most: a bin whose rounds are
all 0 (or all 1) resamples to the same frequency every time and gets a band of width zero.
The binomial intervals here do not:

- Wilson's score interval (Wilson 1927): the probabilities pi whose score test
  ``|phat - pi|`` <= z sqrt(pi (1 - pi) / n) accepts; never empty, inside [0, 1], and of positive
  width at phat = 0 or 1. Coverage close to the nominal level on average (Brown, Cai and
  DasGupta 2001, "Interval estimation for a binomial proportion", Statistical Science).
- Clopper and Pearson's exact interval (1934): the inversion of the two one-sided binomial
  tests, lo = Beta quantile alpha/2 with (s, n - s + 1), hi = Beta quantile 1 - alpha/2 with
  (s + 1, n - s), 0 at s = 0 and 1 at s = n; conservative (coverage at least the level).

Both need counts: a bucket's n_i rounds and s_i of them with y = 1.
"""

from __future__ import annotations

import numpy as np

from fastcdl._validate import ValidationError, check_name, check_real

__all__ = ["binomial_interval", "BINOMIAL_METHODS"]

#: The methods of :func:`binomial_interval`.
BINOMIAL_METHODS = ("wilson", "clopper-pearson")


def binomial_interval(successes, trials, *, level=0.95, method="wilson"):
    """Two-sided confidence interval of a binomial probability, per bucket. O(m).

    Parameters
    ----------
    successes, trials : array-like
        s_i and n_i: non-negative counts with s_i <= n_i and n_i >= 1 (integers for
        Clopper-Pearson; Wilson's formula also takes real n, such as weight sums).
    level : float, default 0.95
        In (0, 1).
    method : {"wilson", "clopper-pearson"}, default "wilson"

    Returns
    -------
    (ndarray, ndarray)
        The lower and upper ends, in [0, 1].

    Raises
    ------
    ValidationError
        (a ValueError) for a level outside (0, 1), an unknown method, or counts that are
        negative, not finite, larger than the trials, zero trials, or not integers
        (Clopper-Pearson).

    Examples
    --------
    >>> lo, hi = binomial_interval([0, 5], [10, 10])
    >>> [round(float(v), 4) for v in lo], [round(float(v), 4) for v in hi]
    ([0.0, 0.2366], [0.2775, 0.7634])
    >>> lo, hi = binomial_interval([0], [10], method="clopper-pearson")
    >>> float(lo[0]), round(float(hi[0]), 4)
    (0.0, 0.3085)
    """
    from scipy import special, stats

    check_real(level, "level", 0.0, 1.0, low_open=True)
    if not level < 1.0:
        raise ValidationError("level", "must lie in (0, 1)", value=level)
    check_name(method, BINOMIAL_METHODS, "method")
    s = np.atleast_1d(np.asarray(successes, dtype=np.float64))
    n = np.atleast_1d(np.asarray(trials, dtype=np.float64))
    if s.shape != n.shape:
        raise ValidationError("successes", "must have the shape of trials")
    if not (np.isfinite(s).all() and np.isfinite(n).all()):
        raise ValidationError("successes", "and trials must be finite")
    if (s < 0).any() or (s > n).any():
        raise ValidationError("successes", "must lie between 0 and the trials")
    if not (n > 0).all():
        raise ValidationError("trials", "must be positive: an empty bucket has no frequency")
    alpha = 1.0 - level
    if method == "wilson":
        z = float(special.ndtri(1.0 - alpha / 2.0))
        z2 = z * z
        centre = (s + z2 / 2.0) / (n + z2)
        half = z / (n + z2) * np.sqrt(np.maximum(s * (n - s) / n, 0.0) + z2 / 4.0)
        # at s = 0 (or n) the end is 0 (or 1) exactly; rounding could put it an ulp beyond
        lo = np.where(s == 0, 0.0, np.clip(centre - half, 0.0, 1.0))
        hi = np.where(s == n, 1.0, np.clip(centre + half, 0.0, 1.0))
        return lo, hi
    if (s != np.round(s)).any() or (n != np.round(n)).any():
        raise ValidationError("successes", "and trials must be whole counts for the Clopper-Pearson interval")
    with np.errstate(invalid="ignore", divide="ignore"):
        lo = np.where(s == 0, 0.0, stats.beta.ppf(alpha / 2.0, s, n - s + 1.0))
        hi = np.where(s == n, 1.0, stats.beta.ppf(1.0 - alpha / 2.0, s + 1.0, n - s))
    return lo, hi
