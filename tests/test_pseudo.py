"""The expected-count table (RunResult.pseudo_stats) and the measures added to the trials:
smce, klcal and the pseudo measures (docs/pseudo.md).

References from the definitions: the expected-count table summed round by round from the
per-round API's distributions; KL-calibration term by term (tests/reference.py kl_ref);
every new trial column recomputed from the trial's stored tables.
"""

import dataclasses
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import user_plugins
from fastcdl.experiments import load_preset, plan
from fastcdl.experiments.runner import run_trial
from fastcdl.experiments.store import TrialStore, pack_table, unpack_table
from fastcdl.kl_calibration import kl_calibration
from fastcdl.online import make_adversary, make_forecaster, registry, simulate
from fastcdl.online.versions import algorithm_version
from fastcdl.bucket_table import BucketStats
from fastcdl.trial_measures import METRICS
from reference import REGISTRY, cdl_envelope_ref, ece_ref, k2_ref, kl_ref

NEW = ("smce", "klcal", "pseudo_ece", "pseudo_k2", "pseudo_klcal", "pseudo_cdl")


def _expected_counts(forecaster, adversary, T, seed, **params):
    """{stated value: (sum_t P_t(j), sum_t P_t(j) y_t)} summed round by round from the per-round
    API's published distributions, in the order of their entries."""
    f = make_forecaster(forecaster, horizon=T, seed=seed, **params)
    a = make_adversary(adversary, horizon=T, seed=seed)
    w = {}
    for _ in range(T):
        fc = f.forecast()
        y = a.respond(fc)
        p = f.draw()
        f.observe(y)
        a.observe(p, y)
        for prob, q in zip(fc.probs, fc.predictions):
            old = w.get(q, (0.0, 0.0))
            w[q] = (old[0] + prob, old[1] + (prob if y == 1 else 0.0))
    return w


@pytest.mark.parametrize(
    "forecaster,adversary,params",
    [
        ("kt", "contrarian", {}),
        ("ftpl", "bernoulli", {}),
        ("cdl", "greedy", {}),
        (user_plugins.SPREAD, "contrarian", {}),
        (user_plugins.SPREAD, "bernoulli", {"m": 5}),
    ],
)
def test_the_expected_count_table_is_the_sum_of_the_rounds_distributions(forecaster, adversary, params):
    T, seed = 700, 3
    res = simulate(forecaster, adversary, horizon=T, seed=seed, forecaster_params=params)
    want = _expected_counts(forecaster, adversary, T, seed, **params)
    got = res.pseudo_stats
    assert got.weighted
    keep = sorted(q for q, (wj, _) in want.items() if wj > 0)
    assert got.values.tolist() == keep
    for q, wj, sj in zip(got.values, got.counts, got.positives):
        # the engine keeps the difference from the public table (point-mass rounds add nothing):
        # the same sums in another order
        assert abs(wj - want[q][0]) <= 1e-12 * T and abs(sj - want[q][1]) <= 1e-12 * T
    assert abs(float(got.counts.sum()) - T) <= 1e-9 * T
    # the realised table's counts are one draw of the expected ones: same support or smaller
    assert set(res.stats.values.tolist()) <= set(keep)


def test_a_point_mass_forecaster_has_the_realised_table_as_its_expected_one():
    res = simulate("frequency", "contrarian", horizon=500, seed=1)
    assert res.pseudo_stats.values.tolist() == res.stats.values.tolist()
    assert res.pseudo_stats.counts.tolist() == res.stats.counts.astype(float).tolist()
    assert res.pseudo_ece == res.ece and res.pseudo_k2 == res.k2


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from([0.0, 0.1, 0.25, 0.5, 0.75, 1.0]), st.floats(0.01, 5.0), st.floats(0.0, 1.0)),
        min_size=1,
        max_size=6,
    )
)
def test_kl_calibration_agrees_with_its_reference(entries):
    q = [e[0] for e in entries]
    n = [e[1] for e in entries]
    s = [e[1] * e[2] for e in entries]
    st_ = BucketStats.from_table(q, n, s)
    got, want = kl_calibration(st_), kl_ref(st_.values, st_.counts, st_.positives)
    if math.isinf(want):
        assert got == math.inf
    else:
        assert abs(got - want) <= 1e-12 * max(1.0, want)


