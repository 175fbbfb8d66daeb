#!/usr/bin/env bash
# `make test`: run every phase, whatever the earlier ones gave; then one line per phase with its
# result and time, and exit 1 if any phase failed (so CI fails on any failure, and says where).
#   scripts/test_phases.sh PYTHON BOUNDSCHECKED_TEST_FILES...
PY=$1
shift
BOUNDSCHECKED=("$@")
names=()
results=()
times=()

phase() {  # phase NAME COMMAND...
    local name=$1 start status
    shift
    echo "=== phase: $name: $*"
    start=$(date +%s)
    "$@"
    status=$?
    names+=("$name")
    times+=("$(( $(date +%s) - start )) s")
    if [ "$status" -eq 0 ]; then results+=("passed"); else results+=("FAILED (exit $status)"); fi
}

phase "compile (fastcdl warmup)" "$PY" -m fastcdl warmup
phase "test suite" "$PY" -m pytest -q
phase "docstring examples" "$PY" -m pytest -q --doctest-modules fastcdl
phase "kernel tests with bounds checks" env NUMBA_BOUNDSCHECK=1 FASTCDL_CACHE=0 "$PY" -m pytest -q -m "not slow" "${BOUNDSCHECKED[@]}"

echo "=== make test: every phase ran"
failed=0
for i in "${!names[@]}"; do
    printf '  %-34s %-18s %s\n' "${names[$i]}" "${results[$i]}" "${times[$i]}"
    [ "${results[$i]}" = passed ] || failed=1
done
if [ "$failed" -ne 0 ]; then
    echo "make test: FAILED (see the phases above)"
    exit 1
fi
echo "make test: all phases passed"
