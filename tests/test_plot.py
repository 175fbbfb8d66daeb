"""Figures: Display objects, rate plots of a run folder, `fastcdl plot`, atomic PNG writes."""

import csv
import os
import shutil
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

import matplotlib.image  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

import fastcdl as fc  # noqa: E402
from fastcdl.experiments import run_figures as _run_figures  # noqa: E402
from fastcdl import plot as fplot  # noqa: E402
from fastcdl.cli import main  # noqa: E402
from fastcdl.experiments import TrialStore, load_preset, override, run  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "forecasts.csv"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _example_arrays():
    data = np.genfromtxt(EXAMPLE, delimiter=",", names=True)
    return data["y"], data["p"]


def assert_valid_png(path: Path, min_kb: float = 10):
    data = path.read_bytes()
    assert data[:8] == PNG_SIGNATURE, path
    assert len(data) > min_kb * 1024, (path, len(data))
    img = matplotlib.image.imread(path)
    assert img.ndim == 3 and img.shape[2] in (3, 4), img.shape
    assert 300 <= img.shape[0] <= 3000 and 300 <= img.shape[1] <= 3000, img.shape
    assert img[..., :3].std() > 0.02, "the image is (almost) one flat colour"


def _files(folder: Path) -> set:
    return {p.relative_to(folder) for p in folder.rglob("*")}


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    """A tiny rate experiment: cdl and foster against bernoulli and drift, T = 2^8 .. 2^11, 2 seeds."""
    preset = override(
        load_preset("quick"),
        forecasters=["cdl", "foster"],
        adversaries=["bernoulli", "drift"],
        t_min="2^8",
        t_max="2^11",
        seeds=2,
    )
    out = tmp_path_factory.mktemp("run") / "quick"
    run(preset, out, workers=1, progress=False)
    return out


# -- Display objects -----------------------------------------------------------------------


def test_reliability_display_areas_proportional_to_counts():
    y, p = _example_arrays()
    disp = fplot.ReliabilityDisplay.from_predictions(y, p)
    st = fc.bucket_stats(y, p)
    assert isinstance(disp.figure_, Figure) and isinstance(disp.ax_, Axes)
    assert disp.ax_.figure is disp.figure_
    sizes = disp.scatter_.get_sizes()
    counts = st.counts.astype(float)
    assert sizes.shape == counts.shape
    np.testing.assert_allclose(sizes / counts, sizes[0] / counts[0], rtol=1e-12)
    assert sizes.max() == pytest.approx(fplot.ReliabilityDisplay.max_area)
    np.testing.assert_array_equal(disp.scatter_.get_offsets(), np.column_stack([st.values, st.frequencies]))
    text = " ".join(t.get_text() for t in disp.ax_.texts)
    assert f"ECE = {fc.ece(y, p):.4f}" in text and f"CDL = {fc.cdl(y, p):.4f}" in text
    assert disp.ax_.get_xlim() == (0, 1) and disp.ax_.get_ylim() == (0, 1)
    assert "stated probability" in disp.ax_.get_xlabel()
    assert disp.ax_.get_ylabel() == "observed frequency of y = 1"
    assert disp.ax_.get_legend() is not None


def test_reliability_display_binned_and_on_given_axes():
    y, p = _example_arrays()
    fig = Figure()
    ax = fig.add_subplot()
    disp = fplot.ReliabilityDisplay.from_predictions(y, p, bins=10, ax=ax, name="ten bins")
    assert disp.ax_ is ax and disp.figure_ is fig
    assert disp.scatter_.get_sizes().shape == (fc.bucket_stats(y, p, bins=10).n_buckets,)
    assert disp.cdl == fc.cdl(y, p, bins=10) and disp.ece == fc.ece(y, p, bins=10)
    assert "ten bins" in ax.get_title()


