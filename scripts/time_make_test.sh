#!/usr/bin/env bash
# Time `make test` on a fresh clone of this repository, apart from setting up .venv (installed first,
# with pip's cache as CI keeps it), and write results/benchmarks/test_time.json with the wall and
# CPU seconds (user + system, every process of the run: on an idle machine the wall time is about
# the CPU time, since the suite runs in one process), the load, the machine and the commit.
#   bash scripts/time_make_test.sh
#   KEEP_LOGS=DIR bash scripts/time_make_test.sh   # keeps install.log and test.log in DIR
set -euo pipefail
# shellcheck source=scripts/fresh_clone.sh
source "$(dirname "${BASH_SOURCE[0]}")/fresh_clone.sh"
status=0
read -r wall user sys < <({ time make test > "$dir/test.log" 2>&1; } 2>&1) || true
grep -q "make test (fast): all phases passed" "$dir/test.log" || status=1
load2=$(cut -d' ' -f1 /proc/loadavg)
# (pytest-xdist's summary names no deselected tests: the count is then null)
passed=$(grep -oE '[0-9]+ passed' "$dir/test.log" | head -1 | cut -d' ' -f1 || true)
deselected=$(grep -oE '[0-9]+ deselected' "$dir/test.log" | head -1 | cut -d' ' -f1 || true)
cpu=$(grep -m1 "model name" /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')
cat > "$root/results/benchmarks/test_time.json" <<JSON
{"command": "bash scripts/time_make_test.sh", "commit": "$(git rev-parse HEAD)",
 "cpu": "$cpu", "cores": $(nproc), "load_before": $load0, "load_after_install": $load1, "load_after": $load2,
 "install_s": $install_wall, "test_s": $wall, "test_cpu_s": $(echo "$user + $sys" | bc),
 "passed": ${passed:-0}, "deselected": ${deselected:-null}, "all_phases_passed": $([ $status -eq 0 ] && echo true || echo false),
 "date": "$(date -u +%FT%TZ)"}
JSON
cat "$root/results/benchmarks/test_time.json"
tail -5 "$dir/test.log"
if [ -n "${KEEP_LOGS:-}" ]; then mkdir -p "$KEEP_LOGS" && cp "$dir/install.log" "$dir/test.log" "$KEEP_LOGS/"; fi
rm -rf "$dir"