def test_kl_calibration_at_the_ends():
    assert kl_calibration(BucketStats.from_table([0.0, 1.0], [3, 2], [0, 2])) == 0.0
    assert kl_calibration(BucketStats.from_table([0.0, 0.5], [3, 2], [1, 1])) == math.inf
    assert kl_calibration(BucketStats.from_table([1.0, 0.5], [3, 2], [2, 1])) == math.inf
    # a fair coin stated as 1/4: KL(1/2 || 1/4) = 1/2 ln 2 + 1/2 ln(2/3)
    assert kl_calibration(BucketStats.from_table([0.25], [4], [2])) == pytest.approx(
        0.5 * math.log(2) + 0.5 * math.log(2 / 3), abs=1e-15
    )
    with pytest.raises(ValueError, match="exact buckets"):
        import fastcdl as fc

        kl_calibration(fc.bucket_stats([0, 1, 1], [0.2, 0.4, 0.9], bins=2))


def test_klcal_takes_y_true_and_y_prob_like_every_metric():
    """fc.klcal(y_true, y_prob) is the reference of the rounds' bucket table; the registry's
    entry, class-wise views and the sample-size warning (at the caller's line) as for ece."""
    import warnings

    import numpy as np

    import fastcdl as fc

    rng = np.random.default_rng(2)
    p = rng.choice([0.1, 0.3, 0.5, 0.8], 400)
    y = (rng.random(400) < p**1.2).astype(int)
    table = fc.bucket_stats(y, p)
    want = kl_ref(table.values, table.counts, table.positives)
    assert fc.klcal(y, p) == pytest.approx(want, abs=1e-15) and fc.klcal(table) == kl_calibration(table)
    assert fc.MEASURES["klcal"](table) == fc.klcal(y, p)
    w = rng.random(400)
    weighted = fc.bucket_stats(y, p, sample_weight=w)
    assert fc.klcal(y, p, sample_weight=w) == kl_calibration(weighted)
    P = np.column_stack([1 - p, p])
    per = fc.klcal(y, P, multiclass="classwise")
    assert per.per_class.tolist() == [fc.klcal(y == 0, 1 - p), fc.klcal(y == 1, p)]
    with pytest.raises(ValueError, match="exact buckets"):
        fc.klcal(y, p, bins=5)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", fc.SampleSizeWarning)
        fc.klcal([0, 1, 1], [0.2, 0.4, 0.9])
    (warning,) = caught
    assert warning.filename == __file__ and "klcal" in str(warning.message)


def _trial(forecaster, adversary, T=2048, seed_index=0):
    t = plan(load_preset("quick"))[0]
    aparams = '{"p": 0.5}' if adversary == "bernoulli" else "{}"
    return dataclasses.replace(
        t,
        forecaster=forecaster,
        forecaster_label=forecaster,
        forecaster_params="{}",
        adversary=adversary,
        adversary_label=adversary,
        adversary_params=aparams,
        T=T,
        seed_index=seed_index,
        algorithm_version=algorithm_version(forecaster, adversary),
    )


@pytest.mark.parametrize("forecaster,adversary", [("ftpl", "bernoulli"), ("kt", "contrarian"), ("cdl", "greedy")])
def test_every_new_trial_column_is_recomputed_from_the_trials_tables(forecaster, adversary):
    """Each new measure recomputed independently from a trial's stored tables agrees
    to 1e-12 (smce: its value recomputed from the stored table bit for bit, and its LP reference
    to the LP's tolerance)."""
    row = run_trial(_trial(forecaster, adversary))
    st_, ps = unpack_table(row["bucket_table"]), unpack_table(row["pseudo_table"])
    refs = {
        "klcal": kl_ref(st_.values, st_.counts, st_.positives),
        "pseudo_klcal": kl_ref(ps.values, ps.counts, ps.positives),
        "pseudo_ece": ece_ref(ps.values, ps.counts, ps.positives),
        "pseudo_k2": k2_ref(ps.values, ps.counts, ps.positives),
        "pseudo_cdl": cdl_envelope_ref(ps.values, ps.counts, ps.positives),
    }
    for key, want in refs.items():
        got = row[key]
        assert got is not None and not (isinstance(got, float) and math.isnan(got)), key
        if math.isinf(want):
            assert got == math.inf, key
        else:
            assert abs(got - want) <= 1e-12, (key, got, want)
    from fastcdl.sample import smce

    assert row["smce"] == smce(st_)
    assert abs(row["smce"] - REGISTRY["smce"]["reference"](st_.values, st_.counts, st_.positives)) <= 1e-8


