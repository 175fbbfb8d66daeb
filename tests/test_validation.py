"""Bad input gets a ValueError naming the problem (the README's Usage section); good input is never modified."""

import re

import numpy as np
import pytest

import fastcdl as fc


# These tests check what is accepted, refused and left unmodified, on a few rounds with
# distinct predictions; that the exact metrics warn on such tables (SampleSizeWarning) is tested in
# tests/test_sample_size_warning.py, not here.
pytestmark = pytest.mark.filterwarnings("ignore::fastcdl.SampleSizeWarning")

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
    "3-D y_prob": (Y[:4], P[:4].reshape(1, 2, 2), {}, "1-D"),
    "y_prob with 3 columns": (Y[:2], np.full((2, 3), 1 / 3), {}, "multiclass="),
    "2-D y_prob of other length": (Y[:4], np.full((2, 2), 0.5), {}, "length"),
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


# -- structured errors: the fields say what the message says -----------------------------

FIELD_CASES = [
    # (y, p, kwargs, argument, index, value, reason)
    (Y, _with(P, 3, 1.5), {}, "y_prob", 3, 1.5, "must lie in [0, 1]"),
    (Y, _with(P, 3, 1.5, np.float32), {}, "y_prob", 3, 1.5, "must lie in [0, 1]"),
    (Y, _with(P, 2, np.nan), {}, "y_prob", 2, None, "contains NaN"),
    (_with(Y, 4, 7, np.int64), P, {}, "y_true", 4, 7, "must contain only 0 and 1 (bool or 0/1 numbers)"),
    (_with(Y, 4, 0.25, np.float16), P, {}, "y_true", 4, 0.25, "must contain only 0 and 1 (bool or 0/1 numbers)"),
    (Y, P, {"sample_weight": _with(np.ones(5), 1, -2.0)}, "sample_weight", 1, -2.0, "must be non-negative"),
    (Y, P, {"bins": 0}, "bins", None, 0, "must be a positive integer"),
]


@pytest.mark.parametrize("bins", [None, 4])
@pytest.mark.parametrize("case", range(len(FIELD_CASES)))
def test_validation_error_fields(case, bins):
    import pickle

    y, p, kw, argument, index, value, reason = FIELD_CASES[case]
    kw = {"bins": bins, **kw}
    with pytest.raises(fc.ValidationError) as e:
        fc.bucket_stats(y, p, **kw)
    err = e.value
    assert isinstance(err, ValueError)
    assert (err.argument, err.index, err.reason) == (argument, index, reason)
    if value is None:  # NaN
        assert np.isnan(err.value)
    else:
        assert err.value == value and type(err.value) in (int, float)
    msg = str(err)
    assert msg.startswith(f"{argument} {reason}") and "np." not in msg
    if index is not None:
        assert f"index {index} (0-based)" in msg
    if value is not None:
        assert repr(value) in msg
    again = pickle.loads(pickle.dumps(err))  # Dask ships errors between processes
    assert type(again) is fc.ValidationError and str(again) == msg
    assert (again.argument, again.index, again.reason) == (argument, index, reason)


def test_describe_rebuilds_the_message_from_fields():
    e = fc.ValidationError("y_prob", "must lie in [0, 1]", index=np.int64(3), value=np.float64(1.5))
    assert str(e) == "y_prob must lie in [0, 1]; found 1.5 at index 3 (0-based)"
    assert (
        e.describe("column 'p'", where="row 7 (0-based), line 9")
        == "column 'p' must lie in [0, 1]; found 1.5 at row 7 (0-based), line 9"
    )
    assert (
        e.describe(where="index 3 (0-based) of chunk 2")
        == "y_prob must lie in [0, 1]; found 1.5 at index 3 (0-based) of chunk 2"
    )
    nan = fc.ValidationError("y_prob", "contains NaN", index=4, value=float("nan"))
    assert str(nan) == "y_prob contains NaN, first at index 4 (0-based)"
    assert nan.describe("column 'p'", where="row 9 (0-based)") == "column 'p' contains NaN, first at row 9 (0-based)"
    grid = fc.ValidationError("P", "contains NaN", index=(2, 1), value=float("nan"))
    assert str(grid) == "P contains NaN, first at row 2 (0-based), column 1"


