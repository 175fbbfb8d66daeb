"""Where a cdl round's time goes: the MsMwC oracle's parts against a kt round, and its machine code.

    nice -n 10 .venv/bin/python scripts/bench_oracle.py            # profile at T = 1e6, about 3 minutes
    nice -n 10 .venv/bin/python scripts/bench_oracle.py --targets  # the issue's targets, about 15 minutes
    nice -n 10 .venv/bin/python scripts/bench_oracle.py --one cdl 1e9   # one long trial, CPU and wall time

Prints a markdown section (appended by hand to results/benchmarks/online.md). All times are
CPU seconds of this process (time.process_time; with a wall time beside them, the calling
thread's, time.thread_time: every loop here runs on one thread), medians of --repeats through
benchrecord.repeats (the one timing loop of scripts/), so that other load on a shared machine
inflates them less than wall time; every figure is also given as a ratio to the kt round
measured in the same run.

1. Whole runs against greedy (simulate): cdl, kt, and sign (step 1 with r = 1/2: the round
   without any oracle), per round; and kt and sign with their loops compiled without numba's
   reference counting (``_nrt=False``), as cdl's loop is.
2. The oracle's parts on the state of a cdl run after 10^5 rounds (m and K_eta of --T), each
   called in a compiled loop: the Lam solve warm-started at the last root (the weights kept),
   the Lam solve with every weight formed afresh (exps), ln|c| at the two buckets of a mixed
   step, and the update of a bucket drawn at random.
With --targets instead: cdl and kt per round at T = 1e7 (interleaved, medians of 3; kt also with
its loop compiled without reference counting), cdl at
1e5 (3) against 1e8 (1 run), sparse against dense at the T = 1e7 configuration (dense over its
first 2e5 rounds), and the peak RSS of fresh processes running cdl at 1e6 and 1e8.
With --one NAME T: one run against greedy in a fresh process, its CPU and wall seconds and peak RSS.

3. The machine code of the vectorised kernels (numba's inspect_asm, compiled here without the
   cache): packed double instructions on zmm (AVX-512) / ymm (AVX2) registers, packed
   float-to-integer conversions (the exps' range reduction), calls to the C library's exp.
"""

from __future__ import annotations

import argparse
import os
import re
import time
from pathlib import Path

os.environ.setdefault("FASTCDL_CACHE", "1")

import benchrecord  # noqa: E402
import numpy as np  # noqa: E402


def cpu_seconds(f, repeats, per=1):
    """Every repeat's CPU seconds of f() (time.process_time) over per, f compiled beforehand."""
    return benchrecord.repeats({"f": f}, repeats, warmup=False, clock=time.process_time, n_inner=per).seconds["f"]


def per_round(name, T, repeats):
    from fastcdl.online import simulate

    simulate(name, "greedy", horizon=1000, seed=0)
    return float(np.median(cpu_seconds(lambda: simulate(name, "greedy", horizon=T, seed=1), repeats, T)))


def per_round_without_refcounts(name, T, repeats):
    """A forecaster's simulate loop compiled without numba's reference counting (``_nrt=False``,
    as cdl's own loop is), per round against greedy: the same rounds as simulate (checked)."""
    from numba import njit

    from fastcdl.online import make_adversary, make_forecaster
    from fastcdl.online.simulate import _entry, _run_loop

    spec = make_forecaster(name, horizon=1000, seed=0).spec
    options = {k: v for k, v in spec.loop.targetoptions.items() if k not in ("cache", "_nrt", "nopython")}
    loop = njit(_nrt=False, **options)(spec.loop.py_func)

    def fresh(n):
        """The loop's arguments for n rounds from a new forecaster and adversary (seed 1)."""
        f = make_forecaster(name, horizon=n, seed=1)
        a = make_adversary("greedy", horizon=n, seed=1)
        return f, (
            n,
            f.state,
            f.table,
            f.out,
            f._rng,
            a.spec.compiled(),
            a._par,
            a._rng,
            f.hist,
            np.zeros(0),
            np.zeros(0, dtype=np.int8),
        )

    f, args = fresh(1000)
    run = _entry(loop, args, 5)
    run(*args)  # compiles; the same rounds as simulate's loop
    g = make_forecaster(name, horizon=1000, seed=1)
    _run_loop(g, make_adversary("greedy", horizon=1000, seed=1), 1000, np.zeros(0), np.zeros(0, dtype=np.int8))
    assert np.array_equal(f.table.n, g.table.n) and np.array_equal(f.table.s, g.table.s)
    states = iter([fresh(T)[1] for _ in range(repeats)])  # built off the clock
    return float(np.median(cpu_seconds(lambda: run(*next(states)), repeats, T)))


