"""Replay stored cdl trials of committed results folders under the current code and compare.

    nice -n 10 .venv/bin/python scripts/recompute_cdl.py --max-T 1048576 --out results/benchmarks/cdl_replay.csv
    nice -n 10 .venv/bin/python scripts/recompute_cdl.py --min-T 2097152 --per-T 2 --out ...  # a sample of larger T
    .venv/bin/python scripts/recompute_cdl.py --out new.csv --compare old.csv  # the same replayed CDLs?

For every stored trial of the cdl forecaster (any version) in results/{paper,paper-wide,msweep}
with min-T <= T <= max-T (at most --per-T per folder, horizon and version if given, the lowest
seed indices first), runs the same trial (same seed and parameters) with the current code and
writes one CSV row: folder, labels, T, seed index, the stored and the replayed CDL, whether
every stored metric (cdl, vcdl, ece, k2, ucal, kink1, kink2, n_buckets) is identical bit for
bit, and the relative change of CDL, then the stored and replayed values of the other metrics
(so that "identical" can be checked from the file; files written before they were added hold
only CDL's, and their "identical" is the flag the script computed). Rows already in the output are skipped (resumable;
interrupting loses only the trial in flight). The stores are opened read-only (a copy).
The summary (how many identical, the largest relative change) is printed at the end.
"""

from __future__ import annotations

import argparse
import csv
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("paper", "paper-wide", "msweep")
STORED = ("cdl", "vcdl", "ece", "k2", "ucal", "kink1", "kink2", "n_buckets")
FIELDS = [
    "folder",
    "forecaster_label",
    "adversary_label",
    "T",
    "seed_index",
    "stored_version",
    "cdl_stored",
    "cdl_replayed",
    "identical",
    "rel_change",
    "seconds",
    *(f"{c}_{how}" for c in STORED[1:] for how in ("stored", "replayed")),
]


def stored_rows(folder, min_T, max_T, per_T):
    from fastcdl.experiments import TrialStore

    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "trials.sqlite"
        shutil.copy(ROOT / "results" / folder / "trials.sqlite", db)
        with TrialStore(db) as store:
            rows = [r for r in store.rows() if r["forecaster"] == "cdl" and min_T <= r["T"] <= max_T]
    rows.sort(key=lambda r: (r["T"], r["seed_index"], r["forecaster_label"], r["adversary_label"]))
    if per_T:
        seen = {}
        kept = []
        for r in rows:
            k = (r["T"], r["forecaster_label"], r["adversary_label"])
            if seen.get(k, 0) < per_T:
                seen[k] = seen.get(k, 0) + 1
                kept.append(r)
        rows = kept
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--min-T", type=int, default=1)
    ap.add_argument("--max-T", type=int, default=2**20)
    ap.add_argument("--per-T", type=int, default=0, help="at most this many seeds per (folder, T, labels); 0 = all")
    ap.add_argument("--folders", default=",".join(FOLDERS))
    ap.add_argument("--out", required=True)
    ap.add_argument("--compare", help="an earlier output: only compare --out's replayed CDLs with its, by trial")
    args = ap.parse_args()
    if args.compare:
        compare(args.out, args.compare)
        return
    from fastcdl.experiments import run_trial
    from fastcdl.experiments.runner import Trial
    from fastcdl.online import versions

    out = Path(args.out)
    done = set()
    if out.exists():
        with out.open() as fh:
            if next(csv.reader(fh), None) != FIELDS:
                sys.exit(f"{out}: its columns are not this script's (an older replay?); write to a new file")
            fh.seek(0)
            done = {
                (r["folder"], r["forecaster_label"], r["adversary_label"], int(r["T"]), int(r["seed_index"]))
                for r in csv.DictReader(fh)
            }
    new = not out.exists()
    with out.open("a", newline="") as fh:
        w = csv.DictWriter(fh, FIELDS)
        if new:
            w.writeheader()
        for folder in args.folders.split(","):
            rows = stored_rows(folder, args.min_T, args.max_T, args.per_T)
            print(f"{folder}: {len(rows)} cdl trials", file=sys.stderr, flush=True)
            for r in rows:
                ident = (folder, r["forecaster_label"], r["adversary_label"], r["T"], r["seed_index"])
                if ident in done:
                    continue
                fields = {n: r[n] for n in Trial.__dataclass_fields__}
                fields["algorithm_version"] = versions.algorithm_version(r["forecaster"], r["adversary"])
                got = run_trial(Trial(**fields))
                same = all(got[c] == r[c] for c in STORED)
                rel = abs(got["cdl"] - r["cdl"]) / abs(r["cdl"]) if r["cdl"] else abs(got["cdl"])
                w.writerow(
                    {
                        "folder": folder,
                        "forecaster_label": r["forecaster_label"],
                        "adversary_label": r["adversary_label"],
                        "T": r["T"],
                        "seed_index": r["seed_index"],
                        "stored_version": r["algorithm_version"],
                        "cdl_stored": repr(r["cdl"]),
                        "cdl_replayed": repr(got["cdl"]),
                        "identical": int(same),
                        "rel_change": f"{rel:.3e}",
                        "seconds": f"{got['seconds']:.3f}",
                        **{
                            f"{c}_{how}": repr(v[c])
                            for c in STORED[1:]
                            for how, v in (("stored", r), ("replayed", got))
                        },
                    }
                )
                fh.flush()
    summarise(out)


def compare(path, earlier):
    """How many trials of ``path`` that ``earlier`` also has (same folder, labels, T, seed index;
    only where that names one trial in both) have the same replayed CDL, to the bit (its repr)."""
    key = ("folder", "forecaster_label", "adversary_label", "T", "seed_index")

    def rows(p):
        with Path(p).open() as fh:
            out = {}
            for r in csv.DictReader(fh):
                out.setdefault(tuple(r[c] for c in key), []).append(r)
        return {k: v[0] for k, v in out.items() if len(v) == 1}

    new, old = rows(path), rows(earlier)
    both = [k for k in new if k in old]
    same = [k for k in both if new[k]["cdl_replayed"] == old[k]["cdl_replayed"]]
    print(
        f"{len(both)} trials in both ({sum(int(k[3]) for k in both):.3g} rounds): {len(same)} with the same "
        f"replayed CDL bit for bit"
    )
    for k in both:
        if k not in same:
            print("differs:", k, new[k]["cdl_replayed"], old[k]["cdl_replayed"])
    return len(both), len(same)


def summarise(path):
    with Path(path).open() as fh:
        rows = list(csv.DictReader(fh))
    n = len(rows)
    same = sum(int(r["identical"]) for r in rows)
    worst = max((float(r["rel_change"]) for r in rows), default=0.0)
    rounds = sum(int(r["T"]) for r in rows)
    print(
        f"{n} trials ({rounds:.3g} rounds): {same} identical bit for bit in every stored metric; "
        f"largest relative change of CDL {worst:.3g}"
    )
    return n, same, worst


if __name__ == "__main__":
    main()
