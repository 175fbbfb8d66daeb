#!/usr/bin/env bash
# Time `make docs` in this checkout from a clean build (no docs/_build, no executed gallery, no
# results pages), twice: with the numba cache as it is (warm after `make test`), and with an empty
# numba cache (every kernel the gallery calls compiled). Writes results/benchmarks/docs-build.json
# with the machine, the load and the commit.
#   bash scripts/time_make_docs.sh
set -euo pipefail
root=$(git rev-parse --show-toplevel)
cd "$root"
make .venv/.installed > /dev/null 2>&1 || true
clean() { rm -rf docs/_build docs/auto_examples docs/results docs/sg_execution_times.rst; }
clean
load0=$(cut -d' ' -f1 /proc/loadavg)
s=$(date +%s.%N); make docs > /tmp/docs-warm.log 2>&1; e=$(date +%s.%N)
warm=$(echo "$e - $s" | bc)
clean
cache=$(mktemp -d)
load1=$(cut -d' ' -f1 /proc/loadavg)
s=$(date +%s.%N); NUMBA_CACHE_DIR="$cache" make docs > /tmp/docs-cold.log 2>&1; e=$(date +%s.%N)
cold=$(echo "$e - $s" | bc)
load2=$(cut -d' ' -f1 /proc/loadavg)
rm -rf "$cache"
figures=$(find docs/_build/html -name "*.png" | wc -l)
examples=$(ls gallery/plot_*.py | wc -l)
cpu=$(grep -m1 "model name" /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')
cat > "$root/results/benchmarks/docs-build.json" <<JSON
{"command": "bash scripts/time_make_docs.sh", "commit": "$(git rev-parse HEAD)",
 "cpu": "$cpu", "cores": $(nproc), "load_before": $load0, "load_before_cold": $load1, "load_after": $load2,
 "warm_cache_s": $warm, "empty_cache_s": $cold, "png_files_in_site": $figures, "gallery_examples": $examples,
 "date": "$(date -u +%FT%TZ)"}
JSON
cat "$root/results/benchmarks/docs-build.json"