def parts(T, repeats, n=200_000):
    from numba import njit

    from fastcdl._compiled import msmwc
    from fastcdl.online import make_adversary, make_forecaster
    from fastcdl.online.simulate import _run_loop

    f = make_forecaster("cdl", horizon=T, seed=1)
    a = make_adversary("greedy", horizon=T, seed=1)
    _run_loop(f, a, 10**5, np.zeros(0), np.zeros(0, dtype=np.int8))
    st = f.state
    lo = max(0, min(st.G.shape[0] - 2, int(np.searchsorted(st.G >= 0, True)) - 1))

    @njit(_nrt=False)  # like the kernels and cdl's loop: no reference counting in the harness
    def lam_kept(n, st):
        s = 0.0
        for _ in range(n):
            lam, _c, _s = msmwc.lam_lanes(st.lanes, st.lam[0])
            st.lam[0] = lam
            s += lam
        return s

    @njit(_nrt=False)  # like the kernels and cdl's loop: no reference counting in the harness
    def lam_fresh(n, st):
        s = 0.0
        for _ in range(n):
            st.lanes[msmwc.SCALARS, msmwc.AGE] = np.inf
            lam, _c, _s = msmwc.lam_lanes(st.lanes, st.lam[0])
            st.lam[0] = lam
            s += lam
        return s

    @njit(_nrt=False)  # like the kernels and cdl's loop: no reference counting in the harness
    def logc_pair(n, st, lo):
        s = 0.0
        for _ in range(n):
            a, b = msmwc.lanes_logc_pair(lo, st.G, st.Q, st.lam[0], st.lanes, st.tpad)
            s += a + b
        return s

    @njit(_nrt=False)  # like the kernels and cdl's loop: no reference counting in the harness
    def update(n, st, bs, gs):
        for r in range(n):
            msmwc.update_lanes(bs[r], gs[r], st.G, st.Q, st.lanes, st.tpad)

    rng = np.random.default_rng(0)
    bs = rng.integers(0, st.G.shape[0], n)
    gs = rng.choice(np.array([-0.01, 0.01]), n)
    cases = {
        "Lam solve, weights kept (warm start)": (lam_kept, (st,)),
        "Lam solve, weights formed afresh (exps)": (lam_fresh, (st,)),
        "ln|c| at the two buckets": (logc_pair, (st, lo)),
        "update of one bucket": (update, (st, bs, gs)),
    }
    out = {}
    for label, (fn, args) in cases.items():  # one after another: the update changes the state
        fn(10, *(args if fn is not update else (st, bs[:10], gs[:10])))
        out[label] = float(np.median(cpu_seconds(lambda fn=fn, args=args: fn(n, *args), repeats, n)))
    return out, st.G.shape[0], st.eta.shape[0], st.lanes.shape[1]


def machine_code():
    """Counts of instructions in the kernels' machine code (compiled afresh, not from the cache)."""
    import numpy as np
    from numba import njit

    from fastcdl._compiled import msmwc

    lanes, tpad = msmwc.new_lanes.py_func(4, 11)
    G = np.array([-1.0, 2.0, 0.5, 0.0])
    Q = np.ones(4)
    rows = {}
    for name, fn, args in (
        ("update_lanes", msmwc.update_lanes, (1, 0.3, G, Q, lanes, tpad)),
        ("lam_lanes", msmwc.lam_lanes, (lanes, 0.0)),
        ("lanes_logc_pair", msmwc.lanes_logc_pair, (0, G, Q, 0.0, lanes, tpad)),
    ):
        fresh = njit(**{k: v for k, v in fn.targetoptions.items() if k != "cache"})(fn.py_func)
        fresh(*args)
        asm = "\n".join(fresh.inspect_asm().values())
        count = lambda pat: len(re.findall(pat, asm))  # noqa: E731
        rows[name] = {
            "zmm packed mul/add/sub/div": count(r"v(mul|add|sub|div)pd\s[^\n]*zmm"),
            "ymm packed mul/add/sub/div": count(r"v(mul|add|sub|div)pd\s[^\n]*ymm"),
            "scalar mul/add/sub/div": count(r"v(mul|add|sub|div)sd\s"),
            "packed float->int (vcvttpd2qq)": count(r"vcvttpd2qq"),
            "fused multiply-add": count(r"vfmadd"),
            "calls to exp": count(r"\bexp\b"),
        }
    return rows


