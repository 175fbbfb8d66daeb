"""Measure the sample estimators, quantile binning and smCE against baselines timed in the same
run; write the section of results/benchmarks/metrics.md that starts at BEGIN.

    .venv/bin/python scripts/bench_estimators.py [--T 10000000] [--repeat 3] [--no-peer]
                                                 [--parts estimators,binning,smce]

Every figure is the median of --repeat runs after a warm-up call (JIT excluded). Bars (issue 12):
each estimator on the exact table of T continuous predictions within 3x of np.sort of those
predictions; quantile bins within 2x of equal-width bins; smCE at least 10x faster than
relplot's smECE on the same rounds (relplot from the `peers` extra; skipped with --no-peer or
when it is not installed). On Linux the script re-runs itself with glibc's malloc thresholds
fixed (MALLOC_ENV below), so that what ran before a call does not change its speed.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import subprocess
import sys
import time
import warnings
from pathlib import Path

import benchrecord
import numpy as np

import fastcdl as fc
from fastcdl._tables import outcome_keys as _outcome_keys
from fastcdl import sample as fs
from fastcdl.exact import sorted_outcome_keys

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "results" / "benchmarks" / "metrics.md"
BEGIN = "<!-- scripts/bench_estimators.py -->"
JSON = ROOT / "results" / "benchmarks" / "estimators.json"

# the estimators and rounds asv's SampleEstimatorsSuite times (asv_bench/benchmarks/sample.py, data.py)
ESTIMATORS = benchrecord.definitions("sample").ESTIMATORS
rounds = benchrecord.definitions("data").sample_rounds


REC = None  # main's benchrecord.Recorder: every repeat of every timing, the machine, load and source


def median_time(f, repeat, key):
    return REC.time(key, f, repeat)


# glibc adapts its mmap and trim thresholds to the sizes freed so far, so the same call ran up to 2x
# slower or faster depending on what ran before it in the process (fresh pages from the kernel, or
# reused heap): smCE of 10^6 rounds 46 ms then 23 ms, relplot's smECE 0.40 s then 0.26 s (one-off,
# 2026-11-25). Fixed thresholds give every comparison the same warm allocator, both libraries alike.
MALLOC_ENV = {"MALLOC_MMAP_THRESHOLD_": str(32 << 20), "MALLOC_TRIM_THRESHOLD_": str(64 << 20)}


def code_hash():
    """A hash of fastcdl's Python sources (benchrecord's, 12 digits): every run of the smCE part is
    kept with it, and the verdict reads the runs of the current sources."""
    return benchrecord.source()["fastcdl_sources_sha256"][:12]


def main():
    if sys.platform == "linux" and any(os.environ.get(k) != v for k, v in MALLOC_ENV.items()):
        os.execve(sys.executable, [sys.executable, *sys.argv], {**os.environ, **MALLOC_ENV})
    ap = argparse.ArgumentParser()
    ap.add_argument("--T", type=int, default=10**7)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-peer", action="store_true")
    ap.add_argument(
        "--parts",
        default="estimators,binning,smce",
        help="which comparisons to run; the others are read from the last run's JSON",
    )
    args = ap.parse_args()
    warnings.simplefilter("ignore", fc.SampleSizeWarning)  # mce and rmsce of an exact table: timed, not read
    T, R = args.T, args.repeat
    parts = set(args.parts.split(",")) & {"estimators", "binning", "smce"}  # none: rewrite the file from the JSON
    y, p = rounds(T)
    res = json.loads(JSON.read_text()) if JSON.exists() and parts != {"estimators", "binning", "smce"} else {}
    if parts:
        res.update({"T": T, "repeat": R})
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    global REC
    REC = benchrecord.Recorder("estimators", T=T, repeat=R, parts=sorted(parts))
    res.setdefault("measured", {})
    for part in parts:
        res.setdefault("repeats", {})[part] = R
    if "estimators" in parts:
        res["estimators"] = time_estimators(y, p, R)
        res["measured"]["estimators"] = when
    if "binning" in parts:
        load = os.getloadavg()[0]
        res["binning"] = time_binning(y, p, R)
        res["measured"]["binning"] = when
        res.setdefault("load", {})["binning"] = [load, os.getloadavg()[0]]
        spin = subprocess.Popen([sys.executable, "-c", "while True: pass"])  # holds one core
        try:
            res["binning_loaded"] = time_binning(y, p, R, "binning_loaded")
        finally:
            spin.kill()
            spin.wait()
    if "smce" in parts:
        load = os.getloadavg()[0]
        res["smce"] = time_smce(T, R, args.no_peer)
        res["measured"]["smce"] = when
        res.setdefault("load", {})["smce"] = [load, os.getloadavg()[0]]
        code = code_hash()
        old = json.loads(JSON.read_text()).get("smce_runs", []) if JSON.exists() else []
        res["smce_runs"] = old + [
            {
                "when": when,
                "code": code,
                "repeat": R,
                "load": res["load"]["smce"],
                "ratio": {str(r["T"]): r["ratio"] for r in res["smce"] if "ratio" in r},
                "ratio_min": {str(r["T"]): r["ratio_min"] for r in res["smce"] if "ratio_min" in r},
            }
        ]
    if parts:
        REC.doc["load_end"], REC.doc["finished"] = benchrecord.loadavg(), benchrecord.utc()
        REC.doc["run_seconds"] = round(time.perf_counter() - REC._t0, 1)
        REC.doc["source"]["timed_modules"] = benchrecord.timed_modules()  # make bench-check reads it
        meta = {k: v for k, v in REC.doc.items() if k not in ("timings", "values")}
        for part in parts:  # the raw repeats of each part, with the run that measured them
            res.setdefault("record", {})[part] = {
                **meta,
                "timings": {k: v for k, v in REC.doc["timings"].items() if k.split("/")[0] in (part, part + "_loaded")},
            }
    JSON.write_text(json.dumps(res, indent=1) + "\n")
    write(res)


def time_estimators(y, p, R):
    """1. every estimator on the exact table of T continuous predictions, against np.sort(p)"""
    st = fc.bucket_stats(y, p)
    small = fc.bucket_stats(*rounds(100, 1))
    for name in ESTIMATORS:
        getattr(fs, name)(small)
    sort = median_time(lambda: np.sort(p), R, "estimators/np_sort")
    table = median_time(lambda: fc.bucket_stats(y, p), R, "estimators/bucket_stats_exact")
    # each call on a new table object holding the same arrays: some estimators keep what they
    # computed for the last table they saw (fastcdl._tables.last_table), which would be timed instead
    est = {
        name: median_time(lambda f=getattr(fs, name): f(copy.copy(st)), R, f"estimators/{name}") for name in ESTIMATORS
    }
    out = {"np_sort": sort, "bucket_stats_exact": table, **est}
    print(json.dumps(out), flush=True)
    return out


def interleaved(fs, R, prefix):
    """Medians of R timings of each function of ``fs`` (name -> f), the calls interleaved (f1, f2,
    ..., f1, f2, ...) after a warm-up call each, and the R timings themselves: a change of the
    machine's load during the run falls on every function alike, so per-repeat ratios hold."""
    med = REC.interleaved(prefix, fs, R)
    return med, {k: REC.seconds(f"{prefix}/{k}") for k in fs}


