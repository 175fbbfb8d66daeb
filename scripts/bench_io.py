"""Reading a file of predictions into its bucket table: fastcdl.io against pyarrow plus the table.

    .venv/bin/python scripts/bench_io.py [--rows 10000000] [--repeat 3]
    .venv/bin/python scripts/bench_io.py --render      # io.md from io.json

Writes two CSV files of --rows rows (y in {0, 1}; p continuous with 17 significant digits, and p
on a grid of 0.01) into a temporary folder, and times, per file and per binning (exact, 15 bins):

- *fastcdl*: ``fastcdl.io.read_stats(path, bins=...)``, pyarrow's streaming CSV reader in
  chunks of 2^20 rows, each reduced to a table and merged (what ``fastcdl metrics`` runs);
- *pyarrow + table*: ``pyarrow.csv.read_csv(path)`` (the whole file, multi-threaded, types
  inferred), then ``fastcdl.bucket_stats`` of its two columns as numpy arrays;
- *before*: the hand-written Python parser this reader replaced (``fastcdl/io.py`` at commit
  bb27be3), once per file, exact tables.

Medians of --repeat runs, fastcdl and pyarrow + table alternating (every repeat, the machine,
load and source in results/benchmarks/io.json, scripts/benchrecord.py); kernels are compiled
before timing. The bar is fastcdl within 1.5x of
pyarrow + table.
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import tempfile
from pathlib import Path

import benchrecord
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
BEFORE = "bb27be3"  # the last commit with the hand-written CSV parser


def _write(folder: Path, rows: int):
    import pyarrow as pa
    import pyarrow.csv as pcsv

    rng = np.random.default_rng(0)
    p = rng.random(rows)
    y = (rng.random(rows) < p).astype(np.int64)
    files = {}
    files["continuous"] = folder / "continuous.csv"
    pcsv.write_csv(pa.table({"y": y, "p": p}), files["continuous"])
    files["grid 0.01"] = folder / "grid.csv"
    pcsv.write_csv(pa.table({"y": y, "p": np.round(p, 2)}), files["grid 0.01"])
    return files


def _before_reader():
    src = subprocess.run(["git", "show", f"{BEFORE}:fastcdl/io.py"], cwd=ROOT, capture_output=True, text=True)
    if src.returncode != 0:
        return None
    path = Path(tempfile.mkdtemp()) / "io_before.py"
    path.write_text(src.stdout)
    spec = importlib.util.spec_from_file_location("fastcdl_io_before", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.read_stats


def _alternate(rec, key, fns, repeat):
    """fns {name: fn} called in turn, `repeat` times, no warm-up call (the reader's first read of a
    file counts); every time recorded under key/name; the last call's results by name."""
    timings = benchrecord.repeats(fns, repeat, warmup=False)
    rec.record(key, timings, **({"interleaved": True} if len(fns) > 1 else {}))
    return timings.values


def measure(args, rec):
    import pyarrow
    import pyarrow.csv as pcsv

    import fastcdl as fc
    from fastcdl.io import read_stats

    rec.value("pyarrow", pyarrow.__version__)
    fc.bucket_stats([0, 1], [0.25, 0.5])  # compile (or load) the kernels
    fc.bucket_stats([0, 1], [0.25, 0.5], bins=15)
    before = None if args.no_before else _before_reader()
    with tempfile.TemporaryDirectory() as tmp:
        files = _write(Path(tmp), args.rows)
        for label, path in files.items():
            rec.value(f"{label}/file_mb", path.stat().st_size / 1e6)
            for bins in (None, 15):

                def baseline(path=path, bins=bins):
                    t = pcsv.read_csv(path)
                    return fc.bucket_stats(t["y"].to_numpy(), t["p"].to_numpy(), bins=bins)

                key = f"{label}/{'exact' if bins is None else f'{bins} bins'}"
                res = _alternate(
                    rec,
                    key,
                    {"pyarrow": baseline, "fastcdl": lambda path=path, bins=bins: read_stats(path, bins=bins)},
                    args.repeat,
                )
                got, want = res["fastcdl"], res["pyarrow"]
                if bins is None:
                    assert got == want, "the file's table differs from the arrays' table"
                else:
                    assert np.array_equal(got.counts, want.counts)
                rec.value(f"{key}/buckets", int(want.n_buckets))
                if before is not None and bins is None:
                    old = _alternate(rec, key, {"before": lambda path=path: before(path)}, 1)["before"]
                    assert np.array_equal(old.counts, want.counts)
                print(key, flush=True)


def render(doc):
    rows, p = doc["params"]["rows"], doc["params"]["repeat"]
    lines = benchrecord.header(doc, "Reading a CSV of predictions into its bucket table")
    lines += [
        f"{rows:,} rows, columns y (0/1) and p, written by pyarrow {doc['values']['pyarrow']}. *fastcdl* is "
        "`fastcdl.io.read_stats` (what `fastcdl metrics` runs): pyarrow's streaming CSV reader, strict parsing "
        "of the text cells, chunks of 2^20 rows reduced to bucket tables and merged. *pyarrow + table* reads "
        "the whole file with `pyarrow.csv.read_csv` (multi-threaded, types inferred) and builds the same "
        "table with `fastcdl.bucket_stats` from its columns. *before* is the hand-written Python CSV parser "
        f"that fastcdl used until commit {BEFORE}. Medians of {p} runs, the two readers alternating "
        "(before: one run); kernels compiled first.",
        "",
        "| p | file (MB) | table | buckets | fastcdl (s) | pyarrow + table (s) | fastcdl / (pyarrow + table) | before (s) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    ratios = []
    for label in ("continuous", "grid 0.01"):
        for how in ("exact", "15 bins"):
            key = f"{label}/{how}"
            ours, base = (benchrecord.median(doc, f"{key}/{n}") for n in ("fastcdl", "pyarrow"))
            old = doc["timings"].get(f"{key}/before")
            old_s = f"{old['median']:.1f}" if old else "—"
            ratios.append(ours / base)
            lines.append(
                f"| {label} | {doc['values'][f'{label}/file_mb']:.0f} | {how} | "
                f"{doc['values'][f'{key}/buckets']:,} | {ours:.2f} | {base:.2f} | {ours / base:.2f}x | "
                f"{old_s} |"
            )
    lines += [
        "",
        f"The largest ratio is {max(ratios):.2f}x (the bar: 1.5x). Streaming keeps memory at O(2^20 + m) rows "
        "for a file of any size, where `read_csv` holds the whole file; the exact tables of the chunks are "
        "merged once at the end (one stable sort of their runs).",
    ]
    return lines


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=10**7)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-before", action="store_true", help="skip the slow hand-written parser")
    ap.add_argument("--render", action="store_true", help="only write io.md from io.json")
    args = ap.parse_args()
    if not args.render:
        rec = benchrecord.Recorder("io", rows=args.rows, repeat=args.repeat, before=not args.no_before)
        measure(args, rec)
        rec.save()
    lines = render(benchrecord.load("io"))
    print(benchrecord.write_md("io", lines))


if __name__ == "__main__":
    sys.exit(main())