def test_other_checks_raise_validation_errors_with_plain_numbers():
    from fastcdl.online import make_adversary, make_forecaster

    with pytest.raises(fc.ValidationError) as e:
        fc.cdl_multiclass(np.array([0, 5, 1], dtype=np.int64), [[0.5, 0.5]] * 3)
    assert (e.value.argument, e.value.index, e.value.value) == ("y_true", 1, 5)
    assert "found 5 at index 1 (0-based)" in str(e.value) and "np." not in str(e.value)
    with pytest.raises(fc.ValidationError) as e:
        fc.cdl_multiclass([0, 1], [[0.5, 0.5], [1.5, -0.5]])
    assert e.value.index == (1, 0) and "found 1.5 at row 1 (0-based), column 0" in str(e.value)
    with pytest.raises(fc.ValidationError) as e:
        make_forecaster("cdl", horizon=10, m=np.int64(0))
    assert (e.value.argument, e.value.value, str(e.value)) == ("m", 0, "m must be >= 1, got 0")
    with pytest.raises(fc.ValidationError) as e:
        make_adversary("bernoulli", p=np.float64(1.5))
    assert (e.value.argument, e.value.value, str(e.value)) == ("p", 1.5, "p must be <= 1.0, got 1.5")


def test_preset_errors_keep_their_class_and_message():
    from fastcdl.experiments.presets import PresetError, load_preset, override, preset_from_dict

    raw = {
        "name": "t",
        "seeds": 1,
        "t_min": 64,
        "t_max": 256,
        "forecasters": [{"name": "cdl"}],
        "adversaries": [{"name": "bernoulli"}],
    }
    with pytest.raises(PresetError, match=re.escape("preset t: seeds must be an integer >= 2, got 1")):
        preset_from_dict(raw)
    with pytest.raises(PresetError, match=re.escape("seeds must be an integer, got 'x'")):
        override(load_preset("quick"), seeds="x")
    assert issubclass(PresetError, ValueError)


# -- one dtype for y: the kernels compile once -------------------------------------------

Y_DTYPES = [
    np.bool_,
    np.int8,
    np.int16,
    np.int32,
    np.int64,
    np.uint8,
    np.uint16,
    np.uint32,
    np.uint64,
    np.float16,
    np.float32,
    np.float64,
    np.longdouble,
    ">i4",
    ">f8",
]


@pytest.mark.parametrize("bins", [None, 3, np.array([0.0, 0.25, 1.0])])
def test_every_outcome_dtype_gives_the_same_table(bins):
    want = fc.bucket_stats(Y, P, bins=bins)
    want_w = fc.bucket_stats(Y, P, bins=bins, sample_weight=np.arange(5.0))
    for dt in Y_DTYPES:
        y = Y.astype(dt)
        assert fc.bucket_stats(y, P, bins=bins) == want, dt
        assert fc.bucket_stats(y, P, bins=bins, sample_weight=np.arange(5.0)) == want_w, dt


