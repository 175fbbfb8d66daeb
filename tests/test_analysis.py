"""Analysis of rate experiments: paired differences, window halves, fits of predicted forms,
and the common random numbers that make pairs (docs/experiments.md)."""

import json
import math

import numpy as np
import pytest
from scipy import stats

from fastcdl.experiments import form_fits, paired, trial_seed
from fastcdl.experiments.analysis import analyze
from fastcdl.online.simulate import trace

HORIZONS = [2**k for k in range(10, 19)]


def _rows(values, forecaster="f", adversary="a", name=None, params="{}", metric="cdl"):
    """Rows of one cell from values[T index][seed]."""
    out = []
    for j, T in enumerate(HORIZONS):
        for s, v in enumerate(values[j]):
            r = {
                "forecaster_label": forecaster,
                "adversary_label": adversary,
                "T": T,
                "seed_index": s,
                metric: float(v),
            }
            if name is not None:
                r.update(forecaster=name, forecaster_params=params)
            out.append(r)
    return out


def _jackknife_slope_diff_reference(T, V1, V2):
    """From the definition: delete seed i from both forecasters, refit both slopes."""
    x = np.log(T)
    fit = lambda V: np.polyfit(x, np.log(V.mean(axis=1)), 1)[0]  # noqa: E731
    n = V1.shape[1]
    full = fit(V1) - fit(V2)
    loo = np.array([fit(np.delete(V1, i, 1)) - fit(np.delete(V2, i, 1)) for i in range(n)])
    se = math.sqrt((n - 1) / n * ((loo - loo.mean()) ** 2).sum())
    t = stats.t.ppf(0.975, n - 1)
    return full, full - t * se, full + t * se


