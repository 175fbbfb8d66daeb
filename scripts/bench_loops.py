"""ns per round of the compiled simulate loops.

    .venv/bin/python scripts/bench_loops.py FORECASTER ADVERSARY T LABEL   # one loop, printed
    .venv/bin/python scripts/bench_loops.py --all [--T 1048576] [--repeat 7]
    .venv/bin/python scripts/bench_loops.py --render      # rounds.md from rounds.json

One loop: simulate(FORECASTER, ADVERSARY, horizon=T, seed=r) for r = 0..4 after one warm-up call
(compilation excluded); prints the median and every run's ns per round. State the machine's load
with the numbers: the runs are wall-clock.

--all: every built-in forecaster against bernoulli at horizon T, the forecasters alternating
within each repeat (a change of load falls on all of them), seeds 0..repeat-1; every run, the
machine, load and source in results/benchmarks/rounds.json (scripts/benchrecord.py), and
rounds.md written from it.
"""

import argparse
import statistics

import benchrecord

from fastcdl.online import simulate

FORECASTERS = ("cdl", "kt", "sign", "uniform", "foster", "frequency", "acrs", "truthful")


def seeded(f, a, T, seed0=0, **forecaster_params):
    """simulate(f, a, horizon=T, seed=r) for r = seed0, seed0 + 1, ... on successive calls."""
    seeds = iter(range(seed0, 1 << 62))
    return lambda: simulate(f, a, horizon=T, seed=next(seeds), forecaster_params=forecaster_params)


def one(f, a, T, label):
    simulate(f, a, horizon=1024, seed=0)
    ts = benchrecord.repeats({f: seeded(f, a, T)}, 5, warmup=False).seconds[f]
    runs = ", ".join(f"{t / T * 1e9:.0f}" for t in ts)
    print(f"{label} {f} {a} T={T}: median {statistics.median(ts) / T * 1e9:.1f} ns/round ({runs})")


def measure(T, repeat):
    rec = benchrecord.Recorder("rounds", T=T, repeat=repeat, adversary="bernoulli")
    for f in FORECASTERS:
        simulate(f, "bernoulli", horizon=1024, seed=0)
    rec.record(
        "",
        benchrecord.repeats(
            {f: seeded(f, "bernoulli", T) for f in FORECASTERS},
            repeat,
            warmup=False,
            seconds=lambda run: run.seconds,
            timer="simulate's loop seconds (wall)",
        ),
        rounds=T,
        interleaved=True,
    )
    rec.save()


def render(doc):
    T = doc["params"]["T"]
    lines = benchrecord.header(doc, "ns per round of every built-in forecaster's compiled loop")
    lines += [
        f'`simulate(FORECASTER, "bernoulli", horizon={T}, seed=r)`, r = 0..{doc["params"]["repeat"] - 1}, '
        "the seconds of the compiled loop (JIT excluded) over the rounds; the forecasters alternate within "
        "each repeat. Wall clock: the load above moves them.",
        "",
        "| forecaster | ns per round (median) | fastest and slowest run | / cdl |",
        "|---|---|---|---|",
    ]
    ns = {f: 1e9 * benchrecord.median(doc, f) / T for f in FORECASTERS}
    for f in FORECASTERS:
        runs = doc["timings"][f]["seconds"]
        lines.append(
            f"| {f} | {ns[f]:.1f} | {1e9 * min(runs) / T:.1f}, {1e9 * max(runs) / T:.1f} | {ns[f] / ns['cdl']:.3f} |"
        )
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("loop", nargs="*", help="FORECASTER ADVERSARY T LABEL")
    ap.add_argument("--all", action="store_true")
    ap.add_argument("--T", type=int, default=2**20)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--render", action="store_true")
    args = ap.parse_args()
    if args.loop:
        f, a, T, label = args.loop
        one(f, a, int(T), label)
        return
    if args.all:
        measure(args.T, args.repeat)
    if args.all or args.render:
        lines = render(benchrecord.load("rounds"))
        benchrecord.write_md("rounds", lines)
        print("\n".join(lines))


if __name__ == "__main__":
    main()
