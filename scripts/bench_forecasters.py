"""ns per round of several forecasters' compiled loops, measured in one run, alternated.

    .venv/bin/python scripts/bench_forecasters.py [--T 4194304] [--repeats 9] [--adversaries bernoulli,greedy] ftpl kt

For each adversary: one warm-up run of each forecaster (compilation excluded), then
``repeats`` rounds of runs in alternation (A, B, A, B, ...; seed r in round r), each timed by
simulate's own loop timer (RunResult.seconds: the compiled loop, not building the run).
Prints the median ns per round of each forecaster, every run's, the ratio of each to the
last one named (the baseline), and the 1-minute load average before and after: the runs
are wall-clock on a shared machine.
"""

import argparse
import os
import statistics

import benchrecord
from bench_loops import seeded

from fastcdl.online import simulate


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("forecasters", nargs="+")
    ap.add_argument("--T", type=int, default=2**22)
    ap.add_argument("--repeats", type=int, default=9)
    ap.add_argument("--adversaries", default="bernoulli,greedy")
    args = ap.parse_args()
    print(f"load average (1 min) before: {os.getloadavg()[0]:.2f}; T = {args.T}, {args.repeats} alternated repeats")
    for adv in args.adversaries.split(","):
        for f in args.forecasters:
            simulate(f, adv, horizon=1024, seed=0)
        runs = {f: seeded(f, adv, args.T) for f in args.forecasters}
        ns = {
            f: [t / args.T * 1e9 for t in ts]
            for f, ts in benchrecord.repeats(
                runs, args.repeats, warmup=False, seconds=lambda run: run.seconds
            ).seconds.items()
        }
        base = statistics.median(ns[args.forecasters[-1]])
        for f in args.forecasters:
            med = statistics.median(ns[f])
            runs = ", ".join(f"{x:.1f}" for x in ns[f])
            print(
                f"{adv:10s} {f:6s} median {med:6.1f} ns/round  ({med / base:.2f}x {args.forecasters[-1]})  runs: {runs}"
            )
    print(f"load average (1 min) after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
