"""Ways to bin into equal-width bins with the exact edge rule, timed against the sum of the inputs;
writes results/benchmarks/uniform-bins-variants.md and .json.

    .venv/bin/python scripts/bench_uniform_variants.py [--repeat 9] [--T 30000000]

Each variant fills the packed table of one chunk after another as fastcdl's serial kernel does
(fastcdl._compiled.buckets.chunking), with the same checks of p and y, and is checked against
fastcdl.bucket_stats on predictions at and within ulps of every edge first. Two inputs: uniform
random predictions, and the same predictions floored to the grid of the edges (every round on
an edge, so every round needs the edge rule's correction).

- one pass, bin_of: the loop fastcdl ran before (guess floor(p m), a predicted branch to
  correct it against the cuts edges[j] * EDGE_SLACK);
- blocks, guess + correction near edges: per block of 1024 rounds a branch-free pass computes the
  guess and counts the rounds within m 2^-40 of an integer of p m; only a block with such a round
  is corrected against a table of cuts; then the adds;
- blocks, computed cut (fastcdl's kernel, buckets.uniform_bin): per block a branch-free pass
  computes the bin, comparing p with the cut at the guess's lower edge computed as the edges
  are, (j / m) * EDGE_SLACK (one division, vectorized); then the adds.

Every ratio is the median over repeats of the variant's time over the sum's, timed back to back
in rotating order.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
from numba import njit

sys.path.insert(0, str(Path(__file__).resolve().parent))

import benchrecord  # noqa: E402
from bench_buckets import emulated, emulation_note, machine, source_hash  # noqa: E402

import fastcdl as fc  # noqa: E402
from fastcdl._compiled import buckets as kb  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
PACK = np.int64(1) << np.int64(32)
BLOCK = 1024


@njit(cache=False)
def _one_pass(y, p, edges, ny, pp):
    m = edges.shape[0] - 1
    ok = True
    for t in range(p.shape[0]):
        x = p[t]
        yt = y[t]
        ok &= (x >= 0.0) & (x <= 1.0) & ((yt == 0) | (yt == 1))
        j = kb.bin_of(x, edges, m, True) if ok else 0
        ny[j] += PACK + np.int64(yt)
        pp[j] += x
    return ok


@njit(cache=False)
def _near_edges(y, p, cuts, ny, pp):
    m = cuts.shape[0] - 1
    mf = np.float64(m)
    delta = m * 2.0**-40
    bins = np.empty(BLOCK, dtype=np.uint32)
    n_bad = 0
    for start in range(0, p.shape[0], BLOCK):
        stop = min(p.shape[0], start + BLOCK)
        xs = p[start:stop]
        ys = y[start:stop]
        n_near = 0
        for i in range(stop - start):
            x = xs[i]
            yt = ys[i]
            good = (x >= 0.0) & (x <= 1.0) & ((yt == 0) | (yt == 1))
            n_bad += 1 - np.int64(good)
            u = x * mf if good else 0.5
            j = np.int32(u)
            f = u - j
            n_near += np.int64((f < delta) | (f > 1.0 - delta))
            bins[i] = np.uint32(min(j, np.int32(m - 1)))
        if n_near:
            for i in range(stop - start):
                j = bins[i]
                bins[i] = j + np.uint32(xs[i] > cuts[j + 1]) - np.uint32(xs[i] <= cuts[j])
        for i in range(stop - start):
            j = bins[i]
            ny[j] += PACK + np.int64(ys[i])
            pp[j] += xs[i]
    return n_bad == 0


@njit(cache=False)
def _chunked(y, p, edges, cuts, variant):
    m = edges.shape[0] - 1
    T = p.shape[0]
    n_chunks, step = kb.chunking(T, m)
    ny = np.zeros(n_chunks * m, dtype=np.int64)
    pp = np.zeros(n_chunks * m)
    ok = True
    for c in range(n_chunks):
        lo, hi = c * step, min(T, (c + 1) * step)
        a, b = ny[c * m : (c + 1) * m], pp[c * m : (c + 1) * m]
        if variant == 0:
            ok &= _one_pass(y[lo:hi], p[lo:hi], edges, a, b)
        elif variant == 1:
            ok &= _near_edges(y[lo:hi], p[lo:hi], cuts, a, b)
        else:
            ok &= kb._bin_span_uniform(y[lo:hi], p[lo:hi], m, a, b)
    total = np.zeros(m, dtype=np.int64)
    for c in range(n_chunks):
        total += ny[c * m : (c + 1) * m]
    return ok, total


VARIANTS = {0: "one pass, bin_of (before)", 1: "blocks, guess + correction near edges", 2: "blocks, computed cut (now)"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--T", type=int, default=3 * 10**7)
    ap.add_argument("--bins", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=9)
    ap.add_argument(
        "--out-dir",
        type=Path,
        default=ROOT / "results" / "benchmarks",
        help="folder of the .json and .md (default results/benchmarks)",
    )
    args = ap.parse_args()
    m, T = args.bins, args.T
    edges = np.arange(m + 1) / m
    cuts = edges * kb.EDGE_SLACK
    cuts[0], cuts[-1] = -np.inf, np.inf
    # exactness first, on predictions at and near every edge
    up, down, adv = edges.copy(), edges.copy(), [edges, edges * kb.EDGE_SLACK]
    for _ in range(12):
        up, down = np.nextafter(up, 2.0), np.nextafter(down, -1.0)
        adv += [up.copy(), down.copy()]
    pa = np.concatenate(adv)
    pa = pa[(pa >= 0) & (pa <= 1)]
    ya = (np.arange(pa.shape[0]) % 2).astype(np.uint8)
    want = fc.bucket_stats(ya.view(bool), pa, bins=m)
    for v in VARIANTS:
        ok, total = _chunked(ya, pa, edges, cuts, v)
        assert ok and (total >> 32)[want.bins].tolist() == want.counts.tolist(), VARIANTS[v]
    rng = np.random.default_rng(0)
    p = rng.random(T)
    y = (rng.random(T) < p).view(np.uint8)
    data = {"random": p, "on the edges' grid": np.floor(p * m) / m}
    out = {
        "machine": machine(),
        "emulated": emulated(),
        "command": "python " + " ".join([Path(sys.argv[0]).as_posix()] + sys.argv[1:]),
        "source": source_hash(),
        "started": datetime.now(UTC).isoformat(),
        "load_before": os.getloadavg(),
        "T": T,
        "bins": m,
        "repeat": args.repeat,
        "inputs": {},
    }
    for label, pv in data.items():
        fs = {"sum": lambda pv=pv: (pv.sum(), y.sum())}
        for v in VARIANTS:
            fs[VARIANTS[v]] = lambda pv=pv, v=v: _chunked(y, pv, edges, cuts, v)
        names = list(fs)
        ts = benchrecord.repeats(fs, args.repeat, rotate=True).seconds  # a warm-up call each, rotating order
        out["inputs"][label] = {
            "times": ts,
            "ratios": {k: float(np.median(np.array(ts[k]) / np.array(ts["sum"]))) for k in names if k != "sum"},
            "load": os.getloadavg(),
        }
    out["load_after"] = os.getloadavg()
    name = "uniform-bins-variants" + (f"-{out['emulated']['cpu_name']}" if out["emulated"] else "")
    folder = args.out_dir
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.json").write_text(json.dumps(out, indent=1) + "\n")
    (folder / f"{name}.md").write_text(render(out, name))
    print(render(out, name))


def render(o, name) -> str:
    mc = o["machine"]
    lines = [
        "# Equal-width bins with the exact edge rule: three loops against the sum of the inputs",
        "",
        f"Machine: {mc['cpu']} (LLVM: {mc['llvm_cpu']}), {mc['cores']} cores, vector extensions "
        f"{', '.join(mc['vector_extensions'])}; numpy {mc['numpy']}, numba {mc['numba']}.",
        *emulation_note(o.get("emulated")),
        "",
        f"Load average (1, 5, 15 min) before: {', '.join(f'{x:.2f}' for x in o['load_before'])}; after: "
        f"{', '.join(f'{x:.2f}' for x in o['load_after'])}. Source: {o['source']}. Run {o['started'][:16]} UTC.",
        "",
        f"Command: `{o['command']}` ({o['repeat']} repeats in rotating order; every time in `{name}.json`).",
        "",
        f"T = {o['T']:.0e} rounds, {o['bins']} bins, bool outcomes, one thread; each loop checked against "
        "bucket_stats at and within 12 ulps of every edge first. The ratio is the median of time / time of "
        "summing p and y, taken back to back.",
        "",
        "| loop | " + " | ".join(f"predictions {k}" for k in o["inputs"]) + " |",
        "|---|" + "---|" * len(o["inputs"]),
    ]
    for v in VARIANTS.values():
        lines.append(f"| {v} | " + " | ".join(f"{r['ratios'][v]:.2f}x" for r in o["inputs"].values()) + " |")
    lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