def time_binning(y, p, R, part="binning"):
    """2. quantile bins against equal-width bins (and arbitrary edges) on the same rounds, on one
    thread and on the default thread pool; ratio = median over repeats of quantile / equal width
    (the calls interleaved)"""
    binning = []
    for m in (15, fc._validate.auto_bins(p.shape[0]), 1000, 10**4):
        edges = fc.bucket_stats(y, p, bins=m, strategy="quantile").edges
        row = {"m": m}
        for jobs, tag in ((None, ""), (1, "_1thread")):
            med, ts = interleaved(
                {
                    "uniform": lambda m=m: fc.bucket_stats(y, p, bins=m, n_jobs=jobs),
                    "quantile": lambda m=m: fc.bucket_stats(y, p, bins=m, strategy="quantile", n_jobs=jobs),
                    "edges": lambda e=edges: fc.bucket_stats(y, p, bins=e, n_jobs=jobs),
                },
                R,
                f"{part}/{m}{tag}",
            )
            row.update({k + tag: v for k, v in med.items()})
            row["ratio" + tag] = float(np.median(np.array(ts["quantile"]) / np.array(ts["uniform"])))
        binning.append(row)
        print(json.dumps(binning[-1]), flush=True)
    return binning


def time_smce(T, R, no_peer):
    """3. smCE against relplot's smECE on the same rounds, and the floor: one sort of p. smCE from
    rounds, the same with both side-by-side steps off (one thread) and relplot are timed interleaved
    (fastcdl, one thread, relplot, fastcdl, ...): ratio = median over repeats of relplot / smCE in
    the same repeat, ratio_min the least of them."""
    smece = None
    if not no_peer:
        try:
            from relplot import smECE as smece
        except ImportError:
            smece = None
    peer = []
    for t in (10**3, 10**4, 10**5, 10**6, T):
        yy, pp = rounds(t, 2)
        yf = yy.astype(np.float64)
        y8 = yy.astype(np.uint8)
        row = {
            "T": t,
            "np_sort": median_time(lambda: np.sort(pp), R, f"smce/{t:.0e}/np_sort"),
            "bucket_stats": median_time(lambda: fc.bucket_stats(yy, pp), R, f"smce/{t:.0e}/bucket_stats"),
            "sorted_keys": median_time(lambda: sorted_outcome_keys(y8, pp), R, f"smce/{t:.0e}/sorted_keys"),
        }
        calls = {"smce_rounds": lambda: fs.smce(yy, pp), "smce_rounds_one_thread": lambda: one_thread(yy, pp)}
        if smece is not None:
            calls["relplot_smece"] = lambda: smece(pp, yf)
        med, ts = interleaved(calls, R, f"smce/{t:.0e}")
        row.update(med)
        if smece is not None:
            ratios = np.array(ts["relplot_smece"]) / np.array(ts["smce_rounds"])
            row["ratio"] = float(np.median(ratios))
            row["ratio_min"] = float(ratios.min())
        tab = fc.bucket_stats(yy, pp)
        row["smce_table"] = median_time(
            lambda: fs.smce(copy.copy(tab)), R, f"smce/{t:.0e}/smce_table"
        )  # (a new object)
        peer.append(row)
        print(json.dumps(row), flush=True)
    return peer


