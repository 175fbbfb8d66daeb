"""fastcdl.io.read_stats and `fastcdl metrics FILE` on CSV, Parquet and .npz files.

A file must give the same bucket table as fastcdl.bucket_stats of its columns in
memory, however it is cut into chunks; every bad file must give one line on stderr
naming the file, the column and the row where they can be known, exit status 2, and
nothing on stdout. (tests/test_cli.py covers the CSV example and the text output.)
"""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import fastcdl as fc
import fastcdl.io
import fastcdl.metrics
from fastcdl.cli import main
from fastcdl.io import InputError, read_stats

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
FORMATS = ["csv", "parquet", "npz"]
EDGES = np.array([0.0, 0.1, 0.35, 0.5, 0.8, 1.0])  # 0.1, 0.5 and 0.8 sit on edges
T = 200


def _data(seed=0):
    rng = np.random.default_rng(seed)
    p = rng.choice(np.r_[0.0, 0.5, 1.0, np.arange(1, 10) / 10], T)
    y = (rng.random(T) < 0.5 + 0.7 * (p - 0.5)).astype(np.int64)
    w = rng.integers(0, 7, T) / 4  # quarters: every weighted sum is exact in any order
    w[:9] = 0.0  # the first chunks carry no weight at all
    return y, p, w


def _write(fmt, path, cols):
    """Write columns (name -> list or array) as CSV (repr of each value), Parquet or .npz."""
    if fmt == "csv":
        names = list(cols)
        lines = [",".join(names)]
        for row in zip(*(cols[c] for c in names)):
            lines.append(",".join(v if isinstance(v, str) else repr(v) for v in row))
        path.write_text("\n".join(lines) + "\n")
    elif fmt == "parquet":
        pq.write_table(pa.table({c: np.asarray(v) for c, v in cols.items()}), path, row_group_size=13)
    else:
        np.savez(path, **{c: np.asarray(v) for c, v in cols.items()})
    return path


def _file(tmp_path, fmt, y, p, w=None, names=("y", "p", "w")):
    cols = {names[0]: y.tolist(), names[1]: p.tolist()}
    if w is not None:
        cols[names[2]] = w.tolist()
    return _write(fmt, tmp_path / f"data.{fmt}", cols)


def _assert_same(got, want, exact_floats=True):
    for name in ("counts", "positives", "bins", "edges"):
        a, b = getattr(got, name), getattr(want, name)
        assert (a is None) == (b is None), name
        if a is not None:
            assert a.dtype == b.dtype and np.array_equal(a, b), name
    if exact_floats:
        assert got == want
    else:  # binned prediction sums of k/10, added in another order
        np.testing.assert_allclose(got.values, want.values, rtol=1e-13, atol=0)
        np.testing.assert_allclose(got.prob_sums, want.prob_sums, rtol=1e-13, atol=0)


# -- the same table as in memory ------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("bins", [None, 10, EDGES], ids=["exact", "bins=10", "edges"])
def test_file_equals_in_memory(tmp_path, fmt, bins):
    y, p, w = _data()
    f = _file(tmp_path, fmt, y, p, w)
    _assert_same(read_stats(f, bins=bins), fc.bucket_stats(y, p, bins=bins))
    _assert_same(
        read_stats(f, weight_col="w", bins=bins), fc.bucket_stats(y, p, bins=bins, sample_weight=w)
    )


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("bins", [None, 10, EDGES], ids=["exact", "bins=10", "edges"])
def test_chunked_reading_gives_the_same_table(tmp_path, monkeypatch, fmt, bins):
    y, p, w = _data(seed=1)
    f = _file(tmp_path, fmt, y, p, w)
    monkeypatch.setattr(fastcdl.io, "CHUNK_ROWS", 7)  # 29 chunks; every value in many of them
    calls = []
    in_memory = fastcdl.metrics.bucket_stats

    def counting(y, p, **kw):
        calls.append(len(p))
        return in_memory(y, p, **kw)

    monkeypatch.setattr(fastcdl.metrics, "bucket_stats", counting)
    got = read_stats(f, bins=bins)
    assert len(calls) >= 29 and max(calls) <= 7 and sum(calls) == T
    want = fc.bucket_stats(y, p, bins=bins)
    _assert_same(got, want, exact_floats=bins is None)
    assert got.counts.dtype == np.int64 and got.total == T
    got = read_stats(f, weight_col="w", bins=bins)
    _assert_same(got, fc.bucket_stats(y, p, bins=bins, sample_weight=w), exact_floats=bins is None)


