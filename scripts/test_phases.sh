#!/usr/bin/env bash
# `make test` and `make test-slow`: run every phase of the set, whatever the earlier ones gave; then
# one line per phase with its result and time, and exit 1 if any phase failed (so CI fails on any
# failure, and says where).
#   scripts/test_phases.sh PYTHON fast
#   scripts/test_phases.sh PYTHON slow BOUNDSCHECKED_TEST_FILES...
# fast: the suite without the tests marked slow, then the docstring examples of fastcdl/.
# slow: the compile step, the tests marked slow in every file but the kernel test files, then the
# kernel test files again, slow tests included, with numba's bounds checks on (compiled afresh
# into a cache folder of their own, removed after; two workers share it): every test runs once
# here, the kernel files' slow ones with the checks.
PY=$1
SET=$2
shift 2
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

# fastcdl's bytecode first, as an install writes it: with PYTHONDONTWRITEBYTECODE set, every
# process the tests start (the command line, pool workers, the metrics helper) would otherwise
# compile the package's source again (about 0.1 s each); a syntax error shows in the tests
"$PY" -m compileall -q fastcdl >/dev/null

case "$SET" in
fast)
    # two pytest workers (pytest-xdist) on a machine of two cores or more, each test file on one
    # worker (its module fixtures built once); one on a single core
    workers=$(( $(nproc) >= 2 ? 2 : 1 ))
    phase "test suite (not slow)" "$PY" -m pytest -q -m "not slow" -n "$workers" --dist loadfile
    phase "docstring examples" "$PY" -m pytest -q --doctest-modules fastcdl
    ;;
slow)
    # the compile step fills numba's cache before any test starts; the slow tests then run on
    # two workers as the fast suite does (each test file on one worker), loading what it compiled
    workers=$(( $(nproc) >= 2 ? 2 : 1 ))
    phase "compile (fastcdl warmup)" "$PY" -m fastcdl warmup
    # the kernel test files' slow tests run once, in the bounds-checked phase below (which runs
    # those files whole): running them here as well would run them twice
    ignored=()
    for f in "${BOUNDSCHECKED[@]}"; do ignored+=("--ignore=$f"); done
    phase "slow tests (other files)" "$PY" -m pytest -q -m slow -n "$workers" --dist loadfile "${ignored[@]}"
    # compiled afresh into a cache of their own (never the suite's, which holds kernels without
    # the checks), shared by two workers as in the fast suite: each kernel compiles once
    checked_cache=$(mktemp -d "${TMPDIR:-/tmp}/fastcdl-boundscheck.XXXXXX")
    phase "kernel tests with bounds checks" env NUMBA_BOUNDSCHECK=1 NUMBA_CACHE_DIR="$checked_cache" \
        "$PY" -m pytest -q -n "$workers" --dist loadfile "${BOUNDSCHECKED[@]}"
    rm -rf "$checked_cache"
    ;;
*)
    echo "scripts/test_phases.sh: the set must be fast or slow, got '$SET'" >&2
    exit 2
    ;;
esac

echo "=== make test ($SET): every phase ran"
failed=0
for i in "${!names[@]}"; do
    printf '  %-34s %-18s %s\n' "${names[$i]}" "${results[$i]}" "${times[$i]}"
    [ "${results[$i]}" = passed ] || failed=1
done
if [ "$failed" -ne 0 ]; then
    echo "make test ($SET): FAILED (see the phases above)"
    exit 1
fi
echo "make test ($SET): all phases passed"
