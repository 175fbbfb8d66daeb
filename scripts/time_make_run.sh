#!/usr/bin/env bash
# Time `make run` on a fresh clone of this repository, twice (first run: a new .venv installed
# with an empty pip cache, every kernel compiled; later run: everything reused), and write
# results/benchmarks/make_run.json with the machine, the load and the commit.
#   bash scripts/time_make_run.sh
set -euo pipefail
root=$(git rev-parse --show-toplevel)
dir=$(mktemp -d)
git clone -q "$root" "$dir/fastcdl"
cd "$dir/fastcdl"
load0=$(cut -d' ' -f1 /proc/loadavg)
s=$(date +%s.%N); PIP_NO_CACHE_DIR=1 make run > "$dir/first.log" 2>&1; e=$(date +%s.%N)
first=$(echo "$e - $s" | bc)
load1=$(cut -d' ' -f1 /proc/loadavg)
s=$(date +%s.%N); make run > "$dir/later.log" 2>&1; e=$(date +%s.%N)
later=$(echo "$e - $s" | bc)
cpu=$(grep -m1 "model name" /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')
cat > "$root/results/benchmarks/make_run.json" <<JSON
{"command": "bash scripts/time_make_run.sh", "commit": "$(git rev-parse HEAD)",
 "cpu": "$cpu", "cores": $(nproc), "load_before": $load0, "load_after_first": $load1,
 "first_run_s": $first, "later_run_s": $later, "date": "$(date -u +%FT%TZ)"}
JSON
cat "$root/results/benchmarks/make_run.json"
rm -rf "$dir"
