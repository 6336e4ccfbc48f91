#!/usr/bin/env bash
# Run the compiled core's tests under valgrind's memcheck: invalid reads/writes, uses of
# uninitialised memory and definite leaks in bleucli/_native.c fail the run.
#
#   bash scripts/memcheck.sh            # the native and metric differential tests
#   bash scripts/memcheck.sh tests/...  # other tests
#
# PYTHONMALLOC=malloc routes Python's allocations through malloc so that valgrind sees them;
# leaks are reported only for blocks allocated by the native module's own code paths.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "valgrind is not installed (apt-get install valgrind)"; exit 2; }
python3 -m pip install --quiet --disable-pip-version-check --no-deps -e .
python3 -c "import bleucli._native" || { echo "the compiled core is not built"; exit 2; }
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(tests/test_native.py tests/metrics/test_bleu_worked.py)
log=$(mktemp)
# the interpreter itself, not a launcher script (valgrind would trace only the launcher)
python=$(python3 -c 'import sys; print(sys.executable)')
PYTHONMALLOC=malloc HYPOTHESIS_PROFILE=memcheck valgrind --tool=memcheck --error-exitcode=99 \
    --leak-check=full --show-leak-kinds=definite --errors-for-leak-kinds=definite \
    --track-origins=no --log-file="$log" \
    "$python" -m pytest -q -p no:cacheprovider "${targets[@]}" || status=$?
status=${status:-0}
# only errors whose stack passes through the compiled core count
if grep -E "Invalid (read|write|free)|uninitialised|definitely lost" -A25 "$log" | grep -q "_native"; then
    grep -B2 -A20 "_native" "$log" | head -80
    echo "memcheck: errors in bleucli/_native.c (full log: $log)"
    exit 1
fi
grep -E "ERROR SUMMARY|definitely lost" "$log" | tail -2
if [ "$status" -ne 0 ] && [ "$status" -ne 99 ]; then
    echo "memcheck: the tests failed under valgrind (exit $status; log: $log)"
    exit "$status"
fi
echo "memcheck: no memory errors in the compiled core"
