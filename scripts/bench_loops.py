"""ns per round of the compiled simulate loop of one forecaster against one adversary.

    .venv/bin/python scripts/bench_loops.py FORECASTER ADVERSARY T LABEL

Runs simulate(FORECASTER, ADVERSARY, horizon=T, seed=r) for r = 0..4 after one warm-up call
(compilation excluded) and prints the median and every run's ns per round. State the machine's
load with the numbers: the runs are wall-clock.
"""

import statistics
import sys
import time

from fastcdl.online import simulate


def main():
    f, a, T, label = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    simulate(f, a, horizon=1024, seed=0)
    ts = []
    for r in range(5):
        t0 = time.perf_counter()
        simulate(f, a, horizon=T, seed=r)
        ts.append(time.perf_counter() - t0)
    runs = ", ".join(f"{t / T * 1e9:.0f}" for t in ts)
    print(f"{label} {f} {a} T={T}: median {statistics.median(ts) / T * 1e9:.1f} ns/round ({runs})")


if __name__ == "__main__":
    main()
