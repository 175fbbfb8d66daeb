"""Binned ECE agrees with scikit-learn's calibration_curve (the peer in REGISTRY["ece"]).

On an interior edge both libraries put the prediction in the lower bin (right-closed
intervals). sklearn's edges are np.linspace(0, 1, m + 1), which can sit an ulp or two away
from the edges i/m of docs/metrics.md (linspace gives 3 * 0.1 = 0.30000000000000004 for
3/10); fastcdl widens every interior edge by 4 to 8 ulps, so a grid value just above i/m
(as np.arange(0, 1.0001, 0.1) computes them) goes to the lower bin in both. The two can
only disagree on a prediction just below an edge where linspace lies below i/m, which the
random tests exclude.
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
    hi = np.maximum(ours * (1.0 + 2.0**-50), theirs)[1:-1]
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
    # 0.30000000000000004 is an ulp above 3/10 and equal to sklearn's linspace edge: both put
    # it in the bin that ends at the edge (here with 0.25)
    p = np.array([0.30000000000000004, 0.25])
    y = np.array([1, 0])
    assert np.linspace(0.0, 1.0, 11)[3] == p[0] > 3 / 10
    stats = fc.bucket_stats(y, p, bins=10)
    assert stats.bins.tolist() == [2]
    assert stats.bins.tolist() == table_ref(y, p, bins=10)[4].tolist()
    assert fc.ece(y, p, bins=10) == pytest.approx(abs(0.5 - (p[0] + 0.25) / 2), abs=1e-15)
    assert sklearn_binned_ece(y, p, 10) == pytest.approx(fc.ece(y, p, bins=10), abs=1e-15)


@pytest.mark.parametrize("m", [5, 10, 20])
def test_grid_forecasts_of_arange_agree_with_sklearn(m):
    # forecasts on np.arange(0, 1.0001, 0.1): 0.30000000000000004, 0.6000000000000001, ...
    # sit an ulp above the edges k/10; before the edge rule fastcdl gave 0.00942 where
    # scikit-learn gives 0.01058 on data like these
    rng = np.random.default_rng(1)
    grid = np.arange(0, 1.0001, 0.1)
    p = rng.choice(grid, 20000)
    y = (rng.random(20000) < 0.05 + 0.9 * p).astype(int)
    assert fc.ece(y, p, bins=m) == pytest.approx(sklearn_binned_ece(y, p, m), abs=1e-12)


# -- scikit-learn fit: pos_label, predict_proba outputs, make_scorer -----------------------


def test_predict_proba_columns_and_pos_label():
    from sklearn.datasets import make_classification
    from sklearn.linear_model import LogisticRegression

    X, y = make_classification(n_samples=600, random_state=0)
    clf = LogisticRegression().fit(X, y)
    proba = clf.predict_proba(X)  # (n, 2)
    p = proba[:, 1]
    for f in (fc.ece, fc.cdl, fc.k2, fc.vcdl, fc.ucal):
        assert f(y, proba, bins=10) == f(y, p, bins=10)
        assert f(y, p[:, None], bins=10) == f(y, p, bins=10)
    names = np.array(["no", "yes"])[y]
    clf_s = LogisticRegression().fit(X, names)
    assert list(clf_s.classes_) == ["no", "yes"]
    ps = clf_s.predict_proba(X)
    assert fc.ece(names, ps, pos_label="yes", bins=10) == fc.ece(y, ps[:, 1], bins=10)
    assert fc.ece(names, ps, pos_label="no", bins=10) == fc.ece(1 - y, ps[:, 0], bins=10)
    # as in sklearn.calibration.calibration_curve(pos_label=...)
    from sklearn.calibration import calibration_curve

    prob_true, _ = calibration_curve(names, ps[:, 1], n_bins=10, pos_label="yes")
    assert len(prob_true) == fc.bucket_stats(names, ps[:, 1], pos_label="yes", bins=10).n_buckets


def test_make_scorer_recipe_from_the_readme():
    # the recipe of README.md ("With scikit-learn"), run as written there
    import re
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    section = readme[readme.index("### With scikit-learn") :]
    code = re.search(r"```python\n(.*?)```", section, flags=re.S).group(1)
    namespace = {}
    exec(compile(code, "README scikit-learn recipe", "exec"), namespace)
    ece_scorer, top_label_ece = namespace["ece_scorer"], namespace["top_label_ece"]
    scores, digits_scores = namespace["cv_ece"], namespace["cv_top_label_ece"]
    assert np.all(scores <= 0) and np.all(scores > -0.5)  # greater_is_better=False: negated
    assert np.all(digits_scores <= 0) and np.all(digits_scores > -0.5)
    # the scorer is the metric of the fitted model's predict_proba
    from sklearn.datasets import load_breast_cancer, load_digits

    X, y = load_breast_cancer(return_X_y=True)
    clf = namespace["model"].fit(X, y)
    assert ece_scorer(clf, X, y) == -fc.ece(y, clf.predict_proba(X)[:, 1], bins=15)
    Xd, yd = load_digits(return_X_y=True)
    clf = namespace["model"].fit(Xd, yd)
    assert top_label_ece(clf, Xd, yd) == -fc.ece(yd, clf.predict_proba(Xd), multiclass="top-label", bins=15)
