"""Write README.md's Speed table and its line naming the machine and load from the benchmark JSON files.

    .venv/bin/python scripts/speed_table.py          # rewrites the line and the table in README.md
    .venv/bin/python scripts/speed_table.py --print  # prints them instead

scripts/bench_all.py runs it after measuring (and scripts/docs_numbers.py for docs/):
tests/test_results_readmes.py compares every number of the table, and the machine line, with
results/benchmarks/*.json and names what differs. The prose around the table is not written here.
"""

from __future__ import annotations

import argparse
import json
import math
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "results" / "benchmarks"
PEERS = ("netcal ECE", "relplot binnedECE", "torchmetrics binary_calibration_error", "scikit-learn calibration_curve")
SOURCES = (
    ("peers", "binned ECE and exact CDL at m = 100"),
    ("metrics", "exact CDL at m = 10^6 and the bucket table"),
    ("online", "Algorithm 1"),
    ("io", "the CSV file"),
    ("multiclass", "k = 10 outcomes"),
)


def med(doc, key):
    return doc["timings"][key]["median"]


def sig(x, digits=2):
    """x to `digits` significant digits, no exponent."""
    return f"{x:.{max(0, digits - 1 - math.floor(math.log10(abs(x))))}f}"


def bound(x):
    """The least one-digit number times a power of ten that is at least x, as '2e-15'."""
    e = math.floor(math.log10(x))
    return f"{math.ceil(x / 10**e)}e{e}"


def machine_line(docs):
    """One line naming the machine(s) and the load of the runs behind the table, e.g.
    'Machine: Intel(R) Xeon(R) Processor, 2 logical CPUs, numba 2 threads (all five files); load
    average (1 min) 0.5 to 1.2 at the starts and ends of their runs.' (each file's full record is
    in the file)."""
    machines = {}
    for name, _ in SOURCES:
        m = docs[name]["machine"]
        machines.setdefault((m["model"], m["logical_cpus"], m["numba_threads"]), []).append(f"{name}.json")
    parts = [
        f"{model}, {cpus} logical CPUs, numba {threads} threads ("
        + ("all five files" if len(files) == len(SOURCES) else ", ".join(files))
        + ")"
        for (model, cpus, threads), files in machines.items()
    ]
    loads = [docs[name][k][0] for name, _ in SOURCES for k in ("load_start", "load_end")]
    return (
        f"Machine: {'; '.join(parts)}; load average (1 min) {min(loads):.2f} to {max(loads):.2f} at the starts "
        "and ends of their runs."
    )


def table(docs):
    peers, metrics, online, io_, multi = (docs[n] for n, _ in SOURCES)
    fc = 1e3 * med(peers, "ece/1e+07/fastcdl.ece")
    pm = [1e3 * med(peers, f"ece/1e+07/{n}") for n in PEERS]
    diff = max(peers["values"][f"ece/1e+07/{n}"]["abs_diff"] for n in PEERS)
    lp, lp_fc = 1e3 * med(peers, "lp/100/lp"), 1e3 * med(peers, "lp/100/fastcdl")
    fc8, np8, sum8 = (med(metrics, f"bucket_stats/float64/{k}") for k in ("fastcdl", "numpy", "sum"))
    big = online["timings"]["flat/big"]
    rate = lambda key: online["timings"][key]["rounds"] / med(online, key)  # noqa: E731
    cases = [f"{p}/{t}" for p in ("continuous", "grid 0.01") for t in ("exact", "15 bins")]
    ours = [med(io_, f"{c}/fastcdl") for c in cases]
    base = [med(io_, f"{c}/pyarrow") for c in cases]
    before = [med(io_, f"{c}/before") for c in cases if f"{c}/before" in io_["timings"]]
    ratio = [a / b for a, b in zip(ours, base)]
    mc, new = multi["values"]["400"], med(multi, "400/new")
    return [
        "| task | fastcdl | what a user would run instead | ratio |",
        "|---|---|---|---|",
        f"| binned ECE, T = 10^7, 15 bins | {fc:.0f} ms | netcal `ECE` {pm[0]:.0f} ms; relplot `binnedECE` {pm[1]:.0f} "
        f"ms; torchmetrics {pm[2]:.0f} ms; scikit-learn `calibration_curve` {pm[3]:.0f} ms | "
        + "; ".join(sig(t / fc) + "x" for t in pm)
        + f" fastcdl's time, values within {bound(diff)} |",
        f"| exact CDL, m = 100 buckets | {lp_fc:.3f} ms | the linear program over proper scores (HiGHS) {lp:.0f} ms | "
        f"{lp / lp_fc:,.0f}x fastcdl's time, values within {bound(peers['values']['lp/100']['abs_diff'])} |",
        f"| exact CDL, m = 10^6 buckets | {med(metrics, 'envelope/cdl'):.2f} s | — | O(m log m) |",
        f"| bucket table, T = 10^8, 1000 bins | {fc8:.2f} s (float64 y) | numpy searchsorted + 3 bincounts "
        f"{np8:.1f} s; summing the two arrays {sum8:.3f} s | bincount {np8 / fc8:.1f}x fastcdl's time; fastcdl "
        f"{fc8 / sum8:.1f}x the sum's |",
        f"| Algorithm 1, T = 10^8 rounds vs greedy | {big['median']:.1f} s "
        f"({1e9 * big['median'] / big['rounds']:.0f} ns a round) | the same oracle formed densely, O(m K_eta) per "
        "round | "
        f"{rate('dense/1e7/sparse') / rate('dense/1e7/dense'):.0f}x the sparse oracle's time at T = 10^7 |",
        f"| CSV file of 10^7 rows to its bucket table (`fastcdl metrics`) | {min(ours):.1f}–{max(ours):.1f} s, "
        f"streaming | `pyarrow.csv.read_csv` + `bucket_stats` {min(base):.1f}–{max(base):.1f} s; fastcdl's earlier "
        "Python parser "
        f"{min(before):.0f}–{max(before):.0f} s | {min(ratio):.2f}–{max(ratio):.2f}x of pyarrow + table |",
        f"| exact CDL over k = {mc['k']} outcomes, {mc['m']} distinct rows | {new:.0f} s | the LP over all pairs "
        f"of score vectors, as fastcdl solved it before | > {math.floor(mc['old_stopped_at'] / new)}x (stopped at "
        f"{mc['old_stopped_at']:g} s) |",
    ]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--print", action="store_true")
    args = ap.parse_args()
    docs = {name: json.loads((BENCH / f"{name}.json").read_text()) for name, _ in SOURCES}
    machine = machine_line(docs)
    rows = table(docs)
    if args.print:
        print("\n".join([machine, ""] + rows))
        return
    path = ROOT / "README.md"
    text = path.read_text()
    start = text.index("\n## Speed\n")
    end = text.index("\n## ", start + 1)
    speed = text[start:end]
    speed = re.sub(r"^(MACHINE|Machine: [^\n]*)$", lambda _: machine, speed, count=1, flags=re.M)
    speed = re.sub(r"^\| task \| fastcdl \|[^\n]*\n(^\|[^\n]*\n)+", "\n".join(rows) + "\n", speed, count=1, flags=re.M)
    path.write_text(text[:start] + speed + text[end:])


if __name__ == "__main__":
    main()