def test_new_measures_do_not_rekey_stored_trials_and_old_rows_read_as_null(tmp_path):
    # the key's metrics are the five the stores were filled with
    assert algorithm_version("kt", "bernoulli").endswith("metrics=cdl/1,ece/1,k2/1,ucal/1,vcdl/1")
    assert all(not METRICS[k].in_key for k in NEW)
    # a store whose rows predate the new columns opens with them NULL
    import sqlite3

    from fastcdl.experiments.store import COLUMNS

    old = [(c, t) for c, t in COLUMNS if c not in NEW and c != "pseudo_table"]
    path = tmp_path / "trials.sqlite"
    con = sqlite3.connect(path)
    con.execute(f"CREATE TABLE trials ({', '.join(f'{c} {t}' for c, t in old)})")
    row = run_trial(_trial("kt", "bernoulli", T=256))
    con.execute(
        f"INSERT INTO trials ({', '.join(c for c, _ in old)}) VALUES ({', '.join('?' for _ in old)})",
        [row[c] for c, _ in old],
    )
    con.commit()
    con.close()
    with TrialStore(path) as store:
        (got,) = store.rows()
        assert got["key"] == row["key"] and got["cdl"] == row["cdl"]
        assert all(got[k] is None for k in NEW) and got["pseudo_table"] is None


def test_the_pseudo_table_round_trips_through_the_store():
    res = simulate(user_plugins.SPREAD, "bernoulli", horizon=300, seed=2)
    assert unpack_table(pack_table(res.pseudo_stats)) == res.pseudo_stats


def test_a_klcal_of_inf_gives_an_infinite_mean_not_nan():
    from fastcdl.experiments.analysis import fit_slope, mean_interval

    assert mean_interval([0.1, math.inf, 0.2], rng=0) == (math.inf, math.inf, math.inf)
    assert math.isnan(fit_slope([64, 128], [0.1, math.inf]))


