"""Binned ECE agrees with scikit-learn's calibration_curve (the peer in REGISTRY["ece"]).

On an interior edge both libraries put the prediction in the lower bin (right-closed
intervals), but sklearn's edges are np.linspace(0, 1, m + 1), which can sit an ulp away
from the edges i/m of docs/metrics.md (linspace gives 3 * 0.1 = 0.30000000000000004 for 3/10). A
prediction between the two values then lands in different bins, so the agreement is
checked on data with no prediction on (or between the two versions of) an interior edge,
and the disagreement itself is pinned down below.
"""

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import fastcdl as fc
from reference import REGISTRY, sklearn_binned_ece, table_ref

pytest.importorskip("sklearn")

sk_ece = REGISTRY["ece"]["peer"]


def _off_edges(p, m):
    ours = np.arange(m + 1) / m
    theirs = np.linspace(0.0, 1.0, m + 1)
    lo = np.minimum(ours, theirs)[1:-1]
    hi = np.maximum(ours, theirs)[1:-1]
    return not np.any((p[:, None] >= lo[None, :]) & (p[:, None] <= hi[None, :]))


@given(
    st.integers(1, 20),
    st.lists(
        st.tuples(st.integers(0, 1), st.floats(0.0, 1.0, allow_subnormal=False)),
        min_size=1,
        max_size=80,
    ),
)
def test_binned_ece_matches_sklearn(m, rows):
    y = np.array([r[0] for r in rows])
    p = np.array([r[1] for r in rows])
    assume(_off_edges(p, m))
    assert abs(fc.ece(y, p, bins=m) - sk_ece(y, p, m)) <= 1e-12


def test_binned_ece_matches_sklearn_on_a_large_sample():
    rng = np.random.default_rng(0)
    p = rng.random(5000)
    y = (rng.random(5000) < p**1.3).astype(int)
    for m in (5, 10, 15, 37):
        assert _off_edges(p, m)
        assert abs(fc.ece(y, p, bins=m) - sklearn_binned_ece(y, p, m)) <= 1e-12


def test_prediction_between_the_two_versions_of_an_edge():
    # 0.30000000000000004 is above 3/10 (the edge of docs/metrics.md, bin ((3/10, 4/10]) but equal to
    # sklearn's linspace edge (its bin (0.2, 0.30000000000000004]).
    p = np.array([0.30000000000000004, 0.25])
    y = np.array([1, 0])
    assert np.linspace(0.0, 1.0, 11)[3] == p[0] > 3 / 10
    stats = fc.bucket_stats(y, p, bins=10)
    assert stats.bins.tolist() == [2, 3]
    assert stats.bins.tolist() == table_ref(y, p, bins=10)[4].tolist()
    # sklearn merges both rounds into one bin: |1/2 - 0.275...| vs two bins |0 - .25|, |1 - .3|
    assert fc.ece(y, p, bins=10) == pytest.approx(0.5 * 0.25 + 0.5 * (1 - p[0]), abs=1e-15)
    assert sklearn_binned_ece(y, p, 10) == pytest.approx(abs(0.5 - (p[0] + 0.25) / 2), abs=1e-15)