def test_renamed_columns_and_bool_outcomes(tmp_path):
    y, p, w = _data(seed=2)
    pq.write_table(pa.table({"rain": y.astype(bool), "forecast": p, "extra": p}), tmp_path / "f.pq")
    assert read_stats(tmp_path / "f.pq", y_col="rain", p_col="forecast") == fc.bucket_stats(y, p)
    # CSV: columns in any order, with surrounding spaces in the header and cells
    text = "p , other, y\n" + "".join(f" {float(pi)!r},x,{yi}\n" for yi, pi in zip(y, p))
    (tmp_path / "f.csv").write_text(text)
    assert read_stats(tmp_path / "f.csv") == fc.bucket_stats(y, p)


def test_example_files_hold_the_same_rows():
    data = np.genfromtxt(EXAMPLES / "forecasts.csv", delimiter=",", names=True)
    want = fc.bucket_stats(data["y"], data["p"])
    assert want.total == 1095
    for name in ("forecasts.csv", "forecasts.parquet", "forecasts.npz"):
        assert read_stats(EXAMPLES / name) == want, name


def test_multiclass_example():
    data = np.genfromtxt(EXAMPLES / "multiclass.csv", delimiter=",", names=True)
    y = data["y"].astype(int)
    P = np.column_stack([data["p0"], data["p1"], data["p2"]])
    assert len(y) == 1000 and set(y) == {0, 1, 2}
    assert len(np.unique(P, axis=0)) == 8
    assert 0.01 < fc.cdl_multiclass(y, P) < 1


# -- the command line ------------------------------------------------------------------

KEYS = {"n_buckets", "T", "ece", "k2", "vcdl", "vcdl_kink", "cdl", "ucal", "worst_task"}


def _expected(y, p, w, bins):
    kw = {"bins": bins, "sample_weight": w}
    rep = fc.cdl_report(y, p, **kw)
    u, bounds = rep.ordered_task()
    return {
        "n_buckets": fc.bucket_stats(y, p, **kw).n_buckets,
        "ece": fc.ece(y, p, **kw),
        "k2": fc.k2(y, p, **kw),
        "vcdl": fc.vcdl(y, p, **kw),
        "vcdl_kink": rep.vcdl_kink,
        "cdl": fc.cdl(y, p, **kw),
        "ucal": fc.ucal(y, p, **kw),
        "worst_task": {
            "actions": ["low", "middle", "high"][: len(u)] if len(u) == 3 else ["low", "high"][: len(u)],
            "payoff": u.tolist(),
            "bounds": bounds.tolist(),
            "gain": fc.cfdl(y, p, payoff=u, **kw),
            "kinks": rep.kinks.tolist(),
            "weights": rep.weights.tolist(),
        },
    }


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("bins", [None, 10], ids=["exact", "bins=10"])
def test_metrics_json(tmp_path, capsys, fmt, weighted, bins):
    y, p, w = _data(seed=3)
    f = _file(tmp_path, fmt, y, p, w, names=("outcome", "prob", "weight"))
    argv = ["metrics", str(f), "--y-col", "outcome", "--p-col", "prob", "--json"]
    argv += ["--weight-col", "weight"] if weighted else []
    argv += ["--bins", str(bins)] if bins else []
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    out = json.loads(captured.out)
    assert set(out) == KEYS
    assert set(out["worst_task"]) == {"actions", "payoff", "bounds", "gain", "kinks", "weights"}
    if weighted:  # quarters: not whole numbers, so T is the total weight
        assert isinstance(out["T"], float) and out["T"] == w.sum()
    else:
        assert isinstance(out["T"], int) and out["T"] == T
    want = _expected(y, p, w if weighted else None, bins)
    if bins is None:  # identical tables, so identical numbers
        assert out == {**want, "T": out["T"]}
    else:
        assert out["n_buckets"] == want["n_buckets"]
        for key in ("ece", "k2", "vcdl", "vcdl_kink", "cdl", "ucal"):
            assert out[key] == pytest.approx(want[key], rel=1e-12, abs=1e-15), key
    assert want["cdl"] > 0.01
    # the worst task as stated: rows from low to high beliefs, without dominated actions; it
    # attains the CDL unless a kink at 0 or 1 needed an action that is best only there
    task = out["worst_task"]
    payoff = np.array(task["payoff"])
    kw = {"bins": bins, "sample_weight": w if weighted else None}
    gain = fc.cfdl(y, p, payoff=payoff, **kw)
    assert gain == pytest.approx(task["gain"], abs=1e-12) and gain <= out["cdl"] + 1e-12
    if all(0 < k < 1 for k in task["kinks"]):
        assert gain == pytest.approx(out["cdl"], abs=1e-12)
    assert len(task["actions"]) == len(task["payoff"]) == len(task["bounds"]) + 1
    assert task["bounds"] == sorted(task["bounds"])


