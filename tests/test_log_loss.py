"""fc.log_loss against its definition round by round (tests/reference.py), scikit-learn away from
0 and 1, and its conventions at 0 and 1 (never clipped)."""

import math

import numpy as np
import pytest

import fastcdl as fc
from reference import log_loss_ref


@pytest.mark.parametrize("seed", range(4))
def test_log_loss_is_its_definition_from_rounds_and_from_the_table(seed):
    rng = np.random.default_rng(seed)
    p = np.round(rng.random(300), 2)  # ties: the table has fewer buckets than rounds
    p = np.clip(p, 0.01, 0.99)
    y = (rng.random(300) < p).astype(int)
    want = log_loss_ref(y, p)
    assert fc.log_loss(y, p) == pytest.approx(want, rel=1e-12)
    assert fc.log_loss(fc.bucket_stats(y, p)) == pytest.approx(want, rel=1e-12)
    assert fc.MEASURES["log_loss"](fc.bucket_stats(y, p)) == pytest.approx(want, rel=1e-12)


def test_log_loss_agrees_with_scikit_learn_away_from_0_and_1():
    sk = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(1)
    p = rng.uniform(0.05, 0.95, 500)
    y = (rng.random(500) < p).astype(int)
    w = rng.integers(1, 4, 500).astype(float)
    assert fc.log_loss(y, p) == pytest.approx(sk.log_loss(y, p), rel=1e-12)
    assert fc.log_loss(y, p, sample_weight=w) == pytest.approx(sk.log_loss(y, p, sample_weight=w), rel=1e-12)


def test_integer_weights_are_repeated_rounds():
    y, p, w = np.array([0, 1, 1, 0]), np.array([0.2, 0.7, 0.5, 0.5]), np.array([1.0, 3.0, 2.0, 1.0])
    assert fc.log_loss(y, p, sample_weight=w) == pytest.approx(
        fc.log_loss(np.repeat(y, w.astype(int)), np.repeat(p, w.astype(int))), rel=1e-14
    )


@pytest.mark.parametrize(
    ("y", "p", "want"),
    [
        ([1], [1.0], 0.0),  # certain and right: 0 log 0 = 0
        ([0], [0.0], 0.0),
        ([1, 0], [1.0, 0.0], 0.0),
        ([1], [0.0], math.inf),  # certain and wrong: never clipped
        ([0, 1], [1.0, 0.5], math.inf),
        ([0, 1], [0.5, 0.5], math.log(2.0)),
    ],
)
def test_edges_at_0_half_and_1(y, p, want):
    assert fc.log_loss(y, p) == want
    assert fc.log_loss(fc.bucket_stats(y, p)) == want
    assert log_loss_ref(y, p) == want


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="y_prob"):
        fc.log_loss([0, 1], [0.5, 1.5])
    with pytest.raises(ValueError, match="binned"):
        fc.log_loss(fc.bucket_stats([0, 1, 1], [0.2, 0.6, 0.7], bins=2))
    with pytest.raises(ValueError, match="y_prob"):
        fc.log_loss([0, 1])


def test_classwise_is_one_binary_log_loss_per_class():
    y = np.array([0, 1, 2, 1])
    P = np.array([[0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.2, 0.2, 0.6], [0.3, 0.4, 0.3]])
    per = fc.log_loss(y, P, multiclass="classwise").per_class
    for k in range(3):
        assert per[k] == pytest.approx(log_loss_ref((y == k).astype(int), P[:, k]), rel=1e-12)
