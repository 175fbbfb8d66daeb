"""References for the measures of model scores (smECE, intCE, ICI, CORP's MCB, LDTC), written
from their definitions or taken from an independent implementation (relplot for smECE,
scikit-learn's isotonic regression for the PAV curve). tests/reference.py's REGISTRY points here;
the modules' own test files use the same functions."""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import linprog


def smece_ref(y, p):
    """relplot.smECE, the authors' implementation (predictions first)."""
    import relplot

    return float(relplot.smECE(np.asarray(p, float), np.asarray(y, float)))


def intce_ref(q, n, s):
    """The least, over groupings of the sorted buckets into consecutive groups (every one of the
    2^(m-1), enumerated), of (1/T) sum_groups (|sum (q n - s)| + (q_last - q_first) sum n): the
    interval partitions of [0, 1] with each interval as narrow as its predictions allow."""
    from itertools import product

    q, n, s = (np.asarray(a, float) for a in (q, n, s))
    m, T = len(q), n.sum()
    best = math.inf
    for cuts in product((False, True), repeat=m - 1):
        total, start = 0.0, 0
        for i in range(m):
            if i == m - 1 or cuts[i]:
                g = slice(start, i + 1)
                total += abs(float(np.sum(q[g] * n[g] - s[g]))) + (q[i] - q[start]) * float(n[g].sum())
                start = i + 1
        best = min(best, total / T)
    return best


def isotonic_ref(y, p, w=None):
    from sklearn.isotonic import IsotonicRegression

    return IsotonicRegression(y_min=0.0, y_max=1.0).fit(p, y, sample_weight=w).predict(p)


def ici_ref(y, p):
    """Mean |p - c(p)| over the rounds, c scikit-learn's isotonic fit."""
    return float(np.mean(np.abs(np.asarray(p, float) - isotonic_ref(y, p))))


def corp_mcb_ref(y, p):
    """Brier score of p minus that of its isotonic recalibration, round by round."""
    y = np.asarray(y, float)
    p = np.asarray(p, float)
    c = isotonic_ref(y, p)
    return float(np.mean((p - y) ** 2) - np.mean((c - y) ** 2))


def ldtc_dense(q, n, s, K):
    """The lower distance on the uniform grid {0, 1/K, ..., 1} (at most 1 / (2K) above the true
    value): variables x[i, j] (y = 1) and z[i, j] (y = 0), dense matrices."""
    q, n, s = (np.asarray(a, float) for a in (q, n, s))
    m, T = len(q), n.sum()
    v = np.arange(K + 1) / K
    G = len(v)
    cost = np.concatenate([np.abs(q[:, None] - v[None, :]).ravel()] * 2)
    A, b = [], []
    for i in range(m):  # bucket i's ones, then its zeros, spread over the levels
        row = np.zeros(2 * m * G)
        row[i * G : (i + 1) * G] = 1
        A.append(row)
        b.append(s[i] / T)
        row = np.zeros(2 * m * G)
        row[m * G + i * G : m * G + (i + 1) * G] = 1
        A.append(row)
        b.append((n[i] - s[i]) / T)
    for j in range(G):  # level j: its ones are v_j of its mass
        row = np.zeros(2 * m * G)
        for i in range(m):
            row[i * G + j] = 1 - v[j]
            row[m * G + i * G + j] = -v[j]
        A.append(row)
        b.append(0.0)
    res = linprog(cost, A_eq=np.array(A), b_eq=np.array(b), bounds=(0, None), method="highs")
    assert res.status == 0
    return float(res.fun)


def ldtc_ref(q, n, s):
    """On a grid of 400 intervals: within 1/800 of the true value, as fc.ldtc within its h/2."""
    return ldtc_dense(q, n, s, 400)