def test_python_dash_m_reads_parquet(tmp_path):
    y, p, _ = _data(seed=4)
    f = _file(tmp_path, "parquet", y, p)
    r = subprocess.run(
        [sys.executable, "-m", "fastcdl", "metrics", str(f), "--json"], capture_output=True, text=True
    )
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["cdl"] == fc.cdl(y, p) and out["T"] == T


# -- bad input: one line naming file, column and row; exit 2; nothing on stdout --------

# one bad value at data index 1: CSV row 3 (the header is row 1), offset 1 otherwise
ROW = {"csv": "row 3", "parquet": "row offset 1", "npz": "row offset 1"}

BAD_FILES = [
    # (name, columns of the file, extra arguments, needles per format or for all)
    ("y=2", {"y": [0, 2], "p": [0.5, 0.5]}, [], {"all": ["column 'y'", "only 0 and 1", "ROW"]}),
    ("p=1.5", {"y": [0, 1], "p": [0.5, 1.5]}, [], {"all": ["column 'p'", "[0, 1]", "1.5", "ROW"]}),
    ("p<0", {"y": [0, 1], "p": [0.5, -0.25]}, [], {"all": ["column 'p'", "[0, 1]", "-0.25", "ROW"]}),
    ("NaN", {"y": [0, 1], "p": [0.5, float("nan")]}, [], {"all": ["column 'p'", "NaN", "ROW"]}),
    ("inf", {"y": [0, 1], "p": [0.5, float("inf")]}, [], {"all": ["column 'p'", "infinite", "ROW"]}),
    (
        "negative weight",
        {"y": [0, 1], "p": [0.5, 0.5], "w": [1.0, -1.0]},
        ["--weight-col", "w"],
        {"all": ["column 'w'", "non-negative", "ROW"]},
    ),
    (
        "missing column",
        {"y": [0, 1], "q": [0.5, 0.5]},
        [],
        {"csv": ["missing column", "'p'"], "parquet": ["missing column", "'p'"], "npz": ["missing column", "'p'"]},
    ),
    (
        "missing weight column",
        {"y": [0, 1], "p": [0.5, 0.5]},
        ["--weight-col", "weight"],
        {"all": ["missing", "'weight'"]},
    ),
    (
        "non-numeric",
        {"y": [0, 1], "p": ["0.5", "abc"]},
        [],
        {"csv": ["column 'p'", "row 3", "not a number", "'abc'"], "parquet": ["column 'p'", "not a number"],
         "npz": ["'p'", "must be numeric"]},
    ),
    ("no rows", {"y": np.array([], np.int64), "p": np.array([], np.float64)}, [], {"all": ["no rows"]}),
    (
        "all weights zero",
        {"y": [0, 1], "p": [0.5, 0.5], "w": [0.0, 0.0]},
        ["--weight-col", "w"],
        {"all": ["no rows with positive weight", "'w'"]},
    ),
]


