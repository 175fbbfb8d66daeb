"""The command line: metrics of a file, JSON output, errors with exit status 2."""

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import fastcdl as fc
from fastcdl.measures import TABLE_MEASURES as MEASURES  # the measures of a bucket table
from fastcdl.cli import main

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "forecasts.csv"


def _example_arrays():
    data = np.genfromtxt(EXAMPLE, delimiter=",", names=True)
    return data["y"], data["p"]


def test_metrics_json_matches_library(capsys):
    assert main(["metrics", str(EXAMPLE), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    y, p = _example_arrays()
    assert out["T"] == len(y)
    assert out["n_buckets"] == fc.bucket_stats(y, p).n_buckets
    for key, f in (("ece", fc.ece), ("k2", fc.k2), ("vcdl", fc.vcdl), ("cdl", fc.cdl), ("ucal", fc.ucal)):
        assert out[key] == pytest.approx(f(y, p), abs=1e-15), key
    task = out["worst_task"]
    # the example has a kink at 1: the stated task (no dominated action) gains less than the CDL
    ordered, _ = fc.cdl_report(y, p).ordered_task()  # its ulps break the ties as at_bounds says
    assert fc.cfdl(y, p, payoff=ordered) == pytest.approx(task["gain"], abs=1e-15)
    assert task["gain"] < out["cdl"] and 1.0 in task["kinks"]
    assert fc.cfdl(y, p, payoff=fc.cdl_report(y, p).payoff) == pytest.approx(out["cdl"], abs=1e-12)
    # every measure of the registry, by its key, and the report's other fields
    assert set(out) == set(MEASURES) | {
        "n_buckets",
        "T",
        "vcdl_kink",
        "cutoff_ce_p_value",
        "worst_task",
        "one_round_share",
        "advice",
        "ece_quantile",
        "ece_quantile_bins",
        "intervals",
        "diagnostics",
        "diagnostics_notes",
    } | {name for m in MEASURES.values() for name, _ in m.extras if m.key not in ("vcdl", "cutoff_ce")}
    st = fc.bucket_stats(y, p)
    for key, m in MEASURES.items():
        want = m(st) if m.applies(st) else None
        if want is not None and math.isinf(want):  # standard JSON: an infinite value is the string "inf"
            assert out[key] == str(want), key
        else:
            assert out[key] == (pytest.approx(want, abs=1e-15) if want is not None else None), key
    assert out["advice"] is None and out["cdl_monotone"] == pytest.approx(fc.cdl_monotone(y, p), abs=1e-15)
    # repeated predictions: no intervals or binned ECE unless asked (--ci)
    assert out["intervals"] is None and out["ece_quantile"] is None


def test_worst_task_payoffs_are_exact(capsys):
    # the payoffs are the task's entries, 1 and not 1 - 2^-53; the ulps that break the tie at
    # the bound 0.35 (where the example has predictions) are stated as at_bounds instead
    assert main(["metrics", str(EXAMPLE), "--json"]) == 0
    raw = capsys.readouterr().out
    task = json.loads(raw)["worst_task"]
    y, p = _example_arrays()
    rep = fc.cdl_report(y, p)
    ordered, bounds = rep.ordered_task()
    assert "0.9999999999999999" not in raw and ordered[0, 0] == np.nextafter(1.0, 0.0)
    assert task["payoff"] == [[1.0, 0.0], [rep.weights[1], 1.0]]
    np.testing.assert_allclose(task["payoff"], ordered, rtol=0.0, atol=4 * np.finfo(float).eps)
    assert task["bounds"] == bounds.tolist() == [0.35] and task["at_bounds"] == ["high"]
    assert np.any(p == 0.35)  # the tie matters: ties to the lowest row would gain less
    assert fc.cfdl(y, p, payoff=np.array(task["payoff"])) < task["gain"] - 1e-3
    assert main(["metrics", str(EXAMPLE)]) == 0
    text = capsys.readouterr().out
    assert "worst decision task: 'low' when p < 0.35, 'high' when p >= 0.35" in text
    assert "low (1, 0), high (0.4615, 1)" in text


@pytest.mark.parametrize(
    "at_bounds, words",
    [
        ([0, 1], ["p <= 0.15", "0.15 < p <= 0.75", "p > 0.75"]),
        ([1, 2], ["p < 0.15", "0.15 <= p < 0.75", "p >= 0.75"]),
        ([1, 1], ["p < 0.15", "0.15 <= p <= 0.75", "p > 0.75"]),
    ],
)
def test_regions_of_a_task_put_each_bound_with_its_action(at_bounds, words):
    from fastcdl.summary_text import _region

    assert [_region(i, [0.15, 0.75], at_bounds) for i in range(3)] == words


def test_metrics_table_and_bins(capsys):
    assert main(["metrics", str(EXAMPLE), "--bins", "10"]) == 0
    text = capsys.readouterr().out
    y, p = _example_arrays()
    assert f"{fc.cdl(y, p, bins=10):.4g}" in text
    assert "worst decision task" in text


def test_npz_and_weights(tmp_path, capsys):
    y, p = _example_arrays()
    w = np.arange(len(y)) % 3
    np.savez(tmp_path / "f.npz", rain=y, forecast=p, w=w)
    argv = ["metrics", str(tmp_path / "f.npz"), "--y-col", "rain", "--p-col", "forecast", "--weight-col", "w", "--json"]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["cdl"] == pytest.approx(fc.cdl(y, p, sample_weight=w), abs=1e-15)


def test_chunked_csv_equals_whole(tmp_path, capsys, monkeypatch):
    import fastcdl.io

    monkeypatch.setattr(fastcdl.io, "CHUNK_ROWS", 100)  # many chunks, merged exactly
    assert main(["metrics", str(EXAMPLE), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    y, p = _example_arrays()
    assert out["cdl"] == fc.cdl(y, p)
    assert out["T"] == len(y)


@pytest.mark.parametrize(
    "content, args, needle",
    [
        ("y,p\n1,0.5\n0,1.5\n", [], "[0, 1]"),
        ("y,p\n1,0.5\n2,0.5\n", [], "0 and 1"),
        ("y,p\n1,0.5\n0,abc\n", [], "row 1 (0-based), line 3"),
        ("y,p\n1,0.5\n0,nan\n", [], "NaN"),
        ("y,q\n1,0.5\n", [], "missing column"),
        ("", [], "empty"),
        ("y,p\n", [], "no rows"),
    ],
)
def test_bad_files_exit_2(tmp_path, capsys, content, args, needle):
    f = tmp_path / "bad.csv"
    f.write_text(content)
    assert main(["metrics", str(f), *args]) == 2
    err = capsys.readouterr().err
    assert needle in err
    assert err.count("\n") == 1 and str(f) in err


def test_missing_file_and_bad_bins(tmp_path, capsys):
    assert main(["metrics", str(tmp_path / "nope.csv")]) == 2
    assert "cannot read" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        main(["metrics", str(EXAMPLE), "--bins", "0"])
    assert e.value.code == 2
    assert "bins" in capsys.readouterr().err


def test_python_dash_m():
    r = subprocess.run(
        [sys.executable, "-m", "fastcdl", "metrics", str(EXAMPLE), "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(r.stdout)["T"] == 1095


@pytest.mark.parametrize(
    "argv, line",
    [
        (["rates", "--master-seed", "-1"], "--master-seed must be an integer >= 0, got -1"),
        (
            ["rates", "--t-max", "2^70"],
            "--t-max must be at most 2^62 (rounds are counted in 64-bit integers), got '2^70'",
        ),
        (["rates", "--t-min", "2^70", "--t-max", "2^71"], "--t-min must be at most 2^62"),
        (["rates", "--seeds", "1"], "--seeds must be an integer >= 2"),
        (["worst", "--forecaster", "cdl", "--t", "2^70"], "--t must be at most 2^62"),
        (["worst", "--forecaster", "cdl", "--t", "2^8", "--fresh-seeds", "0"], "--fresh-seeds must be an integer >= 2"),
    ],
)
def test_bad_run_options_are_named(tmp_path, capsys, argv, line):
    out = tmp_path / "run"
    assert main([*argv, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"fastcdl: error: {line}") and err.count("\n") == 1, err
    assert not out.exists()


def test_preset_file_with_a_horizon_beyond_64_bits(tmp_path, capsys):
    preset = tmp_path / "big.toml"
    preset.write_text(
        'name = "big"\nseeds = 2\nt_min = 256\nt_max = 1180591620717411303424\n'
        'forecasters = ["cdl"]\nadversaries = ["bernoulli"]\n'
    )
    assert main(["rates", "--preset", str(preset), "--out", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err
    assert f"preset {preset}: t_max must be at most 2^62" in err and err.count("\n") == 1


class _ClosedPipe:
    """Standard output whose reader has gone (`fastcdl metrics FILE | head`)."""

    def write(self, text):
        raise BrokenPipeError(32, "Broken pipe")

    def flush(self):
        pass


def test_a_closed_pipe_is_a_normal_end(monkeypatch, capsys):
    monkeypatch.setattr("sys.stdout", _ClosedPipe())
    assert main(["metrics", str(EXAMPLE)]) == 0
    assert capsys.readouterr().err == ""


def test_a_closed_pipe_ends_the_process_quietly():
    # the reader closes its end before the command has written anything: every write fails
    proc = subprocess.Popen(
        [sys.executable, "-m", "fastcdl", "metrics", str(EXAMPLE)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    proc.stdout.close()
    with proc.stderr:
        err = proc.stderr.read().decode()
    assert proc.wait(timeout=300) == 0 and err == ""


def test_metrics_command_only_reads_and_prints_the_report():
    """The report is library code (fastcdl.summary); the command's function reads the file and
    prints it, in under 40 lines."""
    import inspect

    import fastcdl.cli as cli

    source = inspect.getsource(cli.cmd_metrics)
    assert len(source.splitlines()) < 40 and "summary_of_file(" in source and "to_json()" in source
