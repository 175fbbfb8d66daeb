"""Statistical sanity of the online forecasters with fixed seeds (no timing)."""

import os

import numpy as np
import pytest

from fastcdl.online import simulate

SEEDS = range(8)


def _mean(metric, forecaster, adversary, T, **params):
    return np.mean([getattr(simulate(forecaster, adversary, horizon=T, seed=s, **params), metric) for s in SEEDS])


def test_cdl_forecaster_cdl_decreases_with_T_against_fair_coin():
    horizons = [2**10, 2**12, 2**14, 2**16]
    means = [_mean("cdl", "cdl", "bernoulli", T) for T in horizons]
    print("cdl vs bernoulli(1/2), mean CDL over 8 seeds:", dict(zip(horizons, np.round(means, 5))))
    assert all(b < a for a, b in zip(means, means[1:])), means
    slope = np.polyfit(np.log(horizons), np.log(means), 1)[0]
    assert -0.8 < slope < -0.2, slope


def test_cdl_forecaster_stays_calibrated_against_greedy():
    """The adaptive greedy adversary breaks the frequency forecaster (CDL near 1) but not Algorithm 1,
    whose CDL stays at the rounding offset, about 1/m (docs/experiments.md)."""
    T = 2**14
    m = simulate("cdl", "greedy", horizon=T).params["forecaster"]["m"]
    cdl = _mean("cdl", "cdl", "greedy", T)
    freq = _mean("cdl", "frequency", "greedy", T)
    assert cdl < 1.2 / m and freq > 0.5


@pytest.mark.skipif(os.environ.get("FASTCDL_SLOW") != "1", reason="set FASTCDL_SLOW=1")
def test_cdl_rate_against_drift_slow():
    horizons = [2**14, 2**16, 2**18, 2**20]
    means = [_mean("cdl", "cdl", "drift", T) for T in horizons]
    slope = np.polyfit(np.log(horizons), np.log(means), 1)[0]
    print("cdl vs drift slope", slope, means)
    assert -0.7 < slope < -0.3