def test_decision_loss_display_marks_worst_task():
    y, p = _example_arrays()
    st = fc.bucket_stats(y, p)
    disp = fplot.DecisionLossDisplay.from_stats(st, name="example")
    rep = fc.cdl_report(st)
    mu, v = fc.decision_loss_curve(st)
    np.testing.assert_array_equal(disp.line_.get_xdata(), mu)
    np.testing.assert_array_equal(disp.line_.get_ydata(), v)
    lines = disp.ax_.get_lines()
    vertical = sorted(ln.get_xdata()[0] for ln in lines if len(set(ln.get_xdata())) == 1 and len(ln.get_xdata()) == 2)
    np.testing.assert_array_equal(vertical, np.sort(rep.kinks))
    horizontal = [ln.get_ydata()[0] for ln in lines if len(set(ln.get_ydata())) == 1 and len(ln.get_ydata()) == 2]
    assert horizontal == [rep.value]
    star = [ln for ln in lines if ln.get_marker() == "*"]
    assert len(star) == 1 and star[0].get_xdata()[0] == rep.vcdl_kink and star[0].get_ydata()[0] == rep.vcdl
    legend = " ".join(t.get_text() for t in disp.ax_.get_legend().get_texts())
    assert f"CDL = {rep.value:.4g}" in legend and f"VCDL = {rep.vcdl:.4g}" in legend
    for w in rep.weights:
        assert f"{w:.3g}" in legend
    assert disp.ax_.get_ylabel() == "CFDL of the V-shaped task"
    assert "decision threshold" in disp.ax_.get_xlabel()
    assert isinstance(disp.figure_, Figure) and disp.ax_.figure is disp.figure_


def test_decision_loss_display_of_calibrated_forecaster():
    disp = fplot.DecisionLossDisplay.from_predictions([0, 1, 1, 1], [0.5, 0.5, 1.0, 1.0])
    assert disp.report.value == 0.0 and disp.ax_.get_ylim() == (0.0, 1.0)


# -- writing PNGs --------------------------------------------------------------------------


def test_save_figure_writes_valid_png(tmp_path):
    y, p = _example_arrays()
    for disp, name in (
        (fplot.ReliabilityDisplay.from_predictions(y, p), "rel.png"),
        (fplot.DecisionLossDisplay.from_predictions(y, p), "dl.png"),
    ):
        path = fplot.save_figure(disp.figure_, tmp_path / name)
        assert path == tmp_path / name
        assert_valid_png(path)
    assert _files(tmp_path) == {Path("rel.png"), Path("dl.png")}  # no temporary files left


def test_save_figure_leaves_no_half_written_file(tmp_path):
    fig = fplot.ReliabilityDisplay.from_predictions([0, 1], [0.2, 0.8]).figure_
    target = tmp_path / "fig.png"
    target.write_bytes(b"old")

    def broken(fh, **kw):
        fh.write(PNG_SIGNATURE)
        raise RuntimeError("disk full")

    fig.savefig = broken
    with pytest.raises(RuntimeError, match="disk full"):
        fplot.save_figure(fig, target)
    assert target.read_bytes() == b"old"
    assert _files(tmp_path) == {Path("fig.png")}


@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)], ids=["022", "077", "002"])
def test_pngs_follow_the_umask(tmp_path, capsys, umask, mode):
    # CSV and JSON files get 0o666 less the umask from open(); the PNGs must too (not 0o600)
    fig = fplot.ReliabilityDisplay.from_predictions([0, 1], [0.2, 0.8]).figure_
    old = os.umask(umask)
    try:
        one = fplot.save_figure(fig, tmp_path / "one.png")
        assert main(["plot", str(EXAMPLE), "--out", str(tmp_path / "figs")]) == 0
    finally:
        os.umask(old)
    written = [one, *(Path(p) for p in capsys.readouterr().out.split())]
    assert len(written) == 3
    for path in written:
        assert stat.S_IMODE(path.stat().st_mode) == mode, (path, oct(path.stat().st_mode))


def test_file_too_large_names_the_png(tmp_path):
    # under a file-size limit the write fails with EFBIG ("File too large"): one line naming the file
    import resource

    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (20_000, 20_000))

    out = tmp_path / "figs"
    r = subprocess.run(
        [sys.executable, "-m", "fastcdl", "plot", str(EXAMPLE), "--out", str(out)],
        capture_output=True,
        text=True,
        preexec_fn=limit,
        # no write to numba's cache under the limit (a cold cache would fail there first)
        env={**os.environ, "FASTCDL_CACHE": "0"},
    )
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr == f"fastcdl: error: {out / 'forecasts_reliability.png'}: File too large\n"
    assert list(out.iterdir()) == []  # all or none: no PNG, no temporary file


# -- run folders ---------------------------------------------------------------------------


