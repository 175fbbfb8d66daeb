"""Measure the sample estimators, quantile binning and smCE against baselines timed in the same
run; write the section of results/benchmarks/metrics.md that starts at BEGIN.

    .venv/bin/python scripts/bench_estimators.py [--T 10000000] [--repeat 3] [--no-peer]
                                                 [--parts estimators,binning,smce]

Every figure is the median of --repeat runs after a warm-up call (JIT excluded). Bars (issue 12):
each estimator on the exact table of T continuous predictions within 3x of np.sort of those
predictions; quantile bins within 2x of equal-width bins; smCE at least 10x faster than
relplot's smECE on the same rounds (relplot from the `peers` extra; skipped with --no-peer or
when it is not installed).
"""

from __future__ import annotations

import argparse
import json
import os
import time
import warnings
from pathlib import Path

import numpy as np

import fastcdl as fc
from fastcdl import sample as fs
from fastcdl.metrics import sorted_outcome_keys

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "results" / "benchmarks" / "metrics.md"
BEGIN = "<!-- scripts/bench_estimators.py -->"
JSON = ROOT / "results" / "benchmarks" / "estimators.json"

ESTIMATORS = ("cdl_monotone", "vcdl_monotone", "cdl_monotone_report", "cutoff_ce", "cutoff_ce_test", "atb",
              "atb_unbiased", "smce", "mce", "rmsce", "brier", "brier_decomposition")


def median_time(f, repeat):
    f()
    ts = []
    for _ in range(repeat):
        t = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t)
    return float(np.median(ts))


def rounds(T, seed=0):
    rng = np.random.default_rng(seed)
    p = rng.random(T)
    return rng.random(T) < p, p


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--T", type=int, default=10**7)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-peer", action="store_true")
    ap.add_argument("--parts", default="estimators,binning,smce",
                    help="which comparisons to run; the others are read from the last run's JSON")
    args = ap.parse_args()
    warnings.simplefilter("ignore", fc.SampleSizeWarning)  # mce and rmsce of an exact table: timed, not read
    T, R = args.T, args.repeat
    parts = set(args.parts.split(","))
    y, p = rounds(T)
    res = json.loads(JSON.read_text()) if JSON.exists() and parts != {"estimators", "binning", "smce"} else {}
    res.update({"T": T, "repeat": R})
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    res.setdefault("measured", {})
    if "estimators" in parts:
        res["estimators"] = time_estimators(y, p, R)
        res["measured"]["estimators"] = when
    if "binning" in parts:
        load = os.getloadavg()[0]
        res["binning"] = time_binning(y, p, R)
        res["measured"]["binning"] = when
        res.setdefault("load", {})["binning"] = [load, os.getloadavg()[0]]
    if "smce" in parts:
        load = os.getloadavg()[0]
        res["smce"] = time_smce(T, R, args.no_peer)
        res["measured"]["smce"] = when
        res.setdefault("load", {})["smce"] = [load, os.getloadavg()[0]]
    JSON.write_text(json.dumps(res, indent=1) + "\n")
    write(res)


def time_estimators(y, p, R):
    """1. every estimator on the exact table of T continuous predictions, against np.sort(p)"""
    st = fc.bucket_stats(y, p)
    small = fc.bucket_stats(*rounds(100, 1))
    for name in ESTIMATORS:
        getattr(fs, name)(small)
    sort = median_time(lambda: np.sort(p), R)
    table = median_time(lambda: fc.bucket_stats(y, p), R)
    est = {name: median_time(lambda f=getattr(fs, name): f(st), R) for name in ESTIMATORS}
    out = {"np_sort": sort, "bucket_stats_exact": table, **est}
    print(json.dumps(out), flush=True)
    return out


def time_binning(y, p, R):
    """2. quantile bins against equal-width bins (and arbitrary edges) on the same rounds"""
    binning = []
    for m in (15, fc._validate.auto_bins(p.shape[0]), 1000, 10**4):
        uni = median_time(lambda m=m: fc.bucket_stats(y, p, bins=m), R)
        qua = median_time(lambda m=m: fc.bucket_stats(y, p, bins=m, strategy="quantile"), R)
        edges = fc.bucket_stats(y, p, bins=m, strategy="quantile").edges
        arb = median_time(lambda e=edges: fc.bucket_stats(y, p, bins=e), R)
        binning.append({"m": m, "uniform": uni, "quantile": qua, "edges": arb})
        print(json.dumps(binning[-1]), flush=True)
    return binning


