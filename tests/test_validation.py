"""Bad input gets a ValueError naming the problem (the README's Usage section); good input is never modified."""

import re

import numpy as np
import pytest

import fastcdl as fc

Y = np.array([0, 1, 1, 0, 1])
P = np.array([0.1, 0.9, 0.5, 0.5, 1.0])

# Every public entry point that takes (y_true, y_prob, *, bins, sample_weight).
ENTRY_POINTS = {
    "bucket_stats": fc.bucket_stats,
    "ece": fc.ece,
    "k2": fc.k2,
    "vcdl": fc.vcdl,
    "cdl": fc.cdl,
    "ucal": fc.ucal,
    "cdl_report": fc.cdl_report,
    "cfdl_payoff": lambda y, p, **kw: fc.cfdl(y, p, payoff=[[1.0, 0.0], [0.0, 1.0]], **kw),
    "cfdl_kink": lambda y, p, **kw: fc.cfdl(y, p, kink=0.3, **kw),
    "swap_regret": lambda y, p, **kw: fc.swap_regret(y, p, payoff=[[1.0, 0.0], [0.0, 1.0]], **kw),
    "decision_loss_curve": lambda y, p, **kw: fc.decision_loss_curve(y, p, kinks=[0.2, 0.5], **kw),
}
entry_points = pytest.mark.parametrize("fn", list(ENTRY_POINTS.values()), ids=list(ENTRY_POINTS))


def _raises(needle):
    return pytest.raises(ValueError, match=re.compile(re.escape(needle), re.IGNORECASE))


def _with(arr, i, value, dtype=np.float64):
    out = np.array(arr, dtype=dtype)
    out[i] = value
    return out


BAD_ROUNDS = {
    "nan in y_prob": (Y, _with(P, 2, np.nan), {}, "nan"),
    "inf in y_prob": (Y, _with(P, 1, np.inf), {}, "infinite"),
    "-inf in y_prob": (Y, _with(P, 1, -np.inf), {}, "infinite"),
    "y_prob above 1": (Y, _with(P, 3, 1.5), {}, "[0, 1]"),
    "y_prob below 0": (Y, _with(P, 0, -0.1), {}, "[0, 1]"),
    "y_prob just above 1": (Y, _with(P, 0, np.nextafter(1.0, 2.0)), {}, "[0, 1]"),
    "nan in y_true": (_with(Y, 1, np.nan), P, {}, "nan"),
    "inf in y_true": (_with(Y, 1, np.inf), P, {}, "infinite"),
    "y_true 2": (_with(Y, 0, 2, np.int64), P, {}, "0 and 1"),
    "y_true -1": (_with(Y, 4, -1, np.int64), P, {}, "0 and 1"),
    "y_true 0.5": (_with(Y, 2, 0.5), P, {}, "0 and 1"),
    "length mismatch": (Y, P[:-1], {}, "length"),
    "empty": (np.array([], dtype=np.int64), np.array([]), {}, "empty"),
    "2-D y_prob": (Y[:4], P[:4].reshape(2, 2), {}, "1-D"),
    "2-D y_true": (Y[:4].reshape(2, 2), P[:4], {}, "1-D"),
    "scalar y_prob": (Y[:1], 0.5, {}, "1-D"),
    "negative weight": (Y, P, {"sample_weight": _with(np.ones(5), 2, -1.0)}, "non-negative"),
    "nan weight": (Y, P, {"sample_weight": _with(np.ones(5), 2, np.nan)}, "nan"),
    "inf weight": (Y, P, {"sample_weight": _with(np.ones(5), 2, np.inf)}, "infinite"),
    "weight length": (Y, P, {"sample_weight": np.ones(4)}, "length"),
    "2-D weight": (Y[:4], P[:4], {"sample_weight": np.ones((2, 2))}, "1-D"),
    "all-zero weights": (Y, P, {"sample_weight": np.zeros(5)}, "zero"),
    "bins 0": (Y, P, {"bins": 0}, "bins"),
    "bins negative": (Y, P, {"bins": -3}, "bins"),
    "bins float": (Y, P, {"bins": 2.5}, "bins"),
    "bins bool": (Y, P, {"bins": True}, "bins"),
    "bins string": (Y, P, {"bins": "10"}, "bins"),
    "edges not increasing": (Y, P, {"bins": np.array([0.0, 0.6, 0.4, 1.0])}, "edges"),
    "edges repeated": (Y, P, {"bins": np.array([0.0, 0.5, 0.5, 1.0])}, "edges"),
    "edges not from 0": (Y, P, {"bins": np.array([0.1, 0.5, 1.0])}, "edges"),
    "edges not to 1": (Y, P, {"bins": np.array([0.0, 0.5, 0.9])}, "edges"),
    "edges with nan": (Y, P, {"bins": np.array([0.0, np.nan, 1.0])}, "edges"),
    "single edge": (Y, P, {"bins": np.array([0.0])}, "edges"),
}