def test_plot_rates_one_file_per_adversary(run_dir, tmp_path):
    written = fplot.plot_rates(run_dir, tmp_path / "figs")
    assert [p.name for p in written] == ["rates_bernoulli.png", "rates_drift.png", "cdl_over_ece.png"]
    for p in written:
        assert p.parent == tmp_path / "figs"
        assert_valid_png(p)


def test_rate_figures_show_the_run_summary(run_dir):
    """Legend slopes are those of the run's summary.csv, lines are rates.csv's means."""
    rows, seed = _run_figures._read_run(run_dir)
    figures = dict(_run_figures._rate_figures(rows, seed))
    with open(run_dir / "summary.csv") as fh:
        summary = list(csv.DictReader(fh))
    with open(run_dir / "rates.csv") as fh:
        rates = list(csv.DictReader(fh))
    for adv in ("bernoulli", "drift"):
        ax = figures[f"rates_{adv}.png"].axes[0]
        assert adv in ax.get_title()
        assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
        assert ax.get_xlabel() == "horizon T (rounds)" and ax.get_ylabel() == "metric value (mean over seeds)"
        legend = [t.get_text() for t in ax.get_legend().get_texts()]
        assert any("T^{-1/2}" in t for t in legend) and any("T^{-1/3}" in t for t in legend)
        lines = {ln.get_label(): ln for ln in ax.get_lines()}
        for s in summary:
            if s["adversary"] != adv or s["metric"] not in ("cdl", "ece"):
                continue
            name = {"cdl": "CDL", "ece": "ECE"}[s["metric"]]
            label = next(t for t in legend if t.startswith(f"{s['forecaster']}, {name}:"))
            assert f"slope {float(s['slope']):.2f} [{float(s['slope_lo']):.2f}, {float(s['slope_hi']):.2f}]" in label
            means = [
                float(r["mean"])
                for r in rates
                if (r["forecaster"], r["adversary"], r["metric"]) == (s["forecaster"], adv, s["metric"])
            ]
            np.testing.assert_allclose(lines[label].get_ydata(), means, rtol=1e-15)
    ratio_axes = figures["cdl_over_ece.png"].axes
    assert [a.get_title() for a in ratio_axes] == ["adversary 'bernoulli'", "adversary 'drift'"]


def test_cli_plot_run_folder(run_dir, tmp_path, capsys):
    out = tmp_path / "figs"
    before = _files(run_dir)
    assert main(["plot", str(run_dir), "--out", str(out)]) == 0
    printed = capsys.readouterr().out.split()
    names = {Path(p).name for p in printed}
    assert names == {
        "rates_bernoulli.png",
        "rates_drift.png",
        "cdl_over_ece.png",
        "reliability_cdl_bernoulli_T2048.png",
        "decision_loss_cdl_bernoulli_T2048.png",
        "reliability_cdl_drift_T2048.png",
        "decision_loss_cdl_drift_T2048.png",
    }
    assert _files(out) == {Path(n) for n in names}
    for p in printed:
        assert_valid_png(Path(p))
    assert _files(run_dir) == before  # --out: nothing written into the run folder


def test_cli_plot_run_folder_default_out(run_dir, tmp_path, capsys):
    folder = tmp_path / "copy"
    shutil.copytree(run_dir, folder)
    assert main(["plot", str(folder)]) == 0
    printed = capsys.readouterr().out.split()
    assert len(printed) == 7 and all(Path(p).parent == folder and Path(p).is_file() for p in printed)


def test_cli_plot_refuses_a_damaged_trial(run_dir, tmp_path, capsys):
    """A stored CDL that its stored table does not reproduce: one line, exit 2, nothing written."""
    folder = tmp_path / "tampered"
    shutil.copytree(run_dir, folder)
    with TrialStore(folder / "trials.sqlite") as store:
        n = len(store.rows())
    con = sqlite3.connect(folder / "trials.sqlite")
    with con:
        con.execute("UPDATE trials SET cdl = cdl * 1.5 WHERE forecaster = 'cdl' AND seed_index = 0 AND T = 2048")
    con.close()
    before = _files(folder)
    assert main(["plot", str(folder), "--out", str(tmp_path / "figs")]) == 2
    err = capsys.readouterr().err.strip()
    assert "the stored table's CDL" in err and "damaged" in err and "\n" not in err
    assert not (tmp_path / "figs").exists()
    assert {p for p in _files(folder) if p.suffix == ".png"} == {p for p in before if p.suffix == ".png"}
    with TrialStore(folder / "trials.sqlite") as store:
        assert len(store.rows()) == n