def time_smce(T, R, no_peer):
    """3. smCE against relplot's smECE on the same rounds, and the floor: one sort of p"""
    peer = []
    smece = None
    if not no_peer:
        try:
            from relplot import smECE as smece
        except ImportError:
            smece = None
    for t in (10**3, 10**4, 10**5, 10**6, T):
        yy, pp = rounds(t, 2)
        yf = yy.astype(np.float64)
        y8 = yy.astype(np.uint8)
        row = {"T": t, "np_sort": median_time(lambda: np.sort(pp), R),
               "bucket_stats": median_time(lambda: fc.bucket_stats(yy, pp), R),
               "sorted_keys": median_time(lambda: sorted_outcome_keys(y8, pp), R),
               "smce_rounds": median_time(lambda: fs.smce(yy, pp), R)}
        threads_from = fs.SMCE_THREADS_FROM
        fs.SMCE_THREADS_FROM = 1 << 62  # the same call on one thread
        try:
            row["smce_rounds_one_thread"] = median_time(lambda: fs.smce(yy, pp), R)
        finally:
            fs.SMCE_THREADS_FROM = threads_from
        tab = fc.bucket_stats(yy, pp)
        row["smce_table"] = median_time(lambda: fs.smce(tab), R)
        if smece is not None:
            row["relplot_smece"] = median_time(lambda: smece(pp, yf), R)
        peer.append(row)
        print(json.dumps(row), flush=True)
    return peer


def write(res):
    T, R = res["T"], res["repeat"]
    e = res["estimators"]
    lines = [BEGIN, "", "## Sample estimators, quantile bins and smCE (issue 12)", "",
             f"Command: `.venv/bin/python scripts/bench_estimators.py --T {T} --repeat {R}` (medians of {R} runs after "
             "a warm-up call, one process, the same arrays for each comparison; raw figures in "
             "results/benchmarks/estimators.json). The machine was shared with other jobs while this ran: the "
             "absolute times are noisy, the ratios (measured side by side) less so. Measured: "
             + "; ".join(f"{k} {v}" for k, v in res.get("measured", {}).items()) + " (`--parts` re-runs one "
             "comparison; the binning was re-run after the quantile path changed).", "",
             f"### Each estimator on the exact table of T = {T:.0e} continuous predictions (T buckets)", "",
             f"Baseline: np.sort of the predictions, {e['np_sort']:.3f} s (building the exact table itself, "
             f"fc.bucket_stats: {e['bucket_stats_exact']:.3f} s = {e['bucket_stats_exact'] / e['np_sort']:.2f}x). "
             "Bar: within 3x.", "",
             "| estimator (from the table) | median (s) | / np.sort | bar 3x |", "|---|---|---|---|"]
    for name in ESTIMATORS:
        r = e[name] / e["np_sort"]
        lines.append(f"| {name} | {e[name]:.3f} | {r:.2f}x | {'met' if r <= 3 else 'missed'} |")
    load = res.get("load", {}).get("binning")
    loaded = (f" The machine's load average (1 min, `uptime`) was {load[0]:.2f} before and {load[1]:.2f} after this "
              "part, on 2 cores shared with other jobs." if load else "")
    lines += ["", f"### Quantile bins against equal-width bins, T = {T:.0e}", "",
              "Quantile edges are found without a sort: a count over a grid of about 64 m cells (2^16 to 2^19, "
              "fastcdl.binning.edge_grid), then the predictions of the cells that hold the quantile ranks (a small share "
              "of the rounds when they spread: 2% at 10^4 bins) are gathered and the ranks selected among them; then the "
              "rounds are binned through a grid of about m cells (fastcdl/_kernels/buckets.py). Bar: quantile within 2x of "
              "equal width." + loaded, "",
              "| bins | equal width (s) | quantile (s) | quantile / equal width | bar 2x | the quantile edges given as an array (s) |",
              "|---|---|---|---|---|---|"]
    for b in res["binning"]:
        r = b["quantile"] / b["uniform"]
        lines.append(f"| {b['m']} | {b['uniform']:.3f} | {b['quantile']:.3f} | {r:.2f}x | "
                     f"{'met' if r <= 2 else 'missed'} | {b['edges']:.3f} |")
    load = res.get("load", {}).get("smce")
    loaded = (f" The machine's load average (1 min) was {load[0]:.2f} before and {load[1]:.2f} after this part, on "
              "2 cores: above about 1, another job held a core, and the two programmes' threads shared the other."
              if load else "")
    lines += ["", "### smCE (exact LP value) against relplot's smECE on the same rounds", "",
              "relplot's smECE is a kernel-smoothed ECE (a different quantity, the nearest peer). fastcdl's smCE from "
              "rounds sorts their outcome keys (radix sort from 2^14 rounds on), reads the exact table's predictions "
              "and residuals off them in one pass (no table is built) and runs two dual programmes, one from each "
              f"end, joined at a middle bucket; from {fs.SMCE_THREADS_FROM} buckets on they run on two threads. "
              "Bar: at least 10x faster." + loaded,
              "", "| T | np.sort (s) | sorted keys (s) | exact table (s) | smCE from the table (s) | smCE from rounds (s) | "
              "the same, one thread (s) | relplot smECE (s) | relplot / smCE (rounds) | relplot / np.sort |",
              "|---|---|---|---|---|---|---|---|---|---|"]
    for r in res["smce"]:
        rel = r.get("relplot_smece")
        if rel is None:
            peer = "— | — | —"
        else:
            peer = f"{rel:.4f} | {rel / r['smce_rounds']:.1f}x | {rel / r['np_sort']:.1f}x"
        lines.append(f"| {r['T']:.0e} | {r['np_sort']:.4f} | {r['sorted_keys']:.4f} | {r['bucket_stats']:.4f} | "
                     f"{r['smce_table']:.4f} | {r['smce_rounds']:.4f} | {r['smce_rounds_one_thread']:.4f} | {peer} |")
    lines += ["", "### Reading", ""] + reading(res)
    text = OUT.read_text() if OUT.exists() else ""
    head = text[: text.index(BEGIN)] if BEGIN in text else text
    OUT.write_text(head.rstrip("\n") + "\n\n" + "\n".join(lines) + "\n")