@entry_points
@pytest.mark.parametrize("case", list(BAD_ROUNDS))
def test_bad_rounds_raise_naming_the_problem(fn, case):
    y, p, kw, needle = BAD_ROUNDS[case]
    with _raises(needle):
        fn(y, p, **kw)


@pytest.mark.parametrize("case", ["nan in y_prob", "y_prob above 1", "y_true 2", "nan in y_true"])
def test_bad_values_are_found_on_the_binned_path_too(case):
    y, p, _, needle = BAD_ROUNDS[case]
    for bins in (4, np.array([0.0, 0.3, 1.0])):
        with _raises(needle):
            fc.bucket_stats(y, p, bins=bins)
        with _raises(needle):
            fc.bucket_stats(y, p, bins=bins, sample_weight=np.ones(5))


@pytest.mark.parametrize(
    "payoff",
    [[1.0, 0.0], [[1.0, 0.0, 0.5]], np.ones((2, 3)), np.ones((2, 2, 1)), np.ones((0, 2))],
    ids=["1-D", "3 columns", "2x3", "3-D", "no actions"],
)
def test_payoff_of_wrong_shape(payoff):
    with _raises("shape"):
        fc.cfdl(Y, P, payoff=payoff)
    with _raises("shape"):
        fc.swap_regret(Y, P, payoff=payoff)


@pytest.mark.parametrize(
    "payoff, needle",
    [([[1.5, 0.0], [0.0, 1.0]], "[0, 1]"), ([[-0.1, 0.0], [0.0, 1.0]], "[0, 1]"), ([[np.nan, 0.0]], "nan")],
)
def test_payoff_outside_unit_interval(payoff, needle):
    with _raises(needle):
        fc.cfdl(Y, P, payoff=payoff)
    with _raises(needle):
        fc.swap_regret(Y, P, payoff=payoff)


@pytest.mark.parametrize("kink", [-0.1, 1.5, np.nan, np.inf])
def test_kink_outside_unit_interval(kink):
    with _raises("kink"):
        fc.cfdl(Y, P, kink=kink)
    with _raises("kink"):
        fc.decision_loss_curve(Y, P, kinks=[0.5, kink])


def test_payoff_and_kink_exactly_one():
    with pytest.raises(ValueError, match=re.compile(r"payoff.*kink", re.IGNORECASE)):
        fc.cfdl(Y, P, payoff=[[1.0, 0.0]], kink=0.5)
    with pytest.raises(ValueError, match=re.compile(r"payoff.*kink", re.IGNORECASE)):
        fc.cfdl(Y, P)


def test_bucket_stats_with_extra_arguments_is_refused():
    stats = fc.bucket_stats(Y, P)
    with pytest.raises(ValueError, match="BucketStats"):
        fc.cdl(stats, P)
    with pytest.raises(ValueError, match="BucketStats"):
        fc.cdl(stats, bins=3)


def test_missing_y_prob():
    with _raises("y_prob"):
        fc.cdl(Y)


@entry_points
def test_bool_and_float_outcomes_are_accepted(fn):
    as_int = fn(Y, P)
    for y in (Y.astype(bool), Y.astype(np.float64), Y.astype(np.float32), Y.astype(np.uint8), Y.tolist()):
        got = fn(y, P)
        if isinstance(got, tuple):
            assert all(np.array_equal(a, b) for a, b in zip(got, as_int))
        elif isinstance(got, fc.BucketStats):
            assert got == as_int
        elif isinstance(got, fc.CDLReport):
            assert got.value == as_int.value and np.array_equal(got.payoff, as_int.payoff)
        else:
            assert got == as_int


@entry_points
def test_inputs_are_never_modified(fn):
    y = Y.copy()
    p = P.copy()
    w = np.array([1.0, 2.0, 0.5, 0.0, 3.0])
    edges = np.array([0.0, 0.2, 0.5, 1.0])
    y_bool = Y.astype(bool)
    before = [a.copy() for a in (y, p, w, edges, y_bool)]
    fn(y, p)
    fn(y, p, sample_weight=w)
    fn(y_bool, p, bins=edges, sample_weight=w)
    fn(y, p, bins=3)
    for a, b in zip((y, p, w, edges, y_bool), before):
        assert np.array_equal(a, b) and a.dtype == b.dtype
        assert a.flags.writeable, "an input array was made read-only (kept by reference?)"


def test_payoff_and_kinks_are_never_modified():
    u = np.array([[0.7, 0.2], [0.1, 0.9], [0.5, 0.5]])
    kinks = np.array([0.9, 0.1, 0.5])
    u0, k0 = u.copy(), kinks.copy()
    fc.cfdl(Y, P, payoff=u)
    fc.swap_regret(Y, P, payoff=u)
    fc.decision_loss_curve(Y, P, kinks=kinks)
    assert np.array_equal(u, u0) and np.array_equal(kinks, k0)