def test_run_folder_with_trials_of_an_older_algorithm_version(run_dir, tmp_path, capsys):
    """Only the latest algorithm version's trials are plotted, as in the run's own summary."""
    folder = tmp_path / "resumed"
    shutil.copytree(run_dir, folder)
    with TrialStore(folder / "trials.sqlite") as store:
        for row in store.rows():
            store.add(
                {
                    **row,
                    "key": "old" + row["key"],
                    "algorithm_version": "old " + row["algorithm_version"],
                    "cdl": 2 * row["cdl"],
                    "finished_at": "2000-01-01T00:00:00+00:00",
                }
            )
            store.add(
                {
                    **row,
                    "key": "legacy" + row["key"],
                    "algorithm_version": None,
                    "code_version": "0.0.0+old",
                    "cdl": 3 * row["cdl"],
                    "finished_at": "2001-01-01T00:00:00+00:00",
                }
            )
    rows, seed = _run_figures._read_run(folder)
    assert all(r["algorithm_version"] is not None and not r["algorithm_version"].startswith("old") for r in rows)
    figures = dict(_run_figures._rate_figures(rows, seed))
    with open(run_dir / "rates.csv") as fh:
        means = [
            float(r["mean"])
            for r in csv.DictReader(fh)
            if (r["forecaster"], r["adversary"], r["metric"]) == ("cdl", "drift", "cdl")
        ]
    line = next(ln for ln in figures["rates_drift.png"].axes[0].get_lines() if ln.get_label().startswith("cdl, CDL:"))
    np.testing.assert_allclose(line.get_ydata(), means, rtol=1e-15)
    assert main(["plot", str(folder), "--out", str(tmp_path / "figs")]) == 0  # replays the current trials


# -- predictions files ---------------------------------------------------------------------


def test_cli_plot_predictions_file(tmp_path, capsys):
    assert main(["plot", str(EXAMPLE), "--out", str(tmp_path)]) == 0
    printed = capsys.readouterr().out.split()
    assert [Path(p).name for p in printed] == ["forecasts_reliability.png", "forecasts_decision_loss.png"]
    for p in printed:
        assert_valid_png(Path(p))
    assert _files(tmp_path) == {Path("forecasts_reliability.png"), Path("forecasts_decision_loss.png")}


def test_cli_plot_npz_next_to_the_file(tmp_path, capsys):
    y, p = _example_arrays()
    np.savez(tmp_path / "f.npz", rain=y, forecast=p)
    argv = ["plot", str(tmp_path / "f.npz"), "--y-col", "rain", "--p-col", "forecast", "--bins", "10"]
    assert main(argv) == 0
    assert _files(tmp_path) == {Path("f.npz"), Path("f_reliability.png"), Path("f_decision_loss.png")}


@pytest.mark.parametrize(
    "make, extra, needle",
    [
        (lambda d: d / "missing", [], "no such file or folder"),
        (lambda d: (d / "empty").mkdir() or d / "empty", [], "no trials.sqlite"),
        (lambda d: (d / "notes.md").write_text("y,p\n1,0.5\n") and d / "notes.md", [], "unsupported format .md"),
        (lambda d: (d / "bad.csv").write_text("y,p\n1,1.5\n") and d / "bad.csv", [], "[0, 1]"),
        (lambda d: (d / "empty").mkdir() or d / "empty", ["--bins", "10"], "--bins applies to a file"),
    ],
)
def test_cli_plot_bad_paths_exit_2_and_write_nothing(tmp_path, capsys, make, extra, needle):
    path = make(tmp_path)
    before = _files(tmp_path)
    assert main(["plot", str(path), "--out", str(tmp_path / "figs"), *extra]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("fastcdl: error: ") and "\n" not in err
    assert str(path) in err and needle in err
    assert _files(tmp_path) == before


def test_importing_fastcdl_does_not_import_matplotlib():
    code = "import sys, fastcdl, fastcdl.cli, fastcdl.plot; sys.exit('matplotlib' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0
