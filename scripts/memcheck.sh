#!/usr/bin/env bash
# Run the compiled core's tests under a memory checker: invalid reads/writes, uses of
# uninitialised memory, undefined behaviour and definite leaks in bleucli/_native*.c fail the run.
#
#   bash scripts/memcheck.sh                 # valgrind memcheck on the native tests
#   bash scripts/memcheck.sh --asan          # an AddressSanitizer + UBSan build of the core
#   bash scripts/memcheck.sh --tsan          # a ThreadSanitizer build: data races of the threads
#   bash scripts/memcheck.sh [--asan|--tsan] tests/...   # other tests
#
# valgrind: PYTHONMALLOC=malloc routes Python's allocations through malloc so that valgrind
# sees them; only errors whose stack passes through the native module count.
# --asan: the core is compiled with -fsanitize=address,undefined into a scratch copy of the
# tree (the installed build is untouched) and the tests run there, with the sanitizer
# runtime preloaded; any report aborts the run.
# --tsan: the same with -fsanitize=thread, over the tests that run the threaded engines
# (batch scoring with several threads, resegmentation); a race report fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=valgrind
case "${1:-}" in --asan) mode=asan; shift;; --tsan) mode=tsan; shift;; esac
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(tests/test_native.py tests/test_native_hostile.py
                                      tests/test_batch_scoring.py tests/metrics/test_bleu_worked.py
                                      tests/test_resegment.py tests/test_batch_engine.py
                                      tests/metaeval/test_stats.py)
python=$(python3 -c 'import sys; print(sys.executable)')  # the interpreter, not a launcher

if [ "$mode" = asan ] || [ "$mode" = tsan ]; then
    command -v gcc >/dev/null || { echo "gcc is needed for the sanitizer build"; exit 2; }
    build=$(mktemp -d)
    trap 'rm -rf "$build"' EXIT
    cp -r bleucli tests examples testsets pyproject.toml "$build/"
    find "$build" -name '*.so' -delete
    if [ "$mode" = asan ]; then
        flags="-O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined"
        preload="$(gcc -print-file-name=libasan.so):$(gcc -print-file-name=libubsan.so)"
        name="AddressSanitizer/UBSan"
    else
        flags="-O1 -g -fno-omit-frame-pointer -fsanitize=thread"
        preload="$(gcc -print-file-name=libtsan.so)"
        name="ThreadSanitizer"
    fi
    include=$("$python" -c "import sysconfig; print(sysconfig.get_paths()['include'])")
    suffix=$("$python" -c "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))")
    # the file list and hash of bleucli/native.py (the one list of the core's sources)
    sources=$("$python" -c "import ast; tree = ast.parse(open('bleucli/native.py').read()); \
print(' '.join(next(ast.literal_eval(n.value) for n in tree.body if isinstance(n, ast.Assign) \
and getattr(n.targets[0], 'id', '') == 'SOURCES')))")
    hash=$("$python" -c "import sys, zlib; \
data = b''.join(open(f'bleucli/{n}', 'rb').read() for n in sys.argv[1:]); \
print(f'{zlib.crc32(data):08x}-{len(data)}')" $sources)
    c_files=$(for n in $sources; do case $n in *.c) printf 'bleucli/%s ' "$n";; esac; done)
    gcc $flags -std=c99 -shared -fPIC -I"$include" -DBLEUCLI_SOURCE_HASH="\"$hash\"" \
        -pthread $c_files \
        -o "$build/bleucli/_native$suffix" -lm
    # Python's own allocations are leaks to LeakSanitizer (interned objects live forever);
    # the interpreter is not instrumented, so TSan reports only races the core takes part in
    export BLEUCLI_MEMCHECK=$mode ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 \
        UBSAN_OPTIONS=print_stacktrace=1 TSAN_OPTIONS=halt_on_error=1:abort_on_error=1:report_signal_unsafe=0 \
        LD_PRELOAD="$preload" PYTHONPATH="$build" PYTHONMALLOC=malloc HYPOTHESIS_PROFILE=memcheck
    cd "$build"  # the scratch copy is what gets imported
    "$python" -c "import bleucli._native as n; assert n.__file__.startswith('$build'), n.__file__; \
from bleucli.native import ENGINE; assert ENGINE == 'native', ENGINE" \
        || { echo "memcheck: the sanitizer build could not be loaded"; exit 1; }
    "$python" -m pytest -q -p no:cacheprovider "${targets[@]}" \
        || { echo "memcheck: the tests failed under $name"; exit 1; }
    echo "memcheck: no $name reports in the compiled core"
    exit 0
fi

command -v valgrind >/dev/null || { echo "valgrind is not installed (apt-get install valgrind)"; exit 2; }
# the environment is the user's: nothing is installed or rebuilt here
"$python" -c "import pytest" 2>/dev/null \
    || { echo "memcheck: pytest is not installed for $python (pip install -e '.[test]')"; exit 2; }
"$python" -c "import bleucli._native" 2>/dev/null \
    || { echo "memcheck: the compiled core is not built for $python (pip install -e . builds it)"; exit 2; }
log=$(mktemp)
junit=$(mktemp --suffix=.xml)
BLEUCLI_MEMCHECK=valgrind PYTHONMALLOC=malloc HYPOTHESIS_PROFILE=memcheck \
    valgrind --tool=memcheck --error-exitcode=99 \
    --leak-check=full --show-leak-kinds=definite --errors-for-leak-kinds=definite \
    --track-origins=no --log-file="$log" \
    "$python" -m pytest -q -p no:cacheprovider --junitxml="$junit" "${targets[@]}" || status=$?
status=${status:-0}
# the tests must have run and passed: valgrind's own exit code (99 on any error, Python's
# included) would otherwise hide a pytest that never started
counts=$("$python" - "$junit" <<'PY' 2>/dev/null || echo "0 0"
import sys
import xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
suites = [root] if root.tag == "testsuite" else list(root)
ran = sum(int(s.get("tests", 0)) - int(s.get("skipped", 0)) for s in suites)
bad = sum(int(s.get("failures", 0)) + int(s.get("errors", 0)) for s in suites)
print(ran, bad)
PY
)
read -r ran bad <<< "$counts"
if [ "$ran" -eq 0 ]; then
    echo "memcheck: no test ran under valgrind (exit $status; log: $log): nothing was checked"
    exit 1
fi
if [ "$bad" -ne 0 ]; then
    echo "memcheck: $bad test(s) failed under valgrind (log: $log)"
    exit 1
fi
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
echo "memcheck: no memory errors in the compiled core ($ran tests ran under valgrind)"
