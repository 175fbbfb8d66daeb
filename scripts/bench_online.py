"""Speed and memory of Algorithm 1 (fastcdl.online), written to results/benchmarks/online.md.

    .venv/bin/python scripts/bench_online.py                  # about 4 min
    .venv/bin/python scripts/bench_online.py --budget 300     # memory at T = 1e9 (4-5 min more)
    .venv/bin/python scripts/bench_online.py --render         # online.md from online.json

All figures are medians of repeats measured in one process (JIT compilation excluded), every
repeat kept in results/benchmarks/online.json with the machine, load and source
(scripts/benchrecord.py); peak memory is ru_maxrss of a fresh subprocess per horizon. Measured:
- rounds/s of cdl (sparse oracle) vs greedy at T = 1e5 and at T_big (1e8): flatness ratio;
- wall time of the T_big run;
- sparse vs dense oracle, cdl vs greedy, at 1e6 (whole runs) and at 1e7 (sparse whole run;
  dense over a prefix of the T = 1e7 configuration: its cost per round is O(m K_eta)
  whatever the state, so the prefix rate is the whole-run rate);
- peak memory of one run at the largest of 1e9, 3e8, 1e8, ... that fits --budget at the T_big rate.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import benchrecord
from bench_loops import seeded
import numpy as np

ROOT = Path(__file__).resolve().parents[1]


WALL = "simulate's loop seconds (wall)"


def loop_seconds(run):
    return run.seconds


def runs(rec, key, forecaster, adversary, T, repeats, seed0=1, **fparams):
    """simulate `repeats` times (seeds seed0, seed0 + 1, ...); records each run's loop seconds;
    the last run."""
    timings = benchrecord.repeats(
        {key: seeded(forecaster, adversary, T, seed0, **fparams)},
        repeats,
        warmup=False,
        seconds=loop_seconds,
        timer=WALL,
    )
    rec.record("", timings, rounds=T)
    return timings.values[key]


def dense_prefix(rec, key, T, rounds, repeats):
    """The dense oracle in the T configuration (m, K_eta of T), timed over its first rounds."""
    from fastcdl.online import simulate
    from fastcdl.online.simulate import _build, _run_loop

    simulate("cdl", "greedy", horizon=100, forecaster_params={"oracle": "dense"})  # compile
    seeds = iter(range(1, 1 << 62))
    built = []

    def prefix():
        # the compiled loop of simulate, stopped after `rounds` of the horizon-T configuration
        f, a = _build("cdl", "greedy", T, next(seeds), {"oracle": "dense"}, None)
        built.append(f)
        return _run_loop(f, a, rounds, np.zeros(0), np.zeros(0, dtype=np.int8))

    rec.record(
        "",
        benchrecord.repeats({key: prefix}, repeats, warmup=False, seconds=float, timer=WALL),
        rounds=rounds,
        horizon=T,
    )
    rec.value(f"{key}/m", int(built[-1].params["m"]))


def peak_memory(T, forecaster="cdl", adversary="greedy"):
    """{maxrss_kb, seconds, cdl, m} of a fresh process that runs one simulate at horizon T."""
    code = (
        "import resource, json, time\n"
        "from fastcdl.online import simulate\n"
        f"r = simulate({forecaster!r}, {adversary!r}, horizon={T}, seed=1)\n"
        "print(json.dumps({'maxrss_kb': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,"
        " 'seconds': r.seconds, 'cdl': r.cdl, 'm': r.params['forecaster']['m']}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    return json.loads(out.stdout.strip().splitlines()[-1])


def rate(doc, key):
    return doc["timings"][key]["rounds"] / benchrecord.median(doc, key)


def measure(args, rec):
    log = lambda msg: print(msg, file=sys.stderr, flush=True)  # noqa: E731
    from fastcdl._compiled.msmwc import n_copies
    from fastcdl.online import simulate

    simulate("cdl", "greedy", horizon=1000, seed=1)  # compile the loops
    simulate("kt", "greedy", horizon=1000, seed=1)
    t_small, t_big, t_mid = 10**5, args.t_big, 10**7
    for key, T, repeat in (("flat/small", t_small, 7), ("flat/big", t_big, args.repeat_big)):
        last = runs(rec, key, "cdl", "greedy", T, repeat)
        rec.value(f"{key}/m", int(last.params["forecaster"]["m"]))
        rec.value(f"{key}/K_eta", n_copies(T))
    log(f"T={t_big:.0e}: {t_big / rec.doc['timings']['flat/big']['median']:.3g} rounds/s")
    # cdl and kt alternate at T = 1e7, so the ratio sees the same load
    rec.interleaved(
        "mid",
        {"cdl_greedy": seeded("cdl", "greedy", t_mid, 1), "kt_greedy": seeded("kt", "greedy", t_mid, 1)},
        args.repeat_mid,
        warmup=False,
        seconds=loop_seconds,
        timer=WALL,
        rounds=t_mid,
    )
    runs(rec, "mid/cdl_bernoulli", "cdl", "bernoulli", t_mid, 1)
    log("kt done")

    # sparse vs dense at 1e6: whole runs, alternated
    kept = {"sparse": [], "dense": []}

    def keep(name, run):
        return lambda: kept[name].append(run()) or kept[name][-1]

    rec.interleaved(
        "dense/1e6",
        {
            "sparse": keep("sparse", seeded("cdl", "greedy", 10**6, 1)),
            "dense": keep("dense", seeded("cdl", "greedy", 10**6, 1, oracle="dense")),
        },
        args.repeat_dense,
        warmup=False,
        seconds=loop_seconds,
        timer=WALL,
        rounds=10**6,
    )
    same = all(a.stats == b.stats for a, b in zip(kept["sparse"], kept["dense"]))
    rec.value("dense/1e6/identical", bool(same))
    rec.value("dense/1e6/m", int(kept["sparse"][-1].params["forecaster"]["m"]))
    runs(rec, "dense/1e7/sparse", "cdl", "greedy", 10**7, args.repeat_dense)
    dense_prefix(rec, "dense/1e7/dense", 10**7, args.dense_rounds, args.repeat_dense)
    log("dense done")

    # peak memory, each in a fresh process; the largest T within the budget at the measured rate
    r_big = t_big / rec.doc["timings"]["flat/big"]["median"]
    candidates = [10**9, 3 * 10**8, 10**8, 3 * 10**7, 10**7]
    t_mem = next((T for T in candidates if T / r_big <= args.budget), candidates[-1])
    rec.value("memory", {f"{T:.0e}": peak_memory(T) for T in (10**3, 10**6, t_mem)})


def render(doc):
    t_small = doc["timings"]["flat/small"]["rounds"]
    t_big = doc["timings"]["flat/big"]["rounds"]
    r_small, r_big = rate(doc, "flat/small"), rate(doc, "flat/big")
    wall_big = benchrecord.median(doc, "flat/big")
    t_mid = doc["timings"]["mid/cdl_greedy"]["rounds"]
    r_mid, kt_mid = rate(doc, "mid/cdl_greedy"), rate(doc, "mid/kt_greedy")
    lines = benchrecord.header(doc, "Algorithm 1 (fastcdl.online): speed and memory")
    lines += [
        "Rounds/s are rounds over the seconds of simulate's compiled loop (JIT compilation excluded), "
        "medians of the repeats in the JSON, one process; peak memory is `resource.getrusage(...).ru_maxrss` "
        "of a fresh process per horizon.",
        "",
        "(The open engine's cost and a plug-in adversary next to the built-in bernoulli: `engine.md`. "
        "Where a cdl round's time goes, its machine code and the replays of the vectorised oracle "
        "(cdl version 2): `oracle.md`. The newer forecasters (klcal) next to kt in the same "
        "run: `new-forecasters.md`, and spr below. Rounds over more than two stated values and the expected-count table, "
        "what they cost the two-point loops: `kpoint.md`.)",
        "",
        "## Per-round cost is flat in T (cdl, sparse oracle, against greedy)",
        "",
        "| T | m | K_eta | runs | rounds/s (median) | wall time (median) |",
        "|---|---|---|---|---|---|",
        f"| {t_small:.0e} | {doc['values']['flat/small/m']} | {doc['values']['flat/small/K_eta']} | "
        f"{len(doc['timings']['flat/small']['seconds'])} | {r_small:.3g} | {t_small / r_small:.3f} s |",
        f"| {t_big:.0e} | {doc['values']['flat/big/m']} | {doc['values']['flat/big/K_eta']} | "
        f"{len(doc['timings']['flat/big']['seconds'])} | {r_big:.3g} | {wall_big:.1f} s |",
    ]
    flat = r_small / r_big
    lines += [
        "",
        f"- Flatness: rounds/s at {t_small:.0e} / at {t_big:.0e} = **{flat:.2f}x** (target: within 1.5x) "
        f"-> {'met' if flat <= 1.5 else 'missed'}.",
        f"- T = {t_big:.0e} wall time: **{wall_big:.1f} s**, {1e9 / r_big:.0f} ns a round "
        f"(target: about a minute on one core) -> {'met' if wall_big <= 75 else 'missed'}.",
        f"- At T = {t_mid:.0e} (cdl and kt alternated): cdl vs greedy {r_mid:.3g} rounds/s "
        f"({1e9 / r_mid:.0f} ns a round), cdl vs bernoulli(1/2) {rate(doc, 'mid/cdl_bernoulli'):.3g} "
        f"rounds/s; the kt forecaster (same step 1, KT bettors instead of MsMwC) vs greedy "
        f"{kt_mid:.3g} rounds/s (cdl costs {kt_mid / r_mid:.1f}x kt per round).",
        "",
        "## Sparse vs dense MsMwC oracle (cdl vs greedy)",
        "",
        "| T | m | dense measured over | dense rounds/s | sparse rounds/s | speed-up | identical runs |",
        "|---|---|---|---|---|---|---|",
    ]
    dn6, sp6 = rate(doc, "dense/1e6/dense"), rate(doc, "dense/1e6/sparse")
    lines.append(
        f"| 1e+06 | {doc['values']['dense/1e6/m']} | whole runs, alternated with the sparse ones | "
        f"{dn6:.3g} | {sp6:.3g} | **{sp6 / dn6:.0f}x** | "
        f"{'yes' if doc['values']['dense/1e6/identical'] else 'NO'} |"
    )
    dn7, sp7 = rate(doc, "dense/1e7/dense"), rate(doc, "dense/1e7/sparse")
    prefix = doc["timings"]["dense/1e7/dense"]["rounds"]
    lines.append(
        f"| 1e+07 | {doc['values']['dense/1e7/dense/m']} | first {prefix:.0e} rounds of the "
        f"T = 1e7 configuration | {dn7:.3g} | {sp7:.3g} | **{sp7 / dn7:.0f}x** | n/a |"
    )
    lines += [
        "",
        "Target: at least 20x at T = 1e7. The dense oracle forms all 2m K_eta weights each round (O(m K_eta));",
        "the sparse one touches the drawn bucket only (O(K_eta * Newton steps + log m)).",
        "",
        "## Peak memory of one run (cdl vs greedy; streaming, memory O(m))",
        "",
        "| T | m | max RSS | run time |",
        "|---|---|---|---|",
    ]
    mem = doc["values"]["memory"]
    for T, r in mem.items():
        lines.append(f"| {T} | {r['m']} | {r['maxrss_kb'] / 1024:.0f} MB | {r['seconds']:.1f} s |")
    t_mem = max(mem, key=float)
    big_mem = mem[t_mem]["maxrss_kb"] / 1024
    lines += [
        "",
        f"Under 200 MB at T = {t_mem}: {'yes' if big_mem < 200 else 'no'} ({big_mem:.0f} MB; the largest T "
        f"run within the --budget of {doc['params']['budget']:.0f} s; memory does not grow with T). Most "
        "of it is the interpreter, numpy, scipy and numba; the forecaster's state is O(m K_eta) floats.",
    ]
    return lines + newer_forecasters()


# the cost runs of the newer forecasters next to kt (scripts/bench_cost_per_round.py --json), rendered
# below the measurements of this script when their JSON is beside online.json
COST_RUNS = ("spr-cost-bernoulli", "spr-cost-drift")


def newer_forecasters() -> list[str]:
    """A section per cost run of COST_RUNS present in results/benchmarks: ns per round of each
    forecaster next to the first (kt) in the same run, with its command and load."""
    out = []
    for name in COST_RUNS:
        path = benchrecord.OUT_DIR / f"{name}.json"
        if not path.exists():
            continue
        doc = json.loads(path.read_text())
        out += [
            "",
            f"## Cost per round next to kt in the same run ({name})",
            "",
            f"Command: `{doc['command']}` (every repeat in `{name}.json` beside this file; each repeat times "
            "every forecaster at each horizon, their order rotating; medians; JIT excluded). Load average "
            f"(1, 5, 15 min) {', '.join(f'{x:.1f}' for x in doc['load_before'])} before and "
            f"{', '.join(f'{x:.1f}' for x in doc['load_after'])} after, on the machine above.",
            "",
            "| T | forecaster | ns per round (median) | ratio to the first |",
            "|---|---|---|---|",
        ]
        for key, row in doc["summary"].items():
            f, T = key.split(" T=")
            ratio = next(v for k, v in row.items() if k.startswith("ratio_to_"))
            out.append(f"| {T} | {f} | {row['ns_per_round']:.1f} | {ratio:.2f} |")
        if name.startswith("spr"):
            out += [
                "",
                "spr's loop runs with numba's reference counting on (its labeler's node tables grow "
                "as cells are pointed at, docs/spr.md), which the other loops compile without; the round's "
                "removal, placement and fallback run in a kernel without it, and the loop unpacks the state "
                "once, yet each round still takes and releases references to the run's tables.",
            ]
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--t-big", type=int, default=10**8, help="the large horizon of the flatness row")
    ap.add_argument("--repeat-big", type=int, default=2)
    ap.add_argument("--repeat-mid", type=int, default=3, help="alternated cdl and kt runs at T = 1e7")
    ap.add_argument("--repeat-dense", type=int, default=2)
    ap.add_argument("--dense-rounds", type=int, default=2 * 10**5, help="rounds of the dense prefix at 1e7")
    ap.add_argument("--budget", type=float, default=60.0, help="seconds allowed for the memory run")
    ap.add_argument("--render", action="store_true", help="only write online.md from online.json")
    args = ap.parse_args()
    if not args.render:
        rec = benchrecord.Recorder("online", **{k: v for k, v in vars(args).items() if k != "render"})
        measure(args, rec)
        rec.save()
    lines = render(benchrecord.load("online"))
    benchrecord.write_md("online", lines)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
