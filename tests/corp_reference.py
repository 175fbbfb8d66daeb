"""Round-by-round references for fastcdl.corp and fastcdl.ici, written from the definitions: the
isotonic fit is scikit-learn's (an independent PAV on the rounds), or a PAV in exact fractions;
the scores are summed over the rounds; the weighted quantile is a plain loop."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np


def isotonic_rounds(y, p, w=None):
    """The non-decreasing least-squares fit of y on p, one value per round (scikit-learn)."""
    from sklearn.isotonic import IsotonicRegression

    p = np.asarray(p, float)
    fit = IsotonicRegression(y_min=0.0, y_max=1.0, increasing=True)
    return fit.fit(p, np.asarray(y, float), sample_weight=w).predict(p)


def pav_fractions(p, y, w=None):
    """Isotonic fit in exact fractions, one value per round: tied predictions pooled first,
    then adjacent violators pooled until the block means increase."""
    w = [1] * len(p) if w is None else list(w)
    groups = {}
    for pt, yt, wt in zip(p, y, w):
        a, b = groups.get(Fraction(pt), (Fraction(0), Fraction(0)))
        groups[Fraction(pt)] = (a + Fraction(wt) * yt, b + Fraction(wt))
    blocks = []  # [ones, weight, [predictions]]
    for x in sorted(groups):
        blocks.append([groups[x][0], groups[x][1], [x]])
        while len(blocks) > 1 and blocks[-2][0] / blocks[-2][1] >= blocks[-1][0] / blocks[-1][1]:
            a = blocks.pop()
            blocks[-1][0] += a[0]
            blocks[-1][1] += a[1]
            blocks[-1][2] += a[2]
    value = {x: o / n for o, n, xs in blocks for x in xs}
    return [value[Fraction(pt)] for pt in p]


def score_round(kind, prob, outcome):
    """The score of one prediction: (p - y)^2, or -log of the probability given to the outcome
    (inf when that probability is 0, 0 log 0 never arising: a certain right prediction scores 0)."""
    if kind == "brier":
        return (prob - outcome) ** 2
    given = prob if outcome == 1 else 1 - prob
    return math.inf if given == 0 else -math.log(given)


def mean_score(kind, p, y, w):
    return sum(wt * score_round(kind, float(pt), int(yt)) for pt, yt, wt in zip(p, y, w)) / sum(w)


def corp_ref(y, p, kind="brier", w=None, fit=None):
    """(score, mcb, dsc, unc) summed over the rounds."""
    w = [1.0] * len(p) if w is None else [float(v) for v in w]
    c = isotonic_rounds(y, p, w) if fit is None else fit
    ybar = sum(wt * yt for wt, yt in zip(w, y)) / sum(w)
    S_p, S_c, S_0 = (mean_score(kind, f, y, w) for f in (p, c, [ybar] * len(p)))
    return S_p, S_p - S_c, S_0 - S_c, S_0


def weighted_lower_quantile_ref(x, w, alpha):
    """The smallest x_t with at least alpha of the weight at or below it, by a loop over the sorted
    values; alpha given as a string (a decimal) and integer weights compared exactly."""
    alpha = Fraction(alpha)
    total = sum(Fraction(v) for v in w)
    pairs = sorted(zip(x, w))
    cum = Fraction(0)
    for i, (v, wt) in enumerate(pairs):
        cum += Fraction(wt)
        last = i == len(pairs) - 1 or pairs[i + 1][0] != v
        if last and cum / total >= alpha:
            return v
    raise AssertionError("unreachable: the whole weight reaches alpha")


def ici_ref(y, p, w=None, fit=None):
    """(ici, e50, e90, emax) over the rounds, c scikit-learn's isotonic fit."""
    w = np.ones(len(p)) if w is None else np.asarray(w, float)
    c = isotonic_rounds(y, p, w) if fit is None else np.asarray(fit, float)
    d = np.abs(np.asarray(p, float) - c)
    return (
        float(np.sum(w * d) / np.sum(w)),
        weighted_lower_quantile_ref(d, w, "0.5"),
        weighted_lower_quantile_ref(d, w, "0.9"),
        float(d.max()),
    )


def sample(seed, T, ties=False, shape="over"):
    """Outcomes and predictions: overconfident, non-monotone ("wave") or calibrated scores."""
    rng = np.random.default_rng(seed)
    p = rng.beta(1.2, 1.2, T) * 0.96 + 0.02
    if ties:
        p = np.round(p * 25) / 25
    truth = {"over": 0.5 + 0.6 * (p - 0.5), "wave": 0.5 + 0.35 * np.sin(6 * p), "calibrated": p}[shape]
    y = (rng.random(T) < truth).astype(int)
    return y, p
