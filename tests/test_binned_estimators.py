"""The binned estimators of the literature (fastcdl.k2_debiased, fastcdl.ece_sweep) against
their references (tests/sample_reference.py), at edges, and the debiasing's exactness."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st_

import fastcdl as fc
from sample_reference import ece_sweep_ref, k2_debiased_edges_ref, k2_debiased_ref

PRED = st_.sampled_from([0.0, 0.1, 0.25, 0.5, 0.5, 0.6, 0.75, 0.9, 1.0, 0.3333, 0.8])


@settings(max_examples=60, deadline=None)
@given(st_.lists(st_.tuples(st_.integers(0, 1), PRED), min_size=1, max_size=14))
def test_ece_sweep_matches_its_definition(rounds):
    y, p = map(np.array, zip(*rounds))
    assert fc.ece_sweep(y, p) == pytest.approx(ece_sweep_ref(y, p), abs=1e-12)


@settings(max_examples=40, deadline=None)
@given(st_.lists(st_.tuples(st_.integers(0, 1), PRED, st_.sampled_from([0.5, 1.0, 2.0, 3.0])), min_size=1, max_size=10))
def test_ece_sweep_with_weights_matches_its_definition(rounds):
    y, p, w = map(np.array, zip(*rounds))
    assert fc.ece_sweep(y, p, sample_weight=w) == pytest.approx(ece_sweep_ref(y, p, w), abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(st_.lists(st_.tuples(st_.integers(0, 1), st_.floats(0, 1)), min_size=8, max_size=40))
# an equal-mass edge one ulp below 1: its slack puts the rounds at 1 in the lower bin
@example([(0, 0.0)] * 3 + [(0, 1.0)] * 4 + [(0, 0.9999999999999999)])
def test_k2_debiased_matches_its_definition(rounds):
    y, p = map(np.array, zip(*rounds))
    got = fc.k2_debiased(y, p)
    assert got == pytest.approx(k2_debiased_ref(y, p), abs=1e-12)


@settings(max_examples=40, deadline=None)
@given(st_.lists(st_.tuples(st_.integers(0, 1), PRED), min_size=8, max_size=30))
def test_k2_debiased_merges_bins_of_one_round_like_its_definition(rounds):
    y, p = map(np.array, zip(*rounds))  # few distinct predictions: tied buckets, lone rounds
    assert fc.k2_debiased(y, p) == pytest.approx(k2_debiased_ref(y, p), abs=1e-12)


def test_k2_debiased_merges_a_lone_round():
    # 27 rounds, 3 equal-mass bins: the tied 0.5s fill the first two, 0.9 is alone in the third
    y = [0, 1] * 13 + [1]
    p = [0.5] * 26 + [0.9]
    st = fc.bucket_stats(y, p, bins="auto", strategy="quantile")
    assert 1 in st.counts.tolist()
    want = 27 * ((14 / 27 - (13 + 0.9) / 27) ** 2 - (14 / 27) * (13 / 27) / 26) / 27
    assert fc.k2_debiased(y, p) == pytest.approx(want, abs=1e-12)
    assert fc.k2_debiased(y, p) == pytest.approx(k2_debiased_ref(y, p), abs=1e-12)


def test_k2_debiased_on_given_bins():
    rng = np.random.default_rng(3)
    p = rng.random(60)
    y = (rng.random(60) < p).astype(int)
    edges = [0.0, 0.3, 0.5, 1.0]
    assert fc.k2_debiased(y, p, bins=edges) == pytest.approx(k2_debiased_edges_ref(y, p, edges), abs=1e-12)


@pytest.mark.parametrize("q, n", [((0.2, 0.7), (3, 4)), ((0.0, 0.5, 1.0), (2, 3, 2)), ((0.5,), (5,))])
def test_k2_debiased_is_unbiased_for_the_binned_error(q, n):
    """Rounds of a bin sharing their prediction and their chance c of y = 1: the expectation
    over every outcome, computed exactly, is sum_b (n_b / T) (c_b - q_b)^2."""
    c = [min(max(v + 0.15, 0.0), 1.0) if v < 1 else 0.6 for v in q]
    p = np.repeat(q, n)
    T = sum(n)
    edges = [0.0] + [(a + b) / 2 for a, b in zip(q[:-1], q[1:])] + [1.0]
    expect = 0.0
    for ys in itertools.product((0, 1), repeat=T):
        prob = math.prod(cb if yt else 1 - cb for yt, cb in zip(ys, np.repeat(c, n)))
        expect += prob * fc.k2_debiased(np.array(ys), p, bins=edges)
    want = sum(nb * (cb - qb) ** 2 for nb, cb, qb in zip(n, c, q)) / T
    assert expect == pytest.approx(want, abs=1e-12)
    # the plug-in binned K2 is biased upwards by the bins' variance
    plug = sum(
        prob_y * fc.k2(np.array(ys), p, bins=edges)
        for ys, prob_y in (
            (ys, math.prod(cb if yt else 1 - cb for yt, cb in zip(ys, np.repeat(c, n))))
            for ys in itertools.product((0, 1), repeat=T)
        )
    )
    assert plug > want + 1e-3


def test_ece_sweep_edges():
    assert fc.ece_sweep([0, 1, 0, 1], [0.1, 0.2, 0.6, 0.9]) == pytest.approx(0.3)
    # one bucket: one bin, the plain ECE
    assert fc.ece_sweep([0, 1, 1], [0.5, 0.5, 0.5]) == pytest.approx(1 / 6)
    # predictions at 0 and 1, perfectly calibrated: 0
    assert fc.ece_sweep([0, 0, 1, 1], [0.0, 0.0, 1.0, 1.0]) == 0.0
    # frequencies that increase at every split: the sweep runs to one bin per bucket
    y, p = [0, 0, 1, 1], [0.1, 0.2, 0.3, 0.4]
    assert fc.ece_sweep(y, p) == pytest.approx((0.1 + 0.2 + 0.7 + 0.6) / 4)


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="bins=None"):
        fc.ece_sweep([0, 1], [0.2, 0.7], bins=2)
    with pytest.raises(ValueError, match="unweighted"):
        fc.k2_debiased([0, 1] * 5, [0.2, 0.7] * 5, sample_weight=[1.0, 2.0] * 5)
    with pytest.raises(ValueError, match="one"):
        fc.k2_debiased([0, 1, 1], [0.2, 0.7, 0.7], bins=[0.0, 0.5, 1.0])


def test_registered_as_sample_estimators_with_intervals():
    assert fc.MEASURES["k2_debiased"].cli_interval and not fc.MEASURES["k2_debiased"].interval_fails
    # the study found no valid interval for ECE_sweep: the CLI prints none, interval says so every time
    assert not fc.MEASURES["ece_sweep"].cli_interval and fc.MEASURES["ece_sweep"].interval_fails
    for key in ("k2_debiased", "ece_sweep"):
        assert fc.MEASURES[key].sample and fc.MEASURES[key].studied
    rng = np.random.default_rng(0)
    p = rng.random(6000)
    y = rng.random(6000) < p
    st = fc.bucket_stats(y, p)
    assert fc.MEASURES["ece_sweep"](st) == fc.ece_sweep(y, p)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", fc.CoverageWarning)
        r = fc.interval("k2_debiased", y, p, n_sub=100, seed=0)
    assert r.validated is True and r.rate is None and r.estimate == r.value
    for metric in ("ece_sweep", fc.ece_sweep):
        with pytest.warns(fc.CoverageWarning, match="no valid interval for ece_sweep"):
            r = fc.interval(metric, y, p, n_sub=100, seed=0)
        assert r.validated is False
