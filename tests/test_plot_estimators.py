"""Figures of continuous scores: a reliability diagram of thousands of buckets drawn through
equal-mass bins with a histogram and a bootstrap band, and the monotone decision-loss curve."""

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

import fastcdl as fc  # noqa: E402
from fastcdl import plot as fplot  # noqa: E402
from fastcdl.cli import main  # noqa: E402


def _scores(T=5000, seed=0):
    rng = np.random.default_rng(seed)
    p = rng.beta(2, 5, T)
    return rng.random(T) < p, p


def test_thousands_of_buckets_are_drawn_as_a_bounded_number_of_equal_mass_bins():
    y, p = _scores()
    disp = fplot.ReliabilityDisplay.from_predictions(y, p)
    pts = disp.scatter_.get_offsets()
    assert len(pts) == 17 <= fplot.ReliabilityDisplay.max_points  # round(5000^(1/3)) bins, not 5000 discs
    shown = fc.bucket_stats(y, p, bins=17, strategy="quantile")
    np.testing.assert_allclose(pts[:, 0], shown.values, rtol=1e-12)
    np.testing.assert_allclose(pts[:, 1], shown.frequencies, rtol=1e-12)
    assert disp.shown.counts.tolist() == shown.counts.tolist()
    # the numbers are those of the exact table, with CDL_M beside the noisy exact CDL
    text = " ".join(t.get_text() for t in disp.ax_.texts)
    assert f"CDL_M = {fc.cdl_monotone(y, p):.4f}" in text and "5000 buckets" in text
    # it leads with the sample numbers: CDL_M debiased with its interval, the ECE of the bins
    # drawn; the exact-bucket numbers come after, marked as noise
    ci = fc.interval(fc.cdl_monotone, y, p, seed=0)
    corner = disp.numbers_.get_text()
    assert f"debiased {ci.estimate:.4f}" in corner and f"95% interval [{ci.lo:.4f}, {ci.hi:.4f}]" in corner
    assert f"ECE (17 equal-mass bins) = {fc.ece(shown):.4f}" in corner
    assert corner.index("CDL_M") < corner.index("ECE (17") < corner.index("exact buckets (noise")
    assert f"ECE = {disp.ece:.4f}, CDL = {disp.cdl:.4f}" in corner.split("exact buckets (noise")[1]
    assert "17 equal-mass bins" in " ".join(t.get_text() for t in disp.ax_.get_legend().get_texts())
    # the histogram of the predictions: 50 bars whose heights are the shares of rounds
    heights = np.array([b.get_height() for b in disp.hist_])
    want, _ = np.histogram(p, bins=50, range=(0, 1))
    np.testing.assert_allclose(heights, want / want.sum(), rtol=1e-12)
    assert disp.band_ is None


def test_a_few_buckets_are_drawn_as_they_are():
    y, p = _scores()
    p = np.round(p * 20) / 20
    disp = fplot.ReliabilityDisplay.from_predictions(y, p)
    st = fc.bucket_stats(y, p)
    assert len(disp.scatter_.get_offsets()) == st.n_buckets
    text = " ".join(t.get_text() for t in disp.ax_.texts)
    assert "CDL_M" not in text


def test_bootstrap_band_contains_the_points_and_is_reproducible():
    y, p = _scores(T=20000, seed=1)
    a = fplot.ReliabilityDisplay.from_predictions(y, p, n_boot=200, seed=3)
    b = fplot.ReliabilityDisplay.from_predictions(y, p, n_boot=200, seed=3)
    assert a.band_ is not None
    (path_a,), (path_b,) = a.band_.get_paths(), b.band_.get_paths()
    np.testing.assert_array_equal(path_a.vertices, path_b.vertices)
    lo, hi = a._band(a.shown)
    f = a.shown.frequencies
    assert np.all(lo <= hi)
    assert np.mean((lo <= f) & (f <= hi)) >= 0.8  # a 90% band around each bin's own frequency
    assert 0.0 < np.mean(hi - lo) < 0.1
    with pytest.raises(ValueError, match="unweighted rounds"):
        fplot.ReliabilityDisplay.from_predictions(y, p, sample_weight=np.ones(p.shape[0]), n_boot=10)
    with pytest.raises(ValueError, match="n_boot must be an integer >= 0"):
        fplot.ReliabilityDisplay.from_predictions(y, p, n_boot=-1)


