"""fastcdl next to what users would pick instead, on the same data, in one process.

    .venv/bin/python scripts/compare_peers.py [--quick] [--repeat 5]     # or: make peers

Writes results/benchmarks/peers.md: median times, speed ratios and the largest absolute
difference of the values, then a "Bars" section judged from those numbers. Peers are
optional (`pip install -e ".[peers]"`); a peer that is not installed is skipped and the
table says so. All timings of one table row group are interleaved (one call of each
implementation per repetition), so a change of machine load hits all of them alike.

- binned ECE (15 equal-width bins): scikit-learn's calibration_curve plus the ECE a user
  derives from it, relplot's binnedECE, netcal's ECE, torchmetrics' binary calibration
  error (CPU), for T = 10^4 .. 10^7 on uniform p; and on p in {k/30}, where points sit on
  interior edges and each library's bin convention shows;
- exact CDL: fastcdl.cdl against the linear program of the specification (section 2.4)
  over proper scoring rules, solved with scipy's HiGHS, for m = 10 .. 200 buckets.

Every repeat, the machine, load and source are kept in results/benchmarks/peers.json
(scripts/benchrecord.py) and peers.md is written from it (`--render` rewrites it alone).
Algorithm 1's sparse and dense oracles are timed by scripts/bench_online.py.

The peers' calls and bin conventions are asv's (asv_bench/benchmarks/peers.py, ECEPeersSuite),
so this table and the tracked suite time the same code.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import sys
from pathlib import Path
from typing import Callable

import numpy as np

import fastcdl as fc

sys.path.insert(0, str(Path(__file__).resolve().parent))  # benchrecord, also when tests import this file
import benchrecord  # noqa: E402

OUT = Path(__file__).resolve().parents[1] / "results" / "benchmarks" / "peers.md"
BARS = {"netcal": 50.0, "relplot": 3.0, "ece_abs": 1e-12, "lp": 1e4, "lp_abs": 1e-8}
ONE_THREAD = "fastcdl.ece, 1 numba thread"
MEMORY = "reading y and p once (numpy sum; the memory bound, not an ECE)"


# -- timing and environment ------------------------------------------------------------------


def interleaved(rec, prefix: str, funcs: dict[str, Callable[[], float]], repeat: int) -> dict[str, float]:
    """{name: value}; every repeat's seconds per call recorded under prefix/name.

    One warm-up call each, then `repeat` rounds in which every function runs once in turn;
    a function faster than benchrecord.MIN_BATCH runs back to back in a batch long enough to
    time (like timeit's autorange), so microsecond calls are not timed cold after a slow peer.
    """
    timings = benchrecord.repeats(funcs, repeat, calls="auto")
    rec.record(prefix, timings, interleaved=True)
    return timings.values


def version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def installed(module: str) -> bool:
    try:
        importlib.import_module(module)
    except ImportError:
        return False
    return True


def threads() -> str:
    import numba

    out = f"numba {numba.get_num_threads()} threads"
    if installed("torch"):
        import torch

        out += f", torch {torch.get_num_threads()} threads"
    return out


# -- binned ECE: the peers and their bin conventions (asv_bench/benchmarks/peers.py, whose
# ECEPeersSuite times the same calls) ----------------------------------------------------------

P = benchrecord.definitions("peers")
BINS, Peer, FASTCDL, ECE_PEERS = P.BINS, P.Peer, P.FASTCDL, P.ECE_PEERS
ece_fastcdl, ece_fastcdl_1thread, ece_by_bin, bins_fastcdl = (
    P.ece_fastcdl,
    P.ece_fastcdl_1thread,
    P.ece_by_bin,
    P.bins_fastcdl,
)
uniform_rounds, grid_rounds = P.uniform_rounds, P.grid_rounds


def ece_timings(rec, T, rng, repeat):
    """Times every installed implementation on uniform p at T, interleaved; values and moved rounds."""
    y, p = uniform_rounds(T, rng)
    peers = [peer for peer in ECE_PEERS if installed(peer.module)]
    funcs = {FASTCDL.name: lambda: ece_fastcdl(y, p), ONE_THREAD: lambda: ece_fastcdl_1thread(y, p)}
    funcs |= {peer.name: (lambda f=peer.ece: f(y, p)) for peer in peers}
    funcs[MEMORY] = lambda: float(p.sum() + y.sum())
    values = interleaved(rec, f"ece/{T:.0e}", funcs, repeat)
    j_fc = bins_fastcdl(p)
    for peer in peers:
        rec.value(
            f"ece/{T:.0e}/{peer.name}",
            {
                "abs_diff": abs(values[peer.name] - values[FASTCDL.name]),
                "moved": int(np.count_nonzero(peer.bins(p) != j_fc)),
            },
        )
    rec.value(f"ece/{T:.0e}/{ONE_THREAD}", {"abs_diff": abs(values[ONE_THREAD] - values[FASTCDL.name]), "moved": 0})


def edge_rows(T, rng):
    """The table on p = k/30: each value, its difference, and how much its bin convention explains."""
    y, p = grid_rounds(T, rng)
    v_fc = ece_fastcdl(y, p)
    j_fc = bins_fastcdl(p)
    rows = [
        {
            "name": FASTCDL.name,
            "value": v_fc,
            "abs_diff": 0.0,
            "moved": 0,
            "rule_diff": abs(v_fc - ece_by_bin(y, p, j_fc)),
            "rule": FASTCDL.convention,
        }
    ]
    for peer in ECE_PEERS:
        if installed(peer.module):
            v, j = peer.ece(y, p), peer.bins(p)
            rows.append(
                {
                    "name": peer.name,
                    "value": v,
                    "abs_diff": abs(v - v_fc),
                    "moved": int(np.count_nonzero(j != j_fc)),
                    "rule_diff": abs(v - ece_by_bin(y, p, j)),
                    "rule": peer.convention,
                }
            )
    return {
        "T": T,
        "on_edge": int(np.isin(p, np.arange(1, BINS) / BINS).sum()),
        "at_one": int((p == 1).sum()),
        "rows": rows,
    }


# -- the CDL linear program -------------------------------------------------------------------


def cdl_lp(st: fc.BucketStats) -> float:
    """The LP of docs/metrics.md for k = 2: maximise the recalibration gain over proper scores in [0, 1].

    Variables S(x, 0), S(x, 1) for every point x in {q_i} U {qhat_i} U {0, 1}; one
    properness row per ordered pair (belief x, report x'), four non-zeros each (sparse).
    """
    from scipy.optimize import linprog
    from scipy.sparse import coo_array

    q, n, s = st.table()
    qhat = s / n
    pts = np.unique(np.concatenate([q, qhat, [0.0, 1.0]]))
    K = pts.shape[0]
    a, b = np.searchsorted(pts, qhat), np.searchsorted(pts, q)
    c = np.zeros(2 * K)
    np.add.at(c, 2 * a, n - s)
    np.add.at(c, 2 * a + 1, s)
    np.add.at(c, 2 * b, -(n - s))
    np.add.at(c, 2 * b + 1, -s)
    c /= n.sum()
    i, j = np.nonzero(~np.eye(K, dtype=bool))  # truthful report x_i beats report x_j under belief x_i
    r = np.arange(i.shape[0])
    rows = np.concatenate([r, r, r, r])
    cols = np.concatenate([2 * i, 2 * i + 1, 2 * j, 2 * j + 1])
    vals = np.concatenate([-(1 - pts[i]), -pts[i], 1 - pts[i], pts[i]])
    A = coo_array((vals, (rows, cols)), shape=(i.shape[0], 2 * K)).tocsr()
    res = linprog(-c, A_ub=A, b_ub=np.zeros(i.shape[0]), bounds=(0, 1), method="highs")
    if res.status != 0:
        raise RuntimeError(f"HiGHS did not solve the CDL program: {res.message}")
    return -res.fun


def random_table(m, rng):
    q = np.sort(rng.choice(np.arange(1, 1000) / 1000, m, replace=False))
    n = rng.integers(1, 40, m)
    return fc.BucketStats(q, n, rng.binomial(n, q), q * n)


def lp_row(rec, m, rng, repeat):
    st = random_table(m, rng)
    v = interleaved(rec, f"lp/{m}", {"lp": lambda: cdl_lp(st), "fastcdl": lambda: fc.cdl(st)}, repeat)
    n_pts = np.unique(np.concatenate([st.values, st.frequencies, [0.0, 1.0]])).shape[0]
    rec.value(f"lp/{m}", {"points": int(n_pts), "abs_diff": abs(v["lp"] - v["fastcdl"])})


# -- the report -------------------------------------------------------------------------------


def verdict(ratio, bar):
    if ratio >= bar:
        return f"**met** ({ratio:.3g}x >= {bar:g}x)"
    return f"**missed** ({ratio:.3g}x < {bar:g}x: short by a factor {bar / ratio:.2f})"


def ece_table(doc):
    """Rows of the uniform-p table, and the largest |difference| of a peer's value over all T."""
    med = lambda key: benchrecord.median(doc, key)  # noqa: E731
    rows, worst = [], 0.0
    for T in doc["params"]["ece_T"]:
        t_fc = med(f"ece/{T:.0e}/{FASTCDL.name}")
        for name in (FASTCDL.name, ONE_THREAD, *(peer.name for peer in ECE_PEERS), MEMORY):
            key = f"ece/{T:.0e}/{name}"
            if key not in doc["timings"]:
                rows.append(f"| {T:.0e} | {name} | not installed | | | |")
                continue
            t = med(key)
            if name == MEMORY:
                rows.append(f"| {T:.0e} | {name} | {1e3 * t:.3f} | {t / t_fc:.2f}x |  |  |")
                continue
            v = doc["values"].get(key, {"abs_diff": 0.0, "moved": 0})
            if name not in (FASTCDL.name, ONE_THREAD):
                worst = max(worst, v["abs_diff"])
            rows.append(f"| {T:.0e} | {name} | {1e3 * t:.3f} | {t / t_fc:.2f}x | {v['abs_diff']:.1e} | {v['moved']} |")
    return rows, worst


def bars_section(doc, ece_max_abs):
    """The Bars section, judged from the numbers of this run."""
    med = lambda key: benchrecord.median(doc, key)  # noqa: E731
    lines = ["", "## Bars (judged from this run)", ""]
    if 10**7 not in doc["params"]["ece_T"]:
        return lines + ["T = 10^7 was not run (--quick), so the ECE bars are not judged."]
    t_fc = med(f"ece/1e+07/{FASTCDL.name}")
    for dist, name in (("netcal", "netcal ECE"), ("relplot", "relplot binnedECE")):
        if f"ece/1e+07/{name}" not in doc["timings"]:
            lines.append(f"- binned ECE vs {dist} at T = 10^7: {dist} not installed, not judged.")
            continue
        ratio = med(f"ece/1e+07/{name}") / t_fc
        lines.append(f"- binned ECE vs {dist} at T = 10^7 (bar {BARS[dist]:g}x): {verdict(ratio, BARS[dist])}.")
    lines.append(
        f"- ECE values on uniform p (no point on an interior edge), largest |difference| to any "
        f"peer over all T: {ece_max_abs:.1e} (bar {BARS['ece_abs']:g}): "
        f"**{'met' if ece_max_abs <= BARS['ece_abs'] else 'missed'}**. "
        f"On p = k/30 the values differ by design; see the edge table."
    )
    if "lp/100/lp" in doc["timings"]:
        ratio, diff = med("lp/100/lp") / med("lp/100/fastcdl"), doc["values"]["lp/100"]["abs_diff"]
        lines.append(
            f"- exact CDL vs HiGHS LP at m = 100 (bar {BARS['lp']:g}x, values to {BARS['lp_abs']:g}): "
            f"{verdict(ratio, BARS['lp'])}; |difference| {diff:.1e}: "
            f"**{'met' if diff <= BARS['lp_abs'] else 'missed'}**."
        )
    return lines


def render(doc):
    lines = benchrecord.header(doc, "fastcdl next to the alternatives")
    lines += [
        f"Peers: {doc['values']['peers']}; {doc['values']['threads']}.",
        "",
        f"Medians of {doc['params']['repeat']} interleaved calls after one warm-up call each, all in one "
        "process on the same arrays; speed-up = peer time / fastcdl time. Absolute times move with the "
        "machine's load; compare the ratios measured together. (Algorithm 1's sparse and dense oracles: "
        "`online.md`.)",
        "",
        f"## Binned ECE, {BINS} equal-width bins, uniform p (no point on an interior edge)",
        "",
        '"moved" counts rounds that the peer\'s binning rule (below) puts in another bin than fastcdl.',
        "",
        "| T | implementation | median (ms) | time / fastcdl time | abs difference to fastcdl | moved |",
        "|---|---|---|---|---|---|",
    ]
    rows, worst = ece_table(doc)
    lines += rows
    edge = doc["values"]["edges"]
    lines += [
        "",
        f"## Binned ECE on p = k/30 (T = {edge['T']:.0e}): points on the interior edges k/15",
        "",
        f"{edge['on_edge']} of the {edge['T']} rounds sit on an interior edge, {edge['at_one']} at p = 1. "
        "The last-but-one column recomputes each value from the binning rule in the last column "
        "(numpy bincount of p - y per bin): a difference at rounding level (1e-14 or less) there means the "
        "rule explains the peer's value, so the difference to fastcdl is the bin convention and nothing else. "
        "Rounds at p = 1 have y = 1, so a bin of their own changes no value; they only count as moved.",
        "",
        "| implementation | value | abs difference to fastcdl | rounds in another bin | abs difference to its rule | binning rule |",
        "|---|---|---|---|---|---|",
    ]
    lines += [
        f"| {r['name']} | {r['value']:.12f} | {r['abs_diff']:.1e} | {r['moved']} | {r['rule_diff']:.1e} | {r['rule']} |"
        for r in edge["rows"]
    ]
    lines += [
        "",
        "## Exact CDL: fastcdl.cdl against the HiGHS linear program (docs/metrics.md)",
        "",
        "LP time includes building the sparse constraint matrix (a user has to build it too).",
        "",
        "| buckets m | LP variables | LP constraints | HiGHS LP (ms) | fastcdl.cdl (ms) | speed-up | abs difference |",
        "|---|---|---|---|---|---|---|",
    ]
    for m in doc["params"]["lp_m"]:
        t_lp, t_fc = benchrecord.median(doc, f"lp/{m}/lp"), benchrecord.median(doc, f"lp/{m}/fastcdl")
        v = doc["values"][f"lp/{m}"]
        lines.append(
            f"| {m} | {2 * v['points']} | {v['points'] * (v['points'] - 1)} | {1e3 * t_lp:.1f} | "
            f"{1e3 * t_fc:.4f} | {t_lp / t_fc:.0f}x | {v['abs_diff']:.1e} |"
        )
    return lines + bars_section(doc, worst)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="smaller sizes (a smoke run)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--render", action="store_true", help="only write peers.md from peers.json")
    args = ap.parse_args(argv)
    if not args.render:
        ece_T = [10**4, 10**5] if args.quick else [10**4, 10**5, 10**6, 10**7]
        lp_m = [10, 50, 100] if args.quick else [10, 50, 100, 200]
        rec = benchrecord.Recorder(
            "peers",
            [sys.argv[0], *(argv if argv is not None else sys.argv[1:])],
            repeat=args.repeat,
            ece_T=ece_T,
            lp_m=lp_m,
        )
        rec.value(
            "peers",
            ", ".join(f"{peer.dist} {version(peer.dist) or 'not installed'}" for peer in ECE_PEERS)
            + f"; torch {version('torch') or 'not installed'}",
        )
        rec.value("threads", threads())
        rng = np.random.default_rng(0)
        for T in ece_T:
            ece_timings(rec, T, rng, args.repeat)
            print(f"ECE T={T:.0e} done", file=sys.stderr)
        rec.value("edges", edge_rows(10**5, rng))
        for m in lp_m:
            lp_row(rec, m, rng, args.repeat if m < 200 else max(1, args.repeat // 2))
            print(f"LP m={m} done", file=sys.stderr)
        rec.save()
    lines = render(benchrecord.load("peers"))
    benchrecord.write_md("peers", lines)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