def one(name, T):
    """(cpu seconds, wall seconds, max RSS MB, CDL) of one run of name vs greedy in a fresh process."""
    import json
    import subprocess
    import sys

    code = (
        "import resource, json, sys\n"
        f"sys.path.insert(0, {str(Path(__file__).resolve().parent)!r})\n"
        "import benchrecord\n"
        "from fastcdl.online import simulate\n"
        f"simulate({name!r}, 'greedy', horizon=1000, seed=0)\n"
        f"t = benchrecord.repeats({{'r': lambda: simulate({name!r}, 'greedy', horizon={T}, seed=1)}}, 1, "
        "warmup=False, cpu=True)\n"
        "print(json.dumps({'cpu': t.cpu_seconds['r'][0], 'wall': t.seconds['r'][0], "
        "'rss_mb': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 'cdl': t.values['r'].cdl}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def targets(repeats):
    from fastcdl.online import make_adversary, make_forecaster, simulate

    for name in ("cdl", "kt"):
        simulate(name, "greedy", horizon=1000, seed=0)
    simulate("cdl", "greedy", horizon=1000, seed=0, forecaster_params={"oracle": "dense"})
    res = benchrecord.repeats(
        {name: (lambda name=name: simulate(name, "greedy", horizon=10**7, seed=1)) for name in ("cdl", "kt")},
        repeats,
        warmup=False,
        cpu=True,
        n_inner=10**7,
    )
    cpu = {k: float(np.median(v)) for k, v in res.cpu_seconds.items()}
    wall = {k: float(np.median(v)) for k, v in res.seconds.items()}
    small = cpu_seconds(lambda: simulate("cdl", "greedy", horizon=10**5, seed=1), repeats, 10**5)
    big = cpu_seconds(lambda: simulate("cdl", "greedy", horizon=10**8, seed=1), 1, 10**8)[0]
    kt_free = per_round_without_refcounts("kt", 10**7, repeats)
    f = make_forecaster("cdl", horizon=10**7, seed=1, oracle="dense")
    a = make_adversary("greedy", horizon=10**7, seed=1)
    from fastcdl.online.simulate import _run_loop

    dense = cpu_seconds(lambda: _run_loop(f, a, 2 * 10**5, np.zeros(0), np.zeros(0, dtype=np.int8)), 1, 2 * 10**5)[0]
    mem = {T: one("cdl", T) for T in (10**6, 10**8)}
    print("| measure | value | target |\n|---|---|---|")
    print(
        f"| cdl / kt per round at T = 1e7, CPU time (medians of {repeats}) | "
        f"{cpu['cdl'] / cpu['kt']:.2f}x ({cpu['cdl'] * 1e9:.0f} / {cpu['kt'] * 1e9:.0f} ns) | within 1.6x |"
    )
    print(
        f"| same, wall time | {wall['cdl'] / wall['kt']:.2f}x ({wall['cdl'] * 1e9:.0f} / {wall['kt'] * 1e9:.0f} ns) | |"
    )
    print(
        f"| cdl / kt with kt's loop also compiled without reference counting, CPU | "
        f"{cpu['cdl'] / kt_free:.2f}x ({cpu['cdl'] * 1e9:.0f} / {kt_free * 1e9:.0f} ns) | |"
    )
    print(
        f"| cdl per round, T = 1e8 / T = 1e5 (CPU) | {big / float(np.median(small)):.2f} "
        f"({big * 1e9:.0f} / {float(np.median(small)) * 1e9:.0f} ns) | within 1.3 |"
    )
    print(
        f"| dense / sparse per round at the T = 1e7 configuration (CPU) | {dense / cpu['cdl']:.0f}x | "
        "unchanged or better (80x with cdl version 1) |"
    )
    for T, r in mem.items():
        print(f"| peak RSS, fresh process, cdl T = {T:.0e} | {r['rss_mb']:.0f} MB | flat in T |")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--T", type=float, default=1e6)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--targets", action="store_true")
    ap.add_argument("--one", nargs=2, metavar=("NAME", "T"))
    args = ap.parse_args()
    if args.one:
        import json

        r = one(args.one[0], int(float(args.one[1])))
        print(json.dumps({"forecaster": args.one[0], "T": int(float(args.one[1])), **r, "load": os.getloadavg()[0]}))
        return
    if args.targets:
        targets(args.repeats)
        return
    T = int(args.T)
    whole = {name: per_round(name, T, args.repeats) for name in ("cdl", "kt", "sign")}
    kt = whole["kt"]
    for name in ("kt", "sign"):
        whole[f"{name}, its loop without reference counting,"] = per_round_without_refcounts(name, T, args.repeats)
    part, m, K_eta, P = parts(T, args.repeats)
    code = machine_code()
    load = os.getloadavg()[0]
    print(f"### Where a cdl round's time goes (T = {T:.0e}: m = {m}, K_eta = {K_eta}, padded to {P} lanes)\n")
    print(
        f"Command: `python scripts/bench_oracle.py --T {args.T:g}`; CPU time of one process, medians of "
        f"{args.repeats}; load average {load:.1f} on {os.cpu_count()} cores during the run (shared machine).\n"
    )
    print("| part | ns (CPU) | in kt rounds |\n|---|---|---|")
    for name, v in whole.items():
        print(f"| whole round, {name} vs greedy | {v * 1e9:.0f} | {v / kt:.2f} |")
    for name, v in part.items():
        print(f"| {name} | {v * 1e9:.0f} | {v / kt:.2f} |")
    print("\nMachine code of the vectorised kernels (instruction counts):\n")
    keys = list(next(iter(code.values())))
    print("| kernel | " + " | ".join(keys) + " |\n|---|" + "---|" * len(keys))
    for name, row in code.items():
        print(f"| {name} | " + " | ".join(str(row[k]) for k in keys) + " |")


if __name__ == "__main__":
    main()
