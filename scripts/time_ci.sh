#!/usr/bin/env bash
# Time CI (`bash .ci/run`) on a fresh clone of this repository, apart from setting up .venv
# (installed first, with pip's cache as CI keeps it), and write results/benchmarks/ci_time.json:
# the whole run's wall and CPU seconds, each phase's seconds as `make test` and `make test-slow`
# print them (scripts/test_phases.sh), the run's clock at the end of the docs build, the linter and
# the first-call summary, the load, the machine and the commit; the run's output, every line
# stamped with that clock, goes to results/benchmarks/ci_time.log.
#   bash scripts/time_ci.sh
#   KEEP_LOGS=DIR bash scripts/time_ci.sh   # keeps install.log and ci.log in DIR
set -euo pipefail
# shellcheck source=scripts/fresh_clone.sh
source "$(dirname "${BASH_SOURCE[0]}")/fresh_clone.sh"
status=0
# every line stamped with the seconds since the run started, so the steps between phases are timed too
read -r wall user sys < <({ time bash .ci/run 2>&1 | .venv/bin/python -u -c '
import sys, time
t0 = time.perf_counter()
for line in sys.stdin:
    sys.stdout.write(f"[{time.perf_counter() - t0:8.1f}] {line}")
' > "$dir/ci.log"; } 2>&1) || true
grep -q "CI: make .* FAILED" "$dir/ci.log" && status=1
load2=$(cut -d' ' -f1 /proc/loadavg)
.venv/bin/python - "$dir/ci.log" "$root/results/benchmarks/ci_time.json" <<PY
import json, re, sys
log = open(sys.argv[1]).read().splitlines()
phases = {}
for line in log:  # the phase summaries: "  <name>   passed   <n> s"
    m = re.match(r"\[\s*[\d.]+\]\s+(\S.*?)\s{2,}(passed|FAILED \(exit \d+\))\s+(\d+) s$", line)
    if m:
        phases[m.group(1)] = {"result": m.group(2), "seconds": int(m.group(3))}
def at(pattern):  # the run's clock at the first line matching pattern
    for line in log:
        if re.search(pattern, line):
            return float(line[1:9])
    return None
steps = {
    "make test and make test-slow": at(r"sphinx -W"),
    "make docs ends": at(r"make docs: docs/_build"),
    "make lint ends": at(r"files already formatted"),
    "first-call summary ends": at(r"warm cache .*numba's"),
}
doc = {
    "command": "bash scripts/time_ci.sh",
    "commit": "$(git rev-parse HEAD)",
    "cpu": "$(grep -m1 "model name" /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')",
    "cores": $(nproc),
    "load_before": $load0, "load_after_install": $load1, "load_after": $load2,
    "install_s": $install_wall,
    "ci_s": $wall, "ci_cpu_s": round($user + $sys, 1),
    "phases": phases,
    "clock_at": steps,
    "all_passed": $([ $status -eq 0 ] && echo True || echo False),
    "date": "$(date -u +%FT%TZ)",
}
json.dump(doc, open(sys.argv[2], "w"), indent=1)
open(sys.argv[2], "a").write("\n")
print(json.dumps(doc, indent=1))
PY
cp "$dir/ci.log" "$root/results/benchmarks/ci_time.log"
tail -25 "$dir/ci.log"
if [ -n "${KEEP_LOGS:-}" ]; then mkdir -p "$KEEP_LOGS" && cp "$dir/install.log" "$dir/ci.log" "$KEEP_LOGS/"; fi
rm -rf "$dir"
