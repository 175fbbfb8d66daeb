"""Replay the committed trials whose components' versions were bumped, under the current code.

For every results folder (results/*/trials.sqlite), every stored trial whose algorithm version
differs from the current one of its forecaster and adversary (fastcdl/online/versions.py) is run
again under the current code and compared with its stored row: every stored metric and, where
the row holds one (rows of early runs do not), the final bucket table, bit for bit. A trial whose replay is identical is provably the same trial under
the new version; one whose replay differs has to be recomputed.

    .venv/bin/python scripts/replay_versions.py                # replay, checkpointed
    .venv/bin/python scripts/replay_versions.py --summary      # the tables, from the checkpoint
    .venv/bin/python scripts/replay_versions.py --migrate [FOLDER ...]  # re-key identical trials, store the others

Every replay is appended to results/exact-decisions/replays.jsonl as it finishes (an interrupted
run loses only the trials in flight, and a rerun skips what is there); --summary writes
results/exact-decisions/replays.csv (one row per folder, forecaster and adversary) and the
record of every replay, sorted and compressed, to replays.jsonl.gz (committed; the checkpoint
and the pending rows are not). --migrate
re-keys, in each folder's store, the trials whose replay was identical to the current version
(one transaction per folder; the row's numbers, code version and timing are kept) and stores the
replayed row of each trial that differed beside the old one, so that resuming the folder's
preset at HEAD runs nothing; the superseded rows stay, as every superseded trial does.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import json
import os
import sqlite3
import sys
import time
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "results" / "exact-decisions"
LOG = OUT / "replays.jsonl"
PENDING = OUT / "pending"  # the replayed rows of the trials that differ, per folder (not committed)
RECORD = OUT / "replays.jsonl.gz"  # the checkpoint, compressed: what is committed and what tests read
STORED = ("cdl", "vcdl", "ece", "k2", "ucal", "kink1", "kink2", "n_buckets")
FIELDS = (
    "forecaster",
    "forecaster_label",
    "forecaster_params",
    "adversary",
    "adversary_label",
    "adversary_params",
    "T",
    "seed_index",
    "seed",
    "algorithm_version",
)


def _stale(folder: Path) -> list[dict]:
    from fastcdl.online.versions import algorithm_version

    con = sqlite3.connect(f"file:{folder / 'trials.sqlite'}?mode=ro", uri=True)
    con.row_factory = sqlite3.Row
    rows = [dict(r) for r in con.execute("SELECT * FROM trials")]
    con.close()
    current = {}
    out = []
    for r in rows:
        fa = (r["forecaster"], r["adversary"])
        if fa not in current:
            current[fa] = algorithm_version(*fa)
        if r["algorithm_version"] != current[fa]:
            r["now"] = current[fa]
            out.append(r)
    # keep only the newest stored version of each trial (a folder may hold a superseded row
    # beside a newer one: replay the newer)
    newest = {}
    for r in out:
        k = (r["forecaster_params"], r["adversary_params"], r["forecaster"], r["adversary"], r["T"], r["seed"])
        if k not in newest or r["algorithm_version"] > newest[k]["algorithm_version"]:
            newest[k] = r
    return sorted(newest.values(), key=lambda r: (r["T"], r["key"]))


def _replay(folder_name: str, row: dict) -> dict:
    from fastcdl.experiments import run_trial
    from fastcdl.experiments.runner import Trial

    trial = Trial(**{**{f: row[f] for f in FIELDS}, "algorithm_version": row["now"]})
    got = run_trial(trial)
    table_stored = row["bucket_table"] is not None  # rows of early runs hold no final table
    same_table = got["bucket_table"] == row["bucket_table"]
    diff = [c for c in STORED if not (got[c] == row[c] or (got[c] != got[c] and row[c] != row[c]))]
    if table_stored and not same_table:
        diff.append("bucket_table")
    return got, {
        "folder": folder_name,
        "key": row["key"],
        "new_key": trial.key,
        "forecaster": row["forecaster"],
        "adversary": row["adversary"],
        "forecaster_label": row["forecaster_label"],
        "adversary_label": row["adversary_label"],
        "T": row["T"],
        "seed_index": row["seed_index"],
        "old_version": row["algorithm_version"],
        "new_version": row["now"],
        "table_stored": table_stored,
        "identical": not diff,
        "differs_in": diff,
        "old": {c: row[c] for c in STORED},
        "new": {c: got[c] for c in STORED},
        "seconds": got["seconds"],
    }


def _done() -> set[tuple[str, str]]:
    if not LOG.exists():
        return set()
    done = set()
    for line in LOG.read_text().splitlines():
        if line.strip():
            r = json.loads(line)
            done.add((r["folder"], r["key"]))
    return done


def replay(folders: list[Path], jobs: int) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    done = _done()
    work = [(f.name, r) for f in folders for r in _stale(f) if (f.name, r["key"]) not in done]
    print(f"{len(work)} trials to replay ({len(done)} already in {LOG.relative_to(ROOT)})", flush=True)
    start = time.time()
    from fastcdl.experiments.store import TrialStore

    PENDING.mkdir(parents=True, exist_ok=True)
    stores = {}
    with ProcessPoolExecutor(jobs) as ex, LOG.open("a") as log:
        futures = [ex.submit(_replay, name, row) for name, row in work]
        for i, fut in enumerate(as_completed(futures), 1):
            got, r = fut.result()
            if not r["identical"]:  # keep the replayed row: --migrate stores it without running it again
                if r["folder"] not in stores:
                    stores[r["folder"]] = TrialStore(PENDING / f"{r['folder']}.sqlite").__enter__()
                stores[r["folder"]].add(got)
            log.write(json.dumps(r) + "\n")
            log.flush()
            if i % 200 == 0 or i == len(work):
                print(f"  {i}/{len(work)} replayed, {time.time() - start:.0f} s", flush=True)
    for store in stores.values():
        store.__exit__(None, None, None)


def _records() -> list[dict]:
    return [json.loads(line) for line in LOG.read_text().splitlines() if line.strip()]


def summary() -> None:
    groups = defaultdict(lambda: [0, 0, 0])
    for r in _records():
        g = groups[(r["folder"], r["forecaster"], r["adversary"], r["old_version"], r["new_version"])]
        g[0] += 1
        g[1] += 0 if r["identical"] else 1
        g[2] += 1 if (not r["identical"] and "cdl" in r["differs_in"]) else 0
    with (OUT / "replays.csv").open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(
            ["folder", "forecaster", "adversary", "old_version", "new_version", "trials", "differ", "cdl_differs"]
        )
        for k in sorted(groups):
            w.writerow([*k, *groups[k]])
    total = sum(g[0] for g in groups.values())
    differ = sum(g[1] for g in groups.values())
    lines = []
    for r in sorted(_records(), key=lambda r: (r["folder"], r["key"])):
        r.pop("seconds", None)
        lines.append(json.dumps(r) + "\n")
    with gzip.GzipFile(RECORD, "wb", mtime=0) as gz:  # sorted, no time stamp: the same replays, the same bytes
        gz.write("".join(lines).encode())
    print(
        f"{total} trials replayed, {differ} differ; {OUT.relative_to(ROOT) / 'replays.csv'} and "
        f"{RECORD.relative_to(ROOT)} written"
    )


def _jsonable_eq(a: dict, b: dict) -> bool:
    def norm(d):
        return {k: ("nan" if isinstance(v, float) and v != v else v) for k, v in json.loads(json.dumps(d)).items()}

    return norm(a) == norm(b)


def migrate(folders: list[str]) -> None:
    from fastcdl.experiments import run_trial
    from fastcdl.experiments.runner import Trial
    from fastcdl.experiments.store import TrialStore

    by_folder = defaultdict(list)
    for r in _records():
        by_folder[r["folder"]].append(r)
    for name, recs in sorted(by_folder.items()):
        if folders and name not in folders:
            continue
        path = ROOT / "results" / name / "trials.sqlite"
        same = [r for r in recs if r["identical"]]
        differ = [r for r in recs if not r["identical"]]
        con = sqlite3.connect(path)
        with con:
            for r in same:
                con.execute(
                    "UPDATE OR REPLACE trials SET key = ?, algorithm_version = ? WHERE key = ?",
                    (r["new_key"], r["new_version"], r["key"]),
                )
        con.close()
        if differ:  # the replay of each: the row the current code stores for the trial
            kept = {}
            if (PENDING / f"{name}.sqlite").exists():
                with TrialStore(PENDING / f"{name}.sqlite") as pending:
                    kept = {row["key"]: row for row in pending.rows()}
            con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
            con.row_factory = sqlite3.Row
            old = {
                r["key"]: dict(con.execute("SELECT * FROM trials WHERE key = ?", (r["key"],)).fetchone())
                for r in differ
            }
            con.close()
            with TrialStore(path) as store:
                for r in differ:
                    row = kept.get(r["new_key"])
                    if row is None:  # replayed before the rows were kept: run it again (the same code)
                        o = old[r["key"]]
                        row = run_trial(Trial(**{**{f: o[f] for f in FIELDS}, "algorithm_version": r["new_version"]}))
                    assert _jsonable_eq({c: row[c] for c in STORED}, r["new"]), r["key"]
                    store.add(row)
        print(f"{name}: {len(same)} trials re-keyed, {len(differ)} recomputed and stored")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--summary", action="store_true", help="write replays.csv from the checkpoint and stop")
    ap.add_argument("--migrate", action="store_true", help="re-key identical trials, store the recomputed ones")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("folders", nargs="*", help="results folders (default: every results/*/trials.sqlite)")
    args = ap.parse_args(argv)
    if args.summary:
        summary()
        return 0
    if args.migrate:
        migrate(args.folders)
        return 0
    folders = (
        [ROOT / "results" / f for f in args.folders]
        if args.folders
        else sorted(p.parent for p in (ROOT / "results").glob("*/trials.sqlite"))
    )
    replay(folders, args.jobs)
    summary()
    return 0


if __name__ == "__main__":
    sys.exit(main())
