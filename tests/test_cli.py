"""The command line: metrics of a file, JSON output, errors with exit status 2."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import fastcdl as fc
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
    assert fc.cfdl(y, p, payoff=np.array(task["payoff"])) == pytest.approx(task["gain"], abs=1e-15)
    assert task["gain"] < out["cdl"] and 1.0 in task["kinks"]
    assert fc.cfdl(y, p, payoff=fc.cdl_report(y, p).payoff) == pytest.approx(out["cdl"], abs=1e-12)
    sample = {"cdl_monotone", "vcdl_monotone", "cutoff_ce", "cutoff_ce_p_value", "smce", "atb", "atb_unbiased",
              "mce", "rmsce", "brier", "one_round_share", "advice"}
    assert set(out) == {"n_buckets", "T", "ece", "k2", "vcdl", "vcdl_kink", "cdl", "ucal", "worst_task"} | sample
    assert out["advice"] is None and out["cdl_monotone"] == pytest.approx(fc.cdl_monotone(y, p), abs=1e-15)


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
        ("y,p\n1,0.5\n0,abc\n", [], "row 3"),
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