def _drawn(fig, dpi):
    """Draw fig at dpi on an Agg canvas (as a PNG is drawn); its renderer."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    fig.set_dpi(dpi)
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    return canvas.get_renderer()


@pytest.mark.parametrize("case", ["scores", "long labels"])
def test_the_band_is_over_the_discs_and_the_values_clear_the_legend(case):
    """The bootstrap band is drawn over the discs (under them it shows only between them), and the
    values under the axes never overlap the legend: beside it where there is room, else under it."""
    if case == "scores":
        y, p = _scores()
        n_boot, name = 200, None
    else:  # a sparse table of few buckets (the disc label names the largest n) and a long band label
        rng = np.random.default_rng(0)
        p = np.concatenate([rng.random(60), np.full(50, 0.5)])
        y = rng.random(110) < p
        n_boot, name = 100000, "a model whose name is long enough to fill the title"
    disp = fplot.ReliabilityDisplay.from_predictions(y, p, n_boot=n_boot, name=name)
    assert disp.band_.get_zorder() > disp.scatter_.get_zorder()
    values = disp.numbers_  # on continuous scores it leads with CDL_M, else with ECE
    assert values in disp.ax_.texts and values.get_text().startswith(("ECE = ", "CDL_M = "))
    for dpi in (72, 100, 150, 300):
        renderer = _drawn(disp.figure_, dpi)
        legend, box = disp.ax_.get_legend().get_window_extent(renderer), values.get_window_extent(renderer)
        assert not legend.overlaps(box), dpi
        inside = disp.figure_.bbox  # and neither is cut off at the figure's edges
        assert all(inside.contains(*corner) for corner in (legend.p0, legend.p1, box.p0, box.p1)), dpi


def test_monotone_decision_loss_curve():
    y, p = _scores(T=3000, seed=2)
    disp = fplot.DecisionLossDisplay.from_predictions(y, p, monotone=True)
    rep = fc.cdl_monotone_report(y, p)
    assert disp.report.value == rep.value and disp.report.vcdl == rep.vcdl
    mu, v = fc.decision_loss_curve_monotone(y, p)
    np.testing.assert_array_equal(disp.line_.get_xdata(), mu)
    np.testing.assert_array_equal(disp.line_.get_ydata(), v)
    assert v.max() <= rep.vcdl + 1e-15  # the curve's maximum is VCDL_M
    labels = " ".join(t.get_text() for t in disp.ax_.get_legend().get_texts())
    assert f"CDL_M = {rep.value:.4g}" in labels and f"VCDL_M = {rep.vcdl:.4g}" in labels
    assert disp.ax_.get_title().startswith("Monotone decision-loss curve")


def test_plot_of_a_file_of_continuous_scores(tmp_path, capsys):
    y, p = _scores(T=4000, seed=4)
    f = tmp_path / "scores.csv"
    f.write_text("y,p\n" + "".join(f"{int(a)},{float(b)!r}\n" for a, b in zip(y, p)))
    assert main(["plot", str(f), "--out", str(tmp_path / "fig")]) == 0
    written = sorted(x.name for x in (tmp_path / "fig").iterdir())
    assert written == ["scores_decision_loss_monotone.png", "scores_reliability.png"]
    assert capsys.readouterr().err == ""
    assert main(["plot", str(f), "--out", str(tmp_path / "q"), "--bins", "auto", "--strategy", "quantile"]) == 0
    assert sorted(x.name for x in (tmp_path / "q").iterdir()) == ["scores_decision_loss.png", "scores_reliability.png"]


def test_a_weighted_table_is_binned_by_its_rounds():
    # 20000 weighted rounds on about 2000 distinct predictions: "auto" bins from the rounds,
    # as bucket_stats(bins="auto") of the same weighted rounds (not from the buckets)
    rng = np.random.default_rng(4)
    p = np.round(rng.beta(2, 5, 20_000) * 2000) / 2000
    y = rng.random(p.shape[0]) < p
    w = rng.exponential(1.0, p.shape[0])
    disp = fplot.ReliabilityDisplay.from_predictions(y, p, sample_weight=w)
    want = fc.bucket_stats(y, p, sample_weight=w, bins="auto", strategy="quantile")
    assert fc.bucket_stats(y, p, sample_weight=w).n_buckets > fplot.ReliabilityDisplay.max_points
    assert disp.shown.n_buckets == want.n_buckets
    np.testing.assert_allclose(disp.shown.counts, want.counts, rtol=1e-12)