def one_thread(y, p):
    """fs.smce(y, p) with both side-by-side steps (the two halves of the sort, the two programmes) off."""
    saved = fs.SMCE_THREADS_FROM, _outcome_keys._PAIRED_SORT_FROM
    fs.SMCE_THREADS_FROM = _outcome_keys._PAIRED_SORT_FROM = 1 << 62
    try:
        return fs.smce(y, p)
    finally:
        fs.SMCE_THREADS_FROM, _outcome_keys._PAIRED_SORT_FROM = saved


def machine_lines(record):
    """One Machine line per run that measured a part (parts measured together share one)."""
    runs = {}
    for part, rec in record.items():
        runs.setdefault(rec["started"], (rec, []))[1].append(part)
    return [f"{', '.join(parts).capitalize()}: " + benchrecord.machine_line(rec) for rec, parts in runs.values()]


def write(res):
    T, R = res["T"], res["repeat"]
    e = res["estimators"]
    lines = [
        BEGIN,
        "",
        "## Sample estimators, quantile bins and smCE (issue 12)",
        "",
        f"Command: `.venv/bin/python scripts/bench_estimators.py --T {T} --repeat {R}` (medians of --repeat runs "
        "after a warm-up call (every repeat, and the machine, load and source of the run of each part, are in "
        "estimators.json), one process with glibc's malloc thresholds fixed (see the smCE part), the same arrays "
        "for each comparison; --repeat: "
        + ", ".join(f"{k} {v}" for k, v in res.get("repeats", {}).items())
        + "; raw figures in "
        "results/benchmarks/estimators.json). On a 2-core machine, its load given with each part: the absolute "
        "times are noisy, the ratios (measured side by side) less so. Measured: "
        + "; ".join(f"{k} {v}" for k, v in res.get("measured", {}).items())
        + " (`--parts` re-runs one "
        "comparison).",
        "",
        *machine_lines(res.get("record", {})),
        "",
        f"### Each estimator on the exact table of T = {T:.0e} continuous predictions (T buckets)",
        "",
        f"Baseline: np.sort of the predictions, {e['np_sort']:.3f} s (building the exact table itself, "
        f"fc.bucket_stats: {e['bucket_stats_exact']:.3f} s = {e['bucket_stats_exact'] / e['np_sort']:.2f}x). "
        "Bar: within 3x.",
        "",
        "| estimator (from the table) | median (s) | / np.sort | bar 3x |",
        "|---|---|---|---|",
    ]
    for name in ESTIMATORS:
        r = e[name] / e["np_sort"]
        lines.append(f"| {name} | {e[name]:.3f} | {r:.2f}x | {'met' if r <= 3 else 'missed'} |")
    load = res.get("load", {}).get("binning")
    loaded = (
        f" The machine's load average (1 min, `uptime`) was {load[0]:.2f} before and {load[1]:.2f} after this "
        "part, on 2 cores shared with other jobs."
        if load
        else ""
    )
    lines += [
        "",
        f"### Quantile bins against equal-width bins, T = {T:.0e}",
        "",
        "Quantile edges are found without a sort: a count over a grid of about 64 m cells (2^16 to 2^19, "
        "fastcdl.binning.edge_grid), then the predictions of the cells that hold the quantile ranks (a small share "
        "of the rounds when they spread: 2% at 10^4 bins) are gathered and the ranks selected among them; then the "
        "rounds are binned through a grid of about m cells (fastcdl/_compiled/buckets.py). The count and the gather "
        "run on numba's thread pool exactly when equal-width binning does (fastcdl._tables.tabulate._serial). Each row times "
        "the three calls interleaved, --repeat times, first with the default thread count, then with n_jobs=1; "
        "the ratio is the median over repeats of quantile / equal width in the same repeat, so a change of load "
        "during the run falls on both. Bar: quantile within 2x of equal width." + loaded,
        "",
        "The second table repeats the run with one core held by a busy process that the script starts (a loaded "
        "machine, on purpose).",
    ]
    for key, title in (("binning", "As the machine was"), ("binning_loaded", "One core held by a busy process")):
        if key not in res:
            continue
        lines += [
            "",
            f"{title}:",
            "",
            "| bins | equal width (s) | quantile (s) | quantile / equal width | bar 2x | the quantile edges given "
            "as an array (s) | one thread: equal width, quantile (s) | one thread: ratio |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for b in res[key]:
            r = b["ratio"]
            lines.append(
                f"| {b['m']} | {b['uniform']:.3f} | {b['quantile']:.3f} | {r:.2f}x | "
                f"{'met' if r <= 2 else 'missed'} | {b['edges']:.3f} | {b['uniform_1thread']:.3f}, "
                f"{b['quantile_1thread']:.3f} | {b['ratio_1thread']:.2f}x |"
            )
    load = res.get("load", {}).get("smce")
    loaded = (
        f" The machine's load average (1 min) was {load[0]:.2f} before and {load[1]:.2f} after this part, on "
        "2 cores; it counts this script's own process (about 1 while it runs, and a run just before it), so "
        "only above about 2 did another job hold a core."
        if load
        else ""
    )
    lines += [
        "",
        "### smCE (exact LP value) against relplot's smECE on the same rounds",
        "",
        "relplot's smECE is a kernel-smoothed ECE (a different quantity, the nearest peer). fastcdl's smCE from "
        "rounds writes the rounds' outcome keys in two halves split at a sampled median, radix-sorts the halves "
        f"side by side (from {_outcome_keys._PAIRED_SORT_FROM} rounds), reads the exact table's predictions and "
        "residuals off them in one pass (no table is built) and runs two dual programmes, one from each end, "
        f"joined at a middle bucket, side by side from {fs.SMCE_THREADS_FROM} buckets (fastcdl._parallel.pair: "
        "the second on a helper thread if it starts in time, else after the first on the calling thread). "
        "'One thread' turns both side-by-side steps off. smCE from rounds, one thread and relplot are timed "
        "interleaved, --repeat times after a warm-up call each; the ratio is the median over repeats of "
        "relplot / smCE in the same repeat, and the least such ratio is given beside it. The script runs with "
        "glibc's malloc thresholds fixed (MALLOC_MMAP_THRESHOLD_ 32 MiB, MALLOC_TRIM_THRESHOLD_ 64 MiB): with "
        "its adaptive thresholds, the same call ran up to 2x faster or slower depending on what the process "
        "had freed before (both libraries; see the reading). Bar: at least 10x faster." + loaded,
        "",
        "| T | np.sort (s) | sorted keys (s) | exact table (s) | smCE from the table (s) | smCE from rounds (s) | "
        "the same, one thread (s) | relplot smECE (s) | relplot / smCE (rounds), median | least over repeats | "
        "relplot / np.sort |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in res["smce"]:
        rel = r.get("relplot_smece")
        if rel is None:
            peer = "— | — | — | —"
        else:
            peer = f"{rel:.4f} | {r['ratio']:.1f}x | {r['ratio_min']:.1f}x | {rel / r['np_sort']:.1f}x"
        lines.append(
            f"| {r['T']:.0e} | {r['np_sort']:.4f} | {r['sorted_keys']:.4f} | {r['bucket_stats']:.4f} | "
            f"{r['smce_table']:.4f} | {r['smce_rounds']:.4f} | {r['smce_rounds_one_thread']:.4f} | {peer} |"
        )
    lines += ["", "### Reading", ""] + reading(res)
    text = OUT.read_text() if OUT.exists() else ""
    head = text[: text.index(BEGIN)] if BEGIN in text else text
    OUT.write_text(head.rstrip("\n") + "\n\n" + "\n".join(lines) + "\n")


# What changed in the quantile path, and the figures before (same command, same machine, shared).
BINNING_HISTORY = (
    "Before the counting grid grew with m (a fixed 2^16 cells, which at 10^4 bins gathered 15% of the rounds), 10^4 "
    "bins took 3.1x (2026-11-24 16:22 UTC). Before the count and the gather ran on the thread pool (2026-11-24 "
    "19:48 UTC, --repeat 3), the edges were found on one thread while equal width ran on two: 2.62x, 1.47x, 1.60x, 2.16x for "
    "15, 215, 1000 and 10^4 bins, and five consecutive runs at 10^4 bins gave 1.90x to 2.56x as the other core was "
    "busy or free. Now the count and the gather use the pool where equal width does, so a busy core slows both "
    "alike; the rank cells are found in one scan, small cells are sorted by insertion, and binning by arbitrary "
    "edges reads each grid cell's single cut beside its start. The tables are unchanged, bit for bit (a "
    "one-off comparison with the previous code on 96 quantile and weighted tables of 3 10^6 rounds). Not "
    "done: fusing the count with the binning (per-cell sums of n, s and p, the boundary cells split after the "
    "gather) would save a pass but add the prediction sums in another order, so the table would differ in the "
    "last bits from binning by the same edges (tests/test_quantile_bins.py requires it bit for bit); the quantile "
    "path needs three reads of the predictions where equal width needs one, and the bar holds only while the "
    "binning pass itself is slow next to a read of the predictions."
)


def reading(res):
    """What the tables show, in words, from the numbers themselves."""
    e = res["estimators"]
    worst = max(ESTIMATORS, key=lambda k: e[k])
    out = [
        f"- Estimators: the slowest, `{worst}`, takes {e[worst] / e['np_sort']:.2f}x np.sort of the predictions; "
        + ("every estimator meets the 3x bar." if e[worst] <= 3 * e["np_sort"] else "the 3x bar is missed.")
    ]
    line = "- Quantile bins"
    for key, how in (("binning", "as the machine was"), ("binning_loaded", "with one core held")):
        rows = res.get(key, [])
        met = [b["m"] for b in rows if b["ratio"] <= 2]
        missed = [b for b in rows if b["ratio"] > 2]
        if not rows:
            continue
        line += (
            f" ({how}): within 2x of equal width for {', '.join(str(m) for m in met) or 'no'} bins ("
            + ", ".join("{:.2f}x".format(b["ratio"]) for b in rows)
            + ")"
        )
        if missed:
            line += f", not for {', '.join(str(b['m']) for b in missed)} bins"
        line += ";"
    line = line.rstrip(";")
    worst = max(res["binning"], key=lambda b: b["ratio"])
    rest = (worst["quantile"] - worst["edges"]) / worst["uniform"]
    line += (
        f". Where the time goes at {worst['m']} bins: binning by the quantile edges alone (the edges column) "
        f"costs {worst['edges'] / worst['uniform']:.2f}x equal width, and finding the edges (two passes over the "
        f"predictions: the count and the gather, then the selection) the remaining {rest:.2f}x. On one thread "
        "the ratios are "
        + ", ".join("{:.2f}x".format(b["ratio_1thread"]) for b in res["binning"])
        + ". "
        + BINNING_HISTORY
    )
    out.append(line)
    sm = res["smce"]
    if all("relplot_smece" in r for r in sm):
        big = sm[-1]
        flo = min(r["relplot_smece"] / r["np_sort"] for r in sm)
        fhi = max(r["relplot_smece"] / r["np_sort"] for r in sm)

        def sizes(met):
            return ", ".join(f"{r['T']:.0e}" for r in sm if (r["ratio"] >= 10) == met) or "none"

        out.append(
            "- smCE against relplot's smECE, this run: "
            + ", ".join(f"{r['ratio']:.1f}x at {r['T']:.0e} (least repeat {r['ratio_min']:.1f}x)" for r in sm)
            + f". The 10x bar is met for T = {sizes(True)} and not met for T = {sizes(False)}. One thread: "
            + ", ".join(f"{r['relplot_smece'] / r['smce_rounds_one_thread']:.1f}x" for r in sm)
            + f". relplot's smECE, a kernel smoothing on a grid, costs {flo:.1f}x to {fhi:.1f}x one np.sort of the "
            "same predictions; the exact smCE needs them in order. Where the time goes at "
            f"T = {big['T']:.0e}: sorting the outcome keys {big['sorted_keys']:.3f} s "
            f"({big['sorted_keys'] / big['np_sort']:.2f}x np.sort), the residuals and the programmes the rest "
            f"({big['smce_rounds'] - big['sorted_keys']:.3f} s). From an existing table (merged chunks, a stream) "
            f"smCE is {big['relplot_smece'] / big['smce_table']:.1f}x faster than relplot from rounds."
        )
        every = res.get("smce_runs", [])
        runs = [r for r in every if every and r["code"] == every[-1]["code"]]
        if runs:
            sizes_ = [k for k in runs[-1]["ratio"] if int(k) >= 10**5]
            worst = {k: min(r["ratio"][k] for r in runs if k in r["ratio"]) for k in sizes_}
            least = {k: min(r["ratio_min"][k] for r in runs if k in r["ratio_min"]) for k in sizes_}
            held = all(v >= 10 for v in worst.values())
            out.append(
                f"- Run to run: {len(runs)} run(s) of this part with the current code (fastcdl sources "
                f"{runs[-1]['code']}; "
                + "; ".join(
                    f"{r['when']}, --repeat {r['repeat']}, load {r['load'][0]:.2f}-{r['load'][1]:.2f}" for r in runs
                )
                + "). The least median ratio over these runs: "
                + ", ".join(f"{v:.1f}x at {int(k):.0e}" for k, v in worst.items())
                + "; the least single repeat: "
                + ", ".join(f"{v:.1f}x at {int(k):.0e}" for k, v in least.items())
                + (
                    ". So from 10^5 rounds on the 10x bar held in every run."
                    if held
                    else ". So from 10^5 rounds on the 10x bar did **not** hold in every run."
                )
            )
            earlier = [r for r in every if r["code"] != runs[-1]["code"]]
            if earlier:
                out.append(
                    "- Earlier runs of this part (older sources, the median ratios at 10^5, 10^6 and 10^7; "
                    "results/benchmarks/estimators.json keeps them all): "
                    + "; ".join(
                        f"{r['when']} ({r['code']}): "
                        + ", ".join(
                            f"{r['ratio'][k]:.1f}x" for k in ("100000", "1000000", "10000000") if k in r["ratio"]
                        )
                        for r in earlier
                    )
                    + "."
                )
        out.append(
            "- What made smCE faster on 2026-11-25, and what was tried and not kept, was timed outside this "
            "script, and no file here keeps those timings, so none is quoted: (1) a programme takes its rounds' "
            "demand lazily, so a bucket that is used up is never put in order; (2) the two programmes run side by "
            "side from 2^15 buckets, and (3) the sort's two halves too, from 2^16 rounds; (4) the residuals use the "
            "sort's spare buffer; (5) one compiled copy of the programme per side; (6) keys that differ only in "
            "their low 58 bits are sorted in seven passes rather than eight; (7) buckets of about 128 breakpoints "
            "rather than 64. Large arrays are allocated by numpy (which asks for huge pages) rather than inside "
            "compiled code, and this script fixes glibc's allocation thresholds so that the first pass at a size "
            "does not fetch fresh pages on every call. Tried and not kept: a two-sided dual with two heaps, a "
            "bucket queue, a radix sort on two threads whose passes wait for each other, two deques, other sorts "
            "than the LSD radix with 8-bit digits, and a programme minimum carried round by round. The sources of "
            "the earlier runs listed above: 3b26450ee990 has (1)-(3); d97181891d3a only adds a lock around the "
            "helper's creation (so its three runs show the run-to-run spread of one version); d267e2e7db64 adds "
            "(5) and (6); (7) came last."
        )
    return out


if __name__ == "__main__":
    main()
