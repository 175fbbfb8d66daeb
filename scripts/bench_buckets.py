"""The bucket kernels against their floors, in one run; writes results/benchmarks/bucket-speed.md
and bucket-speed.json beside it.

    .venv/bin/python scripts/bench_buckets.py [--repeat 15] [--T 30000000] [--m 1000000] [--out NAME]

Every ratio is a median over repeats in which the kernel and its baseline run back to back, in
an order that rotates from one repeat to the next (so a burst of load on the shared machine
hits both alike); the medians of the times are given too. JIT compilation is excluded (one
warm-up call each). The machine (CPU model, vector extensions, cores), the load average before
and after, the source's git hash and this command go into both files.

1. fastcdl.bucket_stats(y, p, bins=1000) on T uniform float64 predictions and 0/1 outcomes
   (float64 and bool), one thread and two, against numpy summing the two arrays (the memory
   bound), the simplest serial numba loop (bin ceil(p m) - 1, scattered adds; no edge rule,
   no checks) and numpy's searchsorted + three bincounts.
2. Threads: one against two for every kernel that can use a second thread: binning (uniform,
   quantile, weighted), the exact table (bins=None; its sort in two halves side by side) and
   smCE from rounds (its two programmes side by side).
3. The exact CDL (and VCDL, cdl_report) of a table of m buckets against np.sort of 2 m floats.
4. The exact table (bins=None) against the simplest code computing it: numpy sorts the
   outcome keys, one numba loop counts the runs, numpy multiplies out the prediction sums.
5. The online engine's round (simulate, truthful forecaster against bernoulli) against the
   simplest loop playing the same game.

--emulate-cpu NAME (e.g. znver3) runs the same on an older target emulated on this CPU: the
script starts itself again with numba compiling for LLVM's NAME and this CPU's features less
the AVX-512 family (NUMBA_CPU_NAME, NUMBA_CPU_FEATURES), numpy's AVX-512 kernels turned off
(NPY_DISABLE_CPU_FEATURES) and fastcdl's on-disk cache off (FASTCDL_CACHE=0), so the cache of
native code is not touched. The caches, memory and clock are still this machine's: it says how
the code compiles without AVX-512, not how fast a Zen 3 machine is.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import benchrecord
import numba
import numpy as np

import fastcdl as fc
from fastcdl import sample as fs
from fastcdl.online import simulate

ROOT = Path(__file__).resolve().parents[1]
# asv_bench/benchmarks: the rounds, table and numpy binning (data.py), the simplest codes (floors.py)
D = benchrecord.definitions("data")
F = benchrecord.definitions("floors")

# Extensions a pre-AVX-512 x86 target lacks: removed from the host's features for --emulate-cpu.
NOT_EMULATED = ("avx512", "avxvnni", "gfni", "amx")
NUMPY_AVX512 = "X86_V4 AVX512_ICL AVX512_SPR"


def emulation_env(cpu_name: str) -> dict:
    """The environment of a run compiled for ``cpu_name`` without AVX-512 (see the module's doc)."""
    import llvmlite.binding as ll

    features = ll.get_host_cpu_features()
    flags = ",".join(("-" if (not on or k.startswith(NOT_EMULATED)) else "+") + k for k, on in sorted(features.items()))
    return {
        "NUMBA_CPU_NAME": cpu_name,
        "NUMBA_CPU_FEATURES": flags,
        "NPY_DISABLE_CPU_FEATURES": NUMPY_AVX512,
        "FASTCDL_CACHE": "0",
    }


def emulated() -> dict | None:
    """The emulated target of this run, or None for the native one."""
    name = os.environ.get("NUMBA_CPU_NAME")
    if not name:
        return None
    on = sorted(f[1:] for f in os.environ.get("NUMBA_CPU_FEATURES", "").split(",") if f.startswith("+"))
    return {
        "cpu_name": name,
        "vector_extensions": [f for f in ("sse4.2", "avx", "avx2", "fma") if f in on]
        + [f for f in on if f.startswith("avx512")],
        "numpy_disabled": os.environ.get("NPY_DISABLE_CPU_FEATURES", ""),
        "fastcdl_cache": os.environ.get("FASTCDL_CACHE", "1"),
    }


def machine() -> dict:
    """CPU model, family/model, vector extensions, cores; numba's view of the CPU."""
    info = {}
    try:
        text = Path("/proc/cpuinfo").read_text()
        first = text.split("\n\n")[0]
        for line in first.splitlines():
            k, _, v = line.partition(":")
            info[k.strip()] = v.strip()
    except OSError:
        pass
    flags = set(info.get("flags", "").split())
    try:
        import llvmlite.binding as ll

        llvm_cpu = ll.get_host_cpu_name()
    except (ImportError, AttributeError):  # pragma: no cover
        llvm_cpu = "unknown"
    return {
        "cpu": info.get("model name", platform.processor() or "unknown CPU"),
        "cpu_family": info.get("cpu family"),
        "cpu_model": info.get("model"),
        "llvm_cpu": llvm_cpu,
        "vector_extensions": [
            f for f in ("sse4_2", "avx", "avx2", "fma", "avx512f", "avx512bw", "avx512vl") if f in flags
        ],
        "avx512": "avx512f" in flags,
        "cores": os.cpu_count(),
        "numba_threads": numba.config.NUMBA_NUM_THREADS,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "numba": numba.__version__,
    }


def source_hash() -> str:
    def git(*a):
        return subprocess.run(["git", "-C", str(ROOT), *a], capture_output=True, text=True, check=False).stdout.strip()

    h = git("rev-parse", "HEAD")
    return h + ("+dirty" if git("status", "--porcelain", "--untracked-files=no") else "")


def alternate(fs_: dict, repeat: int, cpu: bool = False):
    """name -> list of seconds (benchrecord.repeats: one warm-up call each, then the callables back
    to back in an order rotating each repeat); with cpu, also the thread's CPU seconds."""
    timings = benchrecord.repeats(fs_, repeat, rotate=True, cpu=cpu)
    return (timings.seconds, timings.cpu_seconds) if cpu else timings.seconds


def med(ts):
    return float(np.median(ts))


def ratio(ts, a, b):
    """Median over repeats of ts[a] / ts[b] (times taken back to back)."""
    return float(np.median(np.array(ts[a]) / np.array(ts[b])))


def serial_pairs(f):
    """f with the paired (two-thread) paths of the exact table and smCE turned off: they run
    when numba.config.NUMBA_NUM_THREADS >= 2, read at each call."""

    def g():
        old = numba.config.NUMBA_NUM_THREADS
        numba.config.NUMBA_NUM_THREADS = 1
        try:
            return f()
        finally:
            numba.config.NUMBA_NUM_THREADS = old

    return g


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--T", type=int, default=3 * 10**7)
    ap.add_argument("--bins", type=int, default=1000)
    ap.add_argument("--m", type=int, default=10**6)
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--out", default="bucket-speed")
    ap.add_argument(
        "--out-dir",
        type=Path,
        default=benchrecord.OUT_DIR,
        help="folder of the .json and .md (default results/benchmarks)",
    )
    ap.add_argument("--render", action="store_true", help="only write OUT.md from OUT.json")
    ap.add_argument("--emulate-cpu", default=None, help="compile for this older LLVM CPU, without AVX-512")
    args = ap.parse_args()
    if args.render:
        o = {**json.loads((args.out_dir / f"{args.out}.json").read_text()), "out": args.out}  # as renamed
        (args.out_dir / f"{args.out}.md").write_text(render(o))
        return
    if args.emulate_cpu and os.environ.get("NUMBA_CPU_NAME") != args.emulate_cpu:
        os.execve(sys.executable, [sys.executable, *sys.argv], {**os.environ, **emulation_env(args.emulate_cpu)})
    command = "python " + " ".join([Path(sys.argv[0]).as_posix()] + sys.argv[1:])
    started = datetime.now(UTC)
    load_before = os.getloadavg()
    mach = machine()
    T, bins, R = args.T, args.bins, args.repeat
    y_bool, p = D.sample_rounds(T)
    y_f64 = y_bool.astype(np.float64)
    w = np.random.default_rng(1).random(T)  # as asv's BucketStatsThreadsSuite
    edges = np.linspace(0.0, 1.0, bins + 1)
    out = {
        "machine": mach,
        "command": command,
        "source": source_hash(),
        "started": started.isoformat(),
        "load_before": load_before,
        "out": args.out,
        "emulated": emulated(),
        "T": T,
        "bins": bins,
        "m": args.m,
        "repeat": R,
        "sections": {},
    }

    # 1. uniform bins against the floors
    sec1 = {}
    for label, y in (("float64", y_f64), ("bool", y_bool)):
        ts = alternate(
            {
                "sum": lambda y=y: (p.sum(), y.sum()),
                "fastcdl_1": lambda y=y: fc.bucket_stats(y, p, bins=bins, n_jobs=1),
                "fastcdl_2": lambda y=y: fc.bucket_stats(y, p, bins=bins, n_jobs=2),
                "simplest_loop": lambda y=y: F.simplest_binning(y, p, bins),
            },
            R,
        )
        st = fc.bucket_stats(y, p, bins=bins)
        ref = F.simplest_binning(y, p, bins)
        assert np.array_equal(st.counts, ref[0][ref[0] > 0])  # no prediction of this data lies near an edge
        tn = alternate(
            {
                "sum": lambda y=y: (p.sum(), y.sum()),
                "fastcdl_1": lambda y=y: fc.bucket_stats(y, p, bins=bins, n_jobs=1),
                "numpy": lambda y=y: D.numpy_binning(edges, y, p),
            },
            max(3, R // 5),
        )
        sec1[label] = {
            "times": ts,
            "numpy_times": tn,
            "fastcdl_1/sum": ratio(ts, "fastcdl_1", "sum"),
            "fastcdl_2/sum": ratio(ts, "fastcdl_2", "sum"),
            "simplest/sum": ratio(ts, "simplest_loop", "sum"),
            "fastcdl_1/simplest": ratio(ts, "fastcdl_1", "simplest_loop"),
            "numpy/fastcdl_1": ratio(tn, "numpy", "fastcdl_1"),
        }
    out["sections"]["uniform"] = sec1

    # 2. one thread against two
    T2 = min(T, 10**7)
    p2, y2 = p[:T2].copy(), y_bool[:T2].copy()
    pairs = {
        "uniform bins": (
            lambda: fc.bucket_stats(y_bool, p, bins=bins, n_jobs=1),
            lambda: fc.bucket_stats(y_bool, p, bins=bins, n_jobs=2),
        ),
        "quantile bins": (
            lambda: fc.bucket_stats(y_bool, p, bins=bins, strategy="quantile", n_jobs=1),
            lambda: fc.bucket_stats(y_bool, p, bins=bins, strategy="quantile", n_jobs=2),
        ),
        "weighted uniform bins": (
            lambda: fc.bucket_stats(y_bool, p, bins=bins, sample_weight=w, n_jobs=1),
            lambda: fc.bucket_stats(y_bool, p, bins=bins, sample_weight=w, n_jobs=2),
        ),
        "exact table (bins=None)": (serial_pairs(lambda: fc.bucket_stats(y2, p2)), lambda: fc.bucket_stats(y2, p2)),
        "smCE from rounds": (serial_pairs(lambda: fs.smce(y2, p2)), lambda: fs.smce(y2, p2)),
    }
    sec2 = {}
    for name, (one, two) in pairs.items():
        ts = alternate({"one": one, "two": two}, R)
        sec2[name] = {
            "times": ts,
            "two/one": ratio(ts, "two", "one"),
            "rounds": T2 if name.startswith(("exact", "smCE")) else T,
        }
    out["sections"]["threads"] = sec2

    # 3. exact CDL of m buckets against np.sort of 2 m floats
    M = args.m
    table = D.table(M)  # as asv's CDLSuite
    x2 = np.random.default_rng(2).random(2 * M)
    # each on one thread: the CPU-time ratio holds on a shared machine, where the wall time also
    # counts the waits for a core
    ts, cpu = alternate(
        {
            "sort": lambda: np.sort(x2),
            "cdl": lambda: fc.cdl(table),
            "vcdl": lambda: fc.vcdl(table),
            "cdl_report": lambda: fc.cdl_report(table),
        },
        R,
        cpu=True,
    )
    out["sections"]["cdl"] = {
        "times": ts,
        "cpu_times": cpu,
        **{f"{k}/sort": ratio(ts, k, "sort") for k in ("cdl", "vcdl", "cdl_report")},
        **{f"{k}/sort cpu": ratio(cpu, k, "sort") for k in ("cdl", "vcdl", "cdl_report")},
    }

    # 4. exact table against the simplest code
    ts = alternate(
        {
            "fastcdl": lambda: fc.bucket_stats(y2, p2),
            "simplest": lambda: F.simplest_exact(y2, p2),
            "sort": lambda: np.sort(p2),
        },
        R,
    )
    st = fc.bucket_stats(y2, p2)
    v, nn, ss, _ = F.simplest_exact(y2, p2)
    assert np.array_equal(st.values, v) and np.array_equal(st.counts, nn) and np.array_equal(st.positives, ss)
    out["sections"]["exact"] = {
        "times": ts,
        "rounds": T2,
        "fastcdl/simplest": ratio(ts, "fastcdl", "simplest"),
        "fastcdl/sort": ratio(ts, "fastcdl", "sort"),
    }

    # 5. the online engine's round against the simplest loop
    TO, prob = F.GAME_T, F.GAME_PROB
    grid_m = int(np.ceil(np.sqrt(TO)))
    simulate("truthful", "bernoulli", horizon=1024, seed=0, adversary_params={"p": prob})
    ts = alternate(
        {
            "simulate": lambda: simulate("truthful", "bernoulli", horizon=TO, seed=1, adversary_params={"p": prob}),
            "simplest": lambda: F.simplest_truthful_game(TO, grid_m, prob, 1),
        },
        max(5, R // 3),
    )
    out["sections"]["online"] = {
        "times": ts,
        "rounds": TO,
        "simulate/simplest": ratio(ts, "simulate", "simplest"),
        "ns_per_round": {k: med(v) / TO * 1e9 for k, v in ts.items()},
    }

    out["load_after"] = os.getloadavg()
    out["finished"] = datetime.now(UTC).isoformat()
    out["timed_modules"] = benchrecord.timed_modules()  # the fastcdl modules timed: make bench-check reads them
    folder = args.out_dir
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{args.out}.json").write_text(json.dumps(out, indent=1) + "\n")
    (folder / f"{args.out}.md").write_text(render(out))
    print((folder / f"{args.out}.md").read_text())


def emulation_note(em) -> list:
    if not em:
        return []
    return [
        "",
        (
            f"**Emulated target, not another machine.** numba compiled every kernel for LLVM's `{em['cpu_name']}` with this "
            f"CPU's features less the AVX-512 family (vector extensions used: {', '.join(em['vector_extensions']) or 'none'}; "
            f"no AVX-512), numpy's AVX-512 kernels were off (NPY_DISABLE_CPU_FEATURES={em['numpy_disabled']}), and fastcdl's "
            f"cache was off (FASTCDL_CACHE={em['fastcdl_cache']}). It ran on the CPU above, with its caches, memory and "
            "clock: the ratios show what the code costs without AVX-512, not the speed of a machine of that family."
        ),
    ]


def render(o) -> str:
    mc = o["machine"]

    def ms(t):
        return f"{med(t) * 1e3:.1f}"

    lines = [
        "# Bucket kernels against their floors",
        "",
        (
            f"Machine: {mc['cpu']} (family {mc['cpu_family']}, model {mc['cpu_model']}; LLVM: {mc['llvm_cpu']}), "
            f"{mc['cores']} cores, vector extensions {', '.join(mc['vector_extensions'])} "
            f"({'with' if mc['avx512'] else 'no'} AVX-512); Python {mc['python']}, numpy {mc['numpy']}, numba {mc['numba']}."
        ),
        (
            f"Load average (1, 5, 15 min) before: {', '.join(f'{x:.2f}' for x in o['load_before'])}; after: "
            f"{', '.join(f'{x:.2f}' for x in o['load_after'])}. The machine was shared: absolute times move with the load, "
            "the ratios (each the median over repeats of two timings taken back to back) much less."
        ),
        f"Source: {o['source']}. Run {o['started'][:16]} to {o['finished'][11:16]} UTC.",
        *emulation_note(o.get("emulated")),
        "",
        f"Command: `{o['command']}` ({o['repeat']} alternated repeats; every time in `{o['out']}.json` beside this file).",
        "",
        f"## 1. bucket_stats(y, p, bins={o['bins']}), T = {o['T']:.0e} uniform float64 predictions",
        "",
        (
            "| outcomes | sum of p and y (ms) | fastcdl, 1 thread (ms) | fastcdl, 2 threads (ms) | simplest loop (ms) | "
            "fastcdl 1 thread / sum | 2 threads / sum | simplest loop / sum | numpy bincount / fastcdl 1 thread |"
        ),
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for label, r in o["sections"]["uniform"].items():
        t = r["times"]
        lines.append(
            f"| {label} | {ms(t['sum'])} | {ms(t['fastcdl_1'])} | {ms(t['fastcdl_2'])} | {ms(t['simplest_loop'])} | "
            f"{r['fastcdl_1/sum']:.2f}x | {r['fastcdl_2/sum']:.2f}x | {r['simplest/sum']:.2f}x | {r['numpy/fastcdl_1']:.1f}x |"
        )
    lines += [
        "",
        (
            "numpy bincount: `np.searchsorted` of the interior edges and three `np.bincount`s "
            f"(median {ms(o['sections']['uniform']['float64']['numpy_times']['numpy'])} ms with float64 outcomes). The simplest loop "
            "bins with ceil(p m) - 1 and adds n, s and p into three arrays: no edge rule, no checks of p or y."
        ),
        "Bar (issue 28): within 3x of the sum on one thread (target 2x), at least 10x faster than bincount.",
        "",
        "## 2. One thread against two",
        "",
        "| kernel | rounds | 1 thread (ms) | 2 threads (ms) | 2 / 1 (median of paired ratios) |",
        "|---|---|---|---|---|",
    ]
    for name, r in o["sections"]["threads"].items():
        lines.append(
            f"| {name} | {r['rounds']:.0e} | {ms(r['times']['one'])} | {ms(r['times']['two'])} | {r['two/one']:.2f}x |"
        )
    c = o["sections"]["cdl"]
    lines += [
        "",
        f"## 3. Exact CDL of a table of m = {o['m']:.0e} buckets",
        "",
    ]
    cpu = c.get("cpu_times")  # runs before CPU times were kept have wall times only
    if cpu is None:
        lines += ["| function | median (ms) | / np.sort of 2 m floats |", "|---|---|---|"]
    else:
        lines += [
            "| function | median (ms) | / np.sort of 2 m floats | CPU time: median (ms) | CPU time / np.sort |",
            "|---|---|---|---|---|",
        ]
    for k in ("sort", "cdl", "vcdl", "cdl_report"):
        label = "np.sort of 2 m floats" if k == "sort" else k
        row = f"| {label} | {ms(c['times'][k])} | {'1' if k == 'sort' else format(c[k + '/sort'], '.2f') + 'x'} |"
        if cpu is not None:
            row += f" {ms(cpu[k])} | {'1' if k == 'sort' else format(c[k + '/sort cpu'], '.2f') + 'x'} |"
        lines.append(row)
    e = o["sections"]["exact"]
    on = o["sections"]["online"]
    lines += [
        "",
        "Bar (issue 28): cdl within 5x of the sort."
        + (
            ""
            if cpu is None
            else " Each runs on one thread; the CPU time (the thread's own, time.thread_time) "
            "leaves out the waits for a core on the shared machine."
        ),
    ]
    lines += [
        "",
        f"## 4. Exact table (bins=None), T = {e['rounds']:.0e}",
        "",
        (
            f"fastcdl.bucket_stats(y, p): {ms(e['times']['fastcdl'])} ms; the simplest code (numpy sorts the uint64 outcome keys, "
            f"one numba loop counts the runs, numpy multiplies q n): {ms(e['times']['simplest'])} ms; np.sort of the predictions: {ms(e['times']['sort'])} ms. "
            f"fastcdl / simplest: **{e['fastcdl/simplest']:.2f}x**; fastcdl / np.sort: {e['fastcdl/sort']:.2f}x."
        ),
        "",
        f"## 5. The online engine's round, T = {on['rounds']}",
        "",
        (
            f"simulate('truthful', bernoulli): {on['ns_per_round']['simulate']:.1f} ns a round; the simplest loop playing the same "
            f"game (numpy's global generator, the grid point nearest the probability, the counts): {on['ns_per_round']['simplest']:.1f} ns. "
            f"simulate / simplest: **{on['simulate/simplest']:.2f}x**."
        ),
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