def test_outcomes_reach_the_kernels_as_uint8_only():
    """Every kernel compiles for uint8 outcomes only, but for the equal-width binning, which also
    reads float64 outcomes as they are (checking them itself: one pass instead of two)."""
    from fastcdl._compiled import buckets as kb
    from fastcdl._tables.outcome_keys import _RADIX_FROM

    reps = -(-_RADIX_FROM // Y.shape[0])  # the exact table's kernels build tables of 2^14 rounds or more
    for dt in Y_DTYPES:
        y = Y.astype(dt)
        for bins in (None, 3):
            fc.bucket_stats(y, P, bins=bins)
            fc.bucket_stats(y, P, bins=bins, sample_weight=np.ones(5))
        fc.bucket_stats(np.tile(y, reps), np.tile(P, reps))
    # y is the first argument of the grouping and binning kernels, the second of runs_weighted
    for kern, pos in ((kb.outcome_keys, 0), (kb.bin_rounds_weighted, 0), (kb.runs_weighted, 1)):
        types = {str(sig[pos].dtype) for sig in kern.signatures}
        assert types == {"uint8"}, (kern.__name__, types)
    assert {str(sig[0].dtype) for sig in kb.bin_rounds.signatures} == {"uint8", "float64"}


def test_float16_outcomes_and_probabilities():
    p16 = np.array([0.1, 0.9, 0.5, 0.5, 1.0], dtype=np.float16)
    y16 = Y.astype(np.float16)
    for bins in (None, 4):
        # float16 converts exactly to float64, so the table is that of the converted array
        want = fc.bucket_stats(Y, p16.astype(np.float64), bins=bins)
        assert fc.bucket_stats(y16, p16, bins=bins) == want
        assert fc.cdl(y16, p16, bins=bins) == fc.cdl(Y, p16.astype(np.float64), bins=bins)
    with _raises("nan"):
        fc.cdl(_with(Y, 1, np.nan, np.float16), P)
    with _raises("found 2.0 at index 0"):
        fc.cdl(_with(Y, 0, 2, np.float16), P, bins=3)
    with _raises("[0, 1]"):
        fc.cdl(Y, _with(P, 0, 1.5, np.float16))


def test_bad_probability_is_reported_before_bad_outcome():
    # both bad: the message names y_prob first, on both paths, as before
    for bins in (None, 3):
        with _raises("y_prob"):
            fc.bucket_stats(_with(Y, 0, 5, np.int64), _with(P, 1, 1.5), bins=bins)


# -- bins: a fixed ceiling, sound for chunked reading ------------------------------------


@pytest.mark.parametrize("bins", [(1 << 24) + 1, 10**9, np.int64(10**12)])
def test_huge_bins_are_refused_without_allocating(bins):
    with pytest.raises(fc.ValidationError) as e:
        fc.cdl([0, 1, 1, 0, 1], [0.1, 0.2, 0.3, 0.4, 0.5], bins=bins)
    assert e.value.argument == "bins" and e.value.value == int(bins)
    assert "bins must be at most 2^24 = 16777216" in str(e.value)


def test_bins_ceiling_does_not_depend_on_the_number_of_rounds(tmp_path, monkeypatch):
    import fastcdl.io

    # many more bins than rounds is fine (a chunk of a file may be smaller than the bins) ...
    assert fc.bucket_stats([1], [0.3], bins=100_000).n_buckets == 1
    # ... and chunks of 7 rows over 1000 bins merge to the table of the whole file
    rng = np.random.default_rng(0)
    p = rng.integers(0, 1025, 200) / 1024
    y = (rng.random(200) < p).astype(np.int64)
    f = tmp_path / "f.csv"
    f.write_text("y,p\n" + "".join(f"{a},{b!r}\n" for a, b in zip(y.tolist(), p.tolist())))
    monkeypatch.setattr(fastcdl.io, "CHUNK_ROWS", 7)
    assert fastcdl.io.read_stats(f, bins=1000) == fc.bucket_stats(y, p, bins=1000)
    with pytest.raises(fastcdl.io.InputError, match=re.escape("bins must be at most 2^24")):
        fastcdl.io.read_stats(f, bins=10**9)


# -- numpy masked arrays: np.asarray would drop the mask without a word ----------------------


@pytest.mark.parametrize("fn", [fc.cdl, fc.ece, fc.bucket_stats, fc.smce, fc.cdl_report])
@pytest.mark.parametrize("which", ["y_true", "y_prob", "sample_weight"])
def test_masked_arrays_are_refused(fn, which):
    y = np.array([0, 1, 1, 0, 1])
    p = np.array([0.2, 0.7, 0.5, 0.3, 0.9])
    w = np.ones(5)
    args = {"y_true": y, "y_prob": p, "sample_weight": w}
    args[which] = np.ma.masked_array(args[which], mask=[0, 0, 1, 0, 0])
    with pytest.raises(fc.ValidationError) as e:
        fn(args["y_true"], args["y_prob"], sample_weight=args["sample_weight"])
    assert (e.value.argument, e.value.index) == (which, 2)
    msg = str(e.value)
    assert msg.startswith(f"{which} is a numpy masked array with 1 masked entry (the first at index 2 (0-based))")
    assert f"{which}[~{which}.mask]" in msg


def test_masked_arrays_with_nothing_masked_are_read_as_their_data():
    y = np.array([0, 1, 1, 0])
    p = np.array([0.2, 0.7, 0.7, 0.2])
    assert fc.ece(np.ma.masked_array(y), np.ma.masked_array(p, mask=False)) == fc.ece(y, p)


def test_masked_class_probabilities_are_refused():
    P = np.ma.masked_array([[0.2, 0.8], [0.5, 0.5], [0.1, 0.9]], mask=[[0, 0], [0, 1], [0, 0]])
    for call in (
        lambda: fc.ece([0, 1, 1], P, multiclass="top-label"),
        lambda: fc.cdl_multiclass([0, 1, 1], P),
        lambda: fc.cdl([0, 1, 1], P),
    ):
        with pytest.raises(
            fc.ValidationError,
            match=r"masked array with 1 masked entry \(the first at row 1 "
            r"\(0-based\), column 1\).*\.mask\.any\(axis=1\)",
        ):
            call()
    labels = np.ma.masked_array(["a", "b", "a"], mask=[0, 1, 0])
    with pytest.raises(fc.ValidationError, match="y_true is a numpy masked array"):
        fc.cdl(labels, [0.2, 0.5, 0.3], pos_label="a")
    with pytest.raises(fc.ValidationError, match="payoff is a numpy masked array"):
        fc.cfdl([0, 1], [0.2, 0.7], payoff=np.ma.masked_array([[1.0, 0.0], [0.0, 1.0]], mask=[[1, 0], [0, 0]]))


def test_horizons_beyond_64_bit_counts_are_refused():
    from fastcdl.experiments import load_preset, override
    from fastcdl.experiments.presets import PresetError, parse_horizon
    from fastcdl.online import simulate

    with pytest.raises(fc.ValidationError, match=r"^horizon must be at most 2\^62"):
        simulate("cdl", "bernoulli", horizon=2**70, seed=0)
    assert parse_horizon("2^62") == 2**62 and parse_horizon("1e6") == 10**6
    for text in ("2^70", "2^63", str(2**62 + 1), "1e30", "2^1000000000"):
        with pytest.raises(PresetError, match=rf"^--t-max must be at most 2\^62 .*got '{re.escape(text)}'"):
            parse_horizon(text, "--t-max")
    with pytest.raises(PresetError, match=r"^--t must be an integer or 2\^k with k >= 1, got '2\^-3'"):
        parse_horizon("2^-3", "--t")
    with pytest.raises(PresetError, match=r"^t_max must be at most 2\^62"):
        override(load_preset("quick"), t_max="2^70")
    with pytest.raises(PresetError, match=r"^master_seed must be an integer >= 0, got -1"):
        override(load_preset("quick"), master_seed=-1)


@pytest.mark.parametrize("size", [1, 7, 1 << 14, (1 << 14) + 5])
def test_small_inputs_are_checked_in_numpy_with_the_kernels_answers(size):
    """Below _validate.SMALL values the checks run in numpy (no compile); from it on, in the
    kernels. Both give the same first bad index and the same 0/1 bytes, for every dtype of y."""
    from fastcdl import _validate
    from fastcdl._compiled import buckets as kb

    assert _validate.SMALL == 1 << 14  # the sizes above straddle it
    rng = np.random.default_rng(size)
    for bad in (np.nan, -0.25, 1.5, np.inf):
        p = rng.random(size)
        w = rng.random(size)
        for i in sorted({0, size // 2, size - 1}):
            q, v = p.copy(), w.copy()
            q[i] = bad
            assert _validate.first_bad_prob(q) == kb.first_bad_prob(q) == i
            if not (bad >= 0 and bad < np.inf):
                v[i] = bad
                assert _validate.first_bad_weight(v) == kb.first_bad_weight(v) == i
        assert _validate.first_bad_prob(p) == kb.first_bad_prob(p) == -1
        assert _validate.first_bad_weight(w) == -1
    for dtype in (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint64, np.float32, np.float64):
        y = (rng.random(size) < 0.5).astype(dtype)
        got, i = _validate._outcomes_u8(y)
        out = np.empty(size, np.uint8)
        want = kb.outcomes_to_u8(y, out) if dtype != np.uint8 else kb.first_bad_outcome(y)
        assert i == want == -1 and got.dtype == np.uint8 and np.array_equal(got, (y == 1).view(np.uint8))
        y[size // 2] = 2
        assert _validate._outcomes_u8(y) == (None, size // 2)
        assert _validate.first_bad_outcome(y) == kb.first_bad_outcome(y) == size // 2