def test_paired_differences_and_slope_differences():
    rng = np.random.default_rng(3)
    T = np.array(HORIZONS, dtype=float)
    common = np.exp(rng.normal(0, 0.3, (len(T), 10)))  # what the shared adversary stream does to both
    V1 = 0.5 * T[:, None] ** -0.4 * common * np.exp(rng.normal(0, 0.05, (len(T), 10)))
    V2 = 0.4 * T[:, None] ** -0.5 * common * np.exp(rng.normal(0, 0.05, (len(T), 10)))
    rows = _rows(V1, "b") + _rows(V2, "a")
    diffs, slope_diffs = paired(rows, ["cdl"], seed=1)
    assert len(diffs) == len(HORIZONS)
    for d, v1, v2 in zip(diffs, V2, V1):  # forecaster "a" is first by label: a - b
        assert (d["forecaster"], d["baseline"]) == ("a", "b")
        assert d["mean_diff"] == pytest.approx((v1 - v2).mean(), rel=1e-12)
        assert d["lo"] < d["mean_diff"] < d["hi"]
        assert d["ratio"] == pytest.approx(v1.mean() / v2.mean())
        assert d["corr"] == pytest.approx(np.corrcoef(v1, v2)[0, 1])
        assert d["corr"] > 0.8 and d["n_seeds"] == 10
    (s,) = slope_diffs
    window = HORIZONS[len(HORIZONS) // 2 :]
    k = len(HORIZONS) - len(window)
    ref = _jackknife_slope_diff_reference(np.array(window, dtype=float), V2[k:], V1[k:])
    assert (s["slope_diff"], s["lo"], s["hi"]) == pytest.approx(ref, rel=1e-9)
    assert s["lo"] < -0.1 < s["hi"] and s["hi"] < 0  # the true difference -0.5 - (-0.4), resolved
    # pairing is what resolves it: the paired interval is narrower than the two slopes' own
    _, slopes, _ = analyze(rows, ["cdl"])
    own = sum(x["slope_hi"] - x["slope_lo"] for x in slopes) / 2
    assert s["hi"] - s["lo"] < own / 3


def test_window_halves_see_a_bend():
    T = np.array(HORIZONS, dtype=float)
    # slope -0.3 up to 2^16, -0.6 after: a secant over 2^14..2^18 hides the bend, the halves show it
    mean = np.where(T <= 2**16, T**-0.3, 2 ** (16 * 0.3) * T**-0.6)
    rng = np.random.default_rng(1)
    V = mean[:, None] * rng.gamma(10000, 1 / 10000, (len(T), 8))
    (s,) = analyze(_rows(V), ["cdl"])[1]
    assert (s["t_min_fit"], s["first_half_t_max"], s["second_half_t_min"], s["t_max_fit"]) == (
        2**14,
        2**16,
        2**16,
        2**18,
    )
    assert s["first_half_lo"] < -0.3 < s["first_half_hi"]
    assert s["second_half_lo"] < -0.6 < s["second_half_hi"]
    assert s["second_half_hi"] < s["first_half_lo"]


def _m(T, scale=1.0):
    return max(2, math.ceil(scale * math.sqrt(T) / math.log(T)))


@pytest.mark.parametrize("scale", [1.0, 4.0])
def test_forms_recover_their_constants(scale):
    T = np.array(HORIZONS, dtype=float)
    rng = np.random.default_rng(1)
    noise = rng.gamma(2000, 1 / 2000, (len(T), 6))
    over_m = 1.3 / np.array([_m(t, scale) for t in HORIZONS])
    log_root = 0.7 * np.log(T) / np.sqrt(T)
    params = json.dumps({"m_scale": scale})
    rows = (
        _rows(over_m[:, None] * noise, "cdl x", "a", "cdl", params)
        + _rows(log_root[:, None] * noise, "cdl x", "a", "cdl", params, metric="ece")
        + _rows(over_m[:, None] * noise, "f", "a", "frequency", "{}")
    )
    fits = {(f["metric"], f["form"]): f for f in form_fits(rows, ["cdl", "ece"])}
    assert set(fits) == {(m, f) for m in ("cdl", "ece") for f in ("c / m", "c ln T / sqrt T")}  # frequency: none
    a, b = fits[("cdl", "c / m")], fits[("ece", "c ln T / sqrt T")]
    assert a["c"] == pytest.approx(1.3, rel=0.01) and a["c_lo"] < 1.3 < a["c_hi"]
    assert b["c"] == pytest.approx(0.7, rel=0.01) and b["c_lo"] < 0.7 < b["c_hi"]
    for f in (a, b):
        assert f["rms_log_residual"] < 0.02
        assert f["residual_slope_lo"] < 0 < f["residual_slope_hi"]


def test_forms_reject_a_decay_of_another_form():
    """T^-1/3 is neither c ln T / sqrt T nor c / m (m ~ sqrt T / ln T): both residual slopes are
    resolved near -1/3 + 1/2 - 1/ln T, about 0.08 here, and the residuals exceed a free power law's."""
    T = np.array(HORIZONS, dtype=float)
    rng = np.random.default_rng(2)
    rows = _rows(0.5 * T[:, None] ** (-1 / 3) * rng.gamma(400, 1 / 400, (len(T), 8)), "cdl", "a", "cdl", "{}")
    fits = form_fits(rows, ["cdl"])
    assert len(fits) == 2
    for f in fits:
        assert 0.03 < f["residual_slope_lo"] < f["residual_slope"] < f["residual_slope_hi"] < 0.15
        assert f["rms_log_residual"] > 2 * f["power_law_rms_log_residual"]


def test_foster_form_uses_its_cube_root_grid():
    m = np.array([math.ceil(t ** (1 / 3) - 1e-9) for t in HORIZONS])
    rows = _rows(np.repeat((2.0 / m)[:, None], 3, axis=1), "foster", "a", "foster", "{}")
    (f,) = form_fits(rows, ["cdl"])
    assert f["form"] == "c / m" and f["c"] == pytest.approx(2.0, rel=1e-12)
    assert f["c_lo"] == pytest.approx(2.0) and f["rms_log_residual"] < 1e-12


@pytest.mark.parametrize("adversary", ["bernoulli", "drift", "markov"])
def test_a_seed_gives_the_adversary_the_same_stream_whichever_forecaster_plays(adversary):
    """Common random numbers: an oblivious stochastic adversary's outcomes depend on the seed only."""
    seed = trial_seed(20261122, 3)
    ys = [trace(f, adversary, horizon=3000, seed=seed)[2] for f in ("cdl", "foster", "kt", "frequency")]
    assert all(np.array_equal(ys[0], y) for y in ys[1:])
    other = trace("cdl", adversary, horizon=3000, seed=trial_seed(20261122, 4))[2]
    assert not np.array_equal(ys[0], other)
