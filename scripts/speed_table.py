"""Write README.md's Speed table and its list of sources from the benchmark JSON files.

    .venv/bin/python scripts/speed_table.py          # rewrites the list and the table in README.md
    .venv/bin/python scripts/speed_table.py --print  # prints them instead

scripts/bench_all.py runs it after measuring (and scripts/docs_numbers.py for docs/):
tests/test_results_readmes.py compares every number of the table, and each
source's machine and load, with results/benchmarks/*.json and names what differs. The prose
around the table is not written here, except the range of the load averages it quotes: read it
against the new files.
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


def source_line(name, label, doc):
    m = doc["machine"]
    return (
        f"- {label} (`results/benchmarks/{name}.json`): {m['model']} ({', '.join(m['vector'])}), "
        f"{m['logical_cpus']} logical CPUs, numba {m['numba_threads']} threads; load average (1, 5, 15 min) "
        f"{', '.join(map(str, doc['load_start']))} at the start and "
        f"{', '.join(map(str, doc['load_end']))} at the end."
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
    sources = [source_line(name, label, docs[name]) for name, label in SOURCES]
    rows = table(docs)
    if args.print:
        print("\n".join(sources + [""] + rows))
        return
    path = ROOT / "README.md"
    text = path.read_text()
    start = text.index("\n## Speed\n")
    end = text.index("\n## ", start + 1)
    speed = text[start:end]
    speed = re.sub(
        r"(^- [^\n]*\(`results/benchmarks/\w+\.json`\)[^\n]*\n)+", "\n".join(sources) + "\n", speed, count=1, flags=re.M
    )
    speed = re.sub(r"^\| task \| fastcdl \|[^\n]*\n(^\|[^\n]*\n)+", "\n".join(rows) + "\n", speed, count=1, flags=re.M)
    loads = [docs[name][k][0] for name, _ in SOURCES for k in ("load_start", "load_end")]
    speed = re.sub(
        r"\(a load average of [\d.]+ to [\d.]+ on (\d+) CPUs\)",
        lambda m: f"(a load average of {min(loads):.1f} to {max(loads):.1f} on {m.group(1)} CPUs)",
        speed,
    )
    path.write_text(text[:start] + speed + text[end:])


if __name__ == "__main__":
    main()