def _run_bad(capsys, argv):
    code = main(argv)
    captured = capsys.readouterr()
    assert code == 2
    assert captured.out == ""
    err = captured.err
    assert err.endswith("\n") and err.count("\n") == 1, err
    return err


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("name, cols, args, needles", BAD_FILES, ids=[c[0] for c in BAD_FILES])
def test_bad_file_exits_2_with_one_line(tmp_path, capsys, fmt, name, cols, args, needles):
    f = _write(fmt, tmp_path / f"bad.{fmt}", cols)
    err = _run_bad(capsys, ["metrics", str(f), *args])
    assert str(f) in err
    for needle in needles.get(fmt, needles.get("all")):
        assert (ROW[fmt] if needle == "ROW" else needle) in err, err


@pytest.mark.parametrize("fmt", FORMATS)
def test_bad_value_located_across_chunks(tmp_path, capsys, monkeypatch, fmt):
    y, p, _ = _data(seed=5)
    p[150] = 1.5
    f = _file(tmp_path, fmt, y, p)
    monkeypatch.setattr(fastcdl.io, "CHUNK_ROWS", 7)
    err = _run_bad(capsys, ["metrics", str(f)])
    where = "row 152" if fmt == "csv" else "row offset 150"
    assert f"{f}: column 'p' must lie in [0, 1]; found 1.5 ({where})" in err


def test_parquet_null_value(tmp_path, capsys):
    f = tmp_path / "null.parquet"
    pq.write_table(pa.table({"y": [0, 1, 1], "p": pa.array([0.5, None, 0.2], pa.float64())}), f)
    err = _run_bad(capsys, ["metrics", str(f)])
    assert f"{f}: column 'p', row offset 1: missing value (null)" in err


@pytest.mark.parametrize("fmt", FORMATS)
def test_missing_empty_and_unreadable_files(tmp_path, capsys, fmt):
    nope = tmp_path / f"nope.{fmt}"
    err = _run_bad(capsys, ["metrics", str(nope)])
    assert str(nope) in err and "cannot read" in err

    empty = tmp_path / f"empty.{fmt}"
    empty.write_bytes(b"")
    err = _run_bad(capsys, ["metrics", str(empty)])
    assert f"{empty}: the file is empty" in err

    garbage = tmp_path / f"garbage.{fmt}"
    garbage.write_bytes(b"\xff\xfe\x00 not a file of predictions \x00\x81" * 3)
    err = _run_bad(capsys, ["metrics", str(garbage)])
    assert str(garbage) in err and ("not a readable" in err or "not a .npz archive" in err)


def test_truncated_npz_and_folder(tmp_path, capsys):
    good = _write("npz", tmp_path / "good.npz", {"y": [0, 1] * 50, "p": [0.25, 0.75] * 50})
    bad = tmp_path / "truncated.npz"
    bad.write_bytes(good.read_bytes()[:60])
    err = _run_bad(capsys, ["metrics", str(bad)])
    assert str(bad) in err and "not a readable .npz file" in err
    err = _run_bad(capsys, ["metrics", str(tmp_path)])
    assert str(tmp_path) in err and "folder" in err


@pytest.mark.parametrize("bins", [0, -3, 2.5, "x"])
def test_read_stats_refuses_bad_bins(tmp_path, bins):
    f = _file(tmp_path, "csv", *_data()[:2])
    with pytest.raises(InputError, match="bins must be a positive integer"):
        read_stats(f, bins=bins)


@pytest.mark.parametrize("bins", ["0", "-3"])
def test_bad_bins_option_one_line(capsys, bins):
    with pytest.raises(SystemExit) as e:
        main(["metrics", str(EXAMPLES / "forecasts.csv"), "--bins", bins])
    captured = capsys.readouterr()
    assert e.value.code == 2 and captured.out == ""
    assert captured.err.count("\n") == 1 and "bins must be a positive integer" in captured.err


@pytest.mark.parametrize("bins", ["0", "-3"])
def test_bad_bins_option_exits_2(capsys, bins):
    with pytest.raises(SystemExit) as e:
        main(["metrics", str(EXAMPLES / "forecasts.csv"), "--bins", bins])
    captured = capsys.readouterr()
    assert e.value.code == 2 and captured.out == ""
    assert f"bins must be a positive integer, got {bins}" in captured.err.splitlines()[-1]