def reading(res):
    """What the tables show, in words, from the numbers themselves."""
    e = res["estimators"]
    worst = max(ESTIMATORS, key=lambda k: e[k])
    out = [f"- Estimators: the slowest, `{worst}`, takes {e[worst] / e['np_sort']:.2f}x np.sort of the predictions; "
           + ("every estimator meets the 3x bar." if e[worst] <= 3 * e["np_sort"] else "the 3x bar is missed.")]
    met = [b["m"] for b in res["binning"] if b["quantile"] <= 2 * b["uniform"]]
    missed = [b for b in res["binning"] if b["quantile"] > 2 * b["uniform"]]
    line = f"- Quantile bins: within 2x of equal width for {', '.join(str(m) for m in met) or 'no'} bins"
    if missed:
        ratios = ", ".join("{:.1f}x".format(b["quantile"] / b["uniform"]) for b in missed)
        line += f"; not for {', '.join(str(b['m']) for b in missed)} bins ({ratios})"
    worst = max(res["binning"], key=lambda b: b["quantile"] / b["uniform"])
    rest = (worst["quantile"] - worst["edges"]) / worst["uniform"]
    line += (f". Where the time goes at {worst['m']} bins: binning by the quantile edges alone (last column) costs "
             f"{worst['edges'] / worst['uniform']:.2f}x equal width, and finding the edges (two passes over the "
             f"predictions: the count and the gather) the remaining {rest:.2f}x. Before the counting grid grew with m "
             "(a fixed 2^16 cells, which at 10^4 bins gathered 15% of the rounds), 10^4 bins took 3.1x "
             "(2026-11-24 16:22 UTC, same command). At 10^4 bins the ratio depends on the machine's state more than "
             "on the code: equal-width binning runs on two threads and took 0.030 s when both cores were free but "
             "0.064 to 0.096 s when another job held one, while the quantile edges are found on one thread (two "
             "threads counted slower when the cores were shared). Five consecutive runs of this command "
             "(2026-11-24 19:29 to 19:31 UTC, load average 2.8 to 3.4) gave 1.90x, 1.94x, 1.94x, 2.07x with equal "
             "width at 0.064 to 0.096 s, and 2.56x (this table) with it at 0.032 s")
    out.append(line + ".")
    sm = res["smce"]
    if all("relplot_smece" in r for r in sm):
        lo = min(r["relplot_smece"] / r["smce_rounds"] for r in sm)
        hi = max(r["relplot_smece"] / r["smce_rounds"] for r in sm)
        flo = min(r["relplot_smece"] / r["np_sort"] for r in sm)
        fhi = max(r["relplot_smece"] / r["np_sort"] for r in sm)
        big = sm[-1]

        def sizes(met):
            return ", ".join(f"{r['T']:.0e}" for r in sm if (r["relplot_smece"] >= 10 * r["smce_rounds"]) == met) or "none"

        one_lo = min(r["relplot_smece"] / r["smce_rounds_one_thread"] for r in sm)
        one_hi = max(r["relplot_smece"] / r["smce_rounds_one_thread"] for r in sm)
        out.append(
            f"- smCE against relplot's smECE: {lo:.1f}x to {hi:.1f}x faster from rounds ({one_lo:.1f}x to "
            f"{one_hi:.1f}x on one thread). The 10x bar is met for T = {sizes(True)} and **not met** for "
            f"T = {sizes(False)}. relplot's smECE, a kernel smoothing on a grid, costs {flo:.1f}x to {fhi:.1f}x one "
            "np.sort of the same predictions; the exact smCE needs them in order. Where the time goes at "
            f"T = {big['T']:.0e}: sorting the outcome keys {big['sorted_keys']:.2f} s "
            f"({big['sorted_keys'] / big['np_sort']:.2f}x np.sort), the residuals and the programmes the rest "
            f"({big['smce_rounds'] - big['sorted_keys']:.2f} s; "
            f"{big['smce_rounds_one_thread'] - big['sorted_keys']:.2f} s on one thread). Their cost is the "
            "breakpoints: about one enters per round, is appended to a bucket of the queue (a write to scattered "
            "memory), and about half leave through a small heap; how many enter depends on the data. From an "
            f"existing table (merged chunks, a stream) smCE is {big['relplot_smece'] / big['smce_table']:.1f}x "
            "faster than relplot from rounds.")
        out.append(
            "- The programmes against the previous version (one heap over all breakpoints, one-off measurement in "
            "one process, medians of 3, another job on the second core): on the exact tables of three calibrated "
            "samples of 10^7 rounds, 0.94, 1.11 and 0.89 s for one heap against 0.31, 0.37 and 0.63 s for the two "
            "programmes with bucket queues on one thread.")
        out.append(
            "- Memory (one-off measurement, three runs): writing one float every 4 KiB of a new 160 MB array took "
            "0.086 to 0.098 s when the array was allocated inside compiled code and 0.017 to 0.018 s when numpy "
            "allocated it (numpy asks for huge pages on large arrays; this machine's transparent huge pages are "
            "'madvise'). So the exact table's and smCE's large arrays are allocated by numpy: the exact table of "
            f"{res['T']:.0e} rounds took 0.443 s in the previous recorded run (2026-11-24 19:48 UTC) and "
            f"{res['estimators']['bucket_stats_exact']:.3f} s in this one, with this and an in-place sort.")
        out.append(
            "- Tried and not kept (one-off measurements, not produced by this script). (1) The two-sided dual (two "
            "heaps, lazy deletion) took 2.45 s against 0.70 s for the one-sided one with one heap, on the same "
            "calibrated table of 10^7 rounds. (2) A bucket queue with thousands of buckets of about two "
            "breakpoints each, and a heap per bucket (previous version): no faster than one heap. (3) Keeping the "
            "first bucket sorted instead of a heap: 15 to 30% faster at 10^5 and 10^6 rounds, but its insertions "
            "are quadratic in a bucket's size, which the data can make large. (4) A radix sort on two threads, and "
            "a first pass by value into 2^8 to 2^14 buckets: not faster than the one-thread LSD sort with another "
            "job on the second core. (5) Two deques (the primal programme) are exact but move breakpoints back and "
            "forth: 550 crossings per round at 10^7 (13 s).")
    return out


if __name__ == "__main__":
    main()
