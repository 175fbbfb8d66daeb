"""Store the final bucket table of committed trials that were saved before tables were kept.

    .venv/bin/python scripts/backfill_tables.py results/paper results/paper-wide results/msweep [--t-max 2^20]

For each forecaster x adversary of a run folder, the seed-0 trials up to --t-max are run
again; a table is stored only when every stored metric of the row is reproduced bit for
bit (otherwise the script stops and says which). This is what `fastcdl plot` draws the
reliability diagrams and decision-loss curves from.
"""

from __future__ import annotations

import argparse
import sys

from fastcdl.experiments import TrialStore
from fastcdl.experiments.presets import parse_horizon
from fastcdl.experiments.runner import Trial, run_trial
from fastcdl.trial_measures import METRICS


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("folders", nargs="+")
    ap.add_argument("--t-max", default="2^20")
    args = ap.parse_args()
    t_max = parse_horizon(args.t_max)
    columns = [c for m in METRICS.values() for c in m.columns] + ["n_buckets"]
    for folder in args.folders:
        with TrialStore(f"{folder}/trials.sqlite") as store:
            rows = [
                r
                for r in store.rows()
                if r["seed_index"] == 0
                and r["T"] <= t_max
                and r["bucket_table"] is None
                and r["algorithm_version"] is not None
            ]
            for r in rows:
                trial = Trial(**{k: r[k] for k in Trial.__dataclass_fields__})
                got = run_trial(trial)
                bad = [c for c in columns if got[c] != r[c]]
                if bad:
                    sys.exit(
                        f"{folder}: trial {trial.forecaster_label} vs {trial.adversary_label}, T = {trial.T}: "
                        f"{bad} differ from the stored row; not storing its table"
                    )
                store.set_table(r["key"], got["bucket_table"])
            print(f"{folder}: {len(rows)} tables stored")


if __name__ == "__main__":
    main()