def test_the_analysis_of_a_preset_with_an_infinite_klcal_warns_nothing_and_writes_no_nan_means():
    import warnings

    from fastcdl.experiments.analysis import analyze, paired

    rows = [
        dict(
            forecaster_label=f,
            adversary_label="coin",
            T=T,
            seed_index=i,
            klcal=math.inf if f == "a" else 1.0 / T + 0.01 * i,
            ece=1.0 / T**0.5 + 0.01 * i,
        )
        for f in ("a", "b")
        for T in (64, 128, 256, 512)
        for i in range(3)
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rates, slopes, _ = analyze(rows, ["klcal", "ece"], n_boot=50)
        diffs, slope_diffs = paired(rows, ["klcal", "ece"], n_boot=50)
    inf_rates = [r for r in rates if r["forecaster"] == "a" and r["metric"] == "klcal"]
    assert inf_rates and all(r["mean"] == r["lo"] == r["hi"] == math.inf for r in inf_rates)
    assert all(math.isnan(s["slope"]) for s in slopes if s["forecaster"] == "a" and s["metric"] == "klcal")
    assert not [d for d in diffs if d["metric"] == "klcal"] and [d for d in diffs if d["metric"] == "ece"]


def _point_mass_rounds(forecaster, adversary, T, seed=2):
    """How many of T rounds of the per-round API published a point mass (one stated value of
    probability 1)."""
    spec = registry.forecaster(forecaster)
    given = {"adversary": (adversary, {})} if spec.needs_adversary else {}
    f = make_forecaster(forecaster, horizon=T, seed=seed, **given)
    a = make_adversary(adversary, horizon=T, seed=seed)
    side = spec.side_input
    points = 0
    for _ in range(T):
        fc = (
            f.forecast(mean=a.mean())
            if side == "mean"
            else f.forecast(external=a.external())
            if side == "external"
            else f.forecast()
        )
        points += fc.probs == (1.0,)
        y = a.respond(fc)
        p = f.draw()
        f.observe(y)
        a.observe(p, y)
    return points


@pytest.mark.parametrize("forecaster", sorted(registry.forecasters()))
def test_the_point_mass_declaration_holds_round_by_round(forecaster):
    """A built-in declaring point_mass publishes one value of probability 1 in every round (the
    engine keeps no expected-count table for it); every other built-in randomizes in some
    round against the same adversaries."""
    declared = registry.forecaster(forecaster).point_mass
    T, spec = 200, registry.forecaster(forecaster)
    adversaries = (
        ("informed",)
        if spec.needs_external
        else ("drift", "segments")
        if spec.needs_mean or spec.needs_adversary
        else ("bernoulli", "contrarian")
    )
    counts = [_point_mass_rounds(forecaster, a, T) for a in adversaries]
    if declared:
        assert counts == [T] * len(adversaries)
    else:
        assert min(counts) < T


@pytest.mark.parametrize(
    "forecaster,adversary",
    [("truthful", "bernoulli"), ("frequency", "contrarian"), ("acrs", "lookahead"), ("spr", "drift")],
)
def test_a_point_mass_forecasters_table_is_the_kept_one_bit_for_bit(forecaster, adversary):
    """Reading the public table (point_mass) gives the expected-count table the engine keeps
    when told the forecaster may randomize, bit for bit, and so the same pseudo measures."""
    spec = registry.forecaster(forecaster)
    assert spec.point_mass
    kept = dataclasses.replace(spec, point_mass=False)
    a = simulate(spec, adversary, horizon=3000, seed=5)
    b = simulate(kept, adversary, horizon=3000, seed=5)
    for x, y in ((a.pseudo_stats, b.pseudo_stats), (a.stats, b.stats)):
        assert x.values.tobytes() == y.values.tobytes()
        assert x.counts.tobytes() == y.counts.tobytes() and x.positives.tobytes() == y.positives.tobytes()
    for k in ("pseudo_ece", "pseudo_k2", "pseudo_klcal", "pseudo_cdl"):
        assert getattr(a, k) == getattr(b, k) or (math.isnan(getattr(a, k)) and math.isnan(getattr(b, k)))


@pytest.mark.parametrize("forecaster,adversary", [("kt", "bernoulli"), ("klcal", "contrarian"), ("truthful", "drift")])
def test_a_run_without_the_expected_count_table_is_the_same_run(forecaster, adversary):
    """simulate(..., pseudo=False) plays the same rounds (the table only watches them) and its
    pseudo measures raise naming the option, while the others are there."""
    kept = simulate(forecaster, adversary, horizon=2000, seed=4)
    bare = simulate(forecaster, adversary, horizon=2000, seed=4, pseudo=False)
    assert bare.pseudo_stats is None
    for a in ("values", "counts", "positives"):
        assert getattr(bare.stats, a).tobytes() == getattr(kept.stats, a).tobytes()
    assert bare.cdl == kept.cdl and bare.klcal == kept.klcal
    with pytest.raises(ValueError, match=r"pseudo measure: .*pseudo=False.*pseudo_ece"):
        bare.pseudo_ece


def test_settle_records_into_a_table_made_inside_the_kernel():
    """A user's kernel that makes its game (fastcdl.kernels.game_new) and settles rounds into it
    keeps the counts: an overload inlined into settle once lost such a table (counts all 0)."""
    import numpy as np

    import fastcdl.kernels as K

    @K.njit(cache=False)
    def play(q):
        table, out, hist = K.game_new(q)
        out.buckets[0], out.buckets[1], out.probs[0] = 1, 2, 1.0
        for t in range(7):
            hist = K.settle(table, out, 0, t % 2, hist)
        return table.n, table.s, hist.t

    n, s, t = play(np.array([0.0, 0.5, 1.0]))
    assert n.tolist() == [0, 7, 0] and s.tolist() == [0, 3, 0] and t == 7


def test_the_table_type_dispatchers_keep_a_table_made_inside_the_kernel():
    """slots, slot and choose_slot (chosen by the table's type) in a kernel that makes its game:
    the table keeps what settle records (they once lost it, as settle's dispatcher did)."""
    import numpy as np

    import fastcdl.kernels as K
    from fastcdl._compiled.rng import seed_states
    from fastcdl.online import engine

    @K.njit(cache=False)
    def play(q, rng):
        table, out, hist = K.game_new(q)
        out.buckets[0], out.buckets[1], out.probs[0], out.probs[1] = 1, 2, 0.5, 0.5
        k = 0
        for t in range(40):
            view = engine.view_of(hist, out, table)
            k += engine.slots(view, table) + engine.slot(view, table, 1)[2]
            slot = engine.choose_slot(out, table, rng)
            hist = K.settle(table, out, slot, 1, hist)
        return table.n, k

    n, k = play(np.array([0.0, 0.5, 1.0]), seed_states(0)[0])
    assert n.sum() == 40 and n[0] == 0 and n[1] > 0 and n[2] > 0 and k == 40 * (2 + 2)
