#!/bin/sh
# tests/run.sh BUILD [unit|e2e [NAME]]: run the test suite against the
# binaries in BUILD (build/ or build-asan/). Unit tests are the cmocka
# programs in BUILD/tests/; end-to-end tests are the scripts
# tests/e2e/*.sh (only tests/e2e/NAME.sh when NAME is given), which get
# EFPLAN (the binary) and EFPLAN_DATA (the bundled inputs) in the
# environment. $VALGRIND, if set, prefixes every binary that is run.
# Prints one line per test program and ends with "N passed, N failed"
# (and ", N skipped": a test that exits 77 could not run here, e.g. a
# tool it needs is not installed; it says why, and is not a pass).
set -u
BUILD=${1:-build}
WHAT=${2:-all}
ONLY=${3:-*}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
export EFPLAN="$BUILD/efplan"
export EFPLAN_DATA="$ROOT/inputs"
export EFPLAN_ROOT="$ROOT"
export VALGRIND="${VALGRIND:-}"
pass=0
fail=0
skip=0
failed=""
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT

run_one() { # name, command...
    name=$1; shift
    rc=0
    "$@" >"$log/out" 2>&1 || rc=$?
    if [ "$rc" -eq 0 ]; then
        pass=$((pass + 1)); echo "PASS $name"
    elif [ "$rc" -eq 77 ]; then
        skip=$((skip + 1)); echo "SKIP $name: $(tail -1 "$log/out")"
    else
        fail=$((fail + 1)); failed="$failed $name"; echo "FAIL $name"
        sed 's/^/    /' "$log/out" | tail -40
    fi
}

if [ "$WHAT" = all ] || [ "$WHAT" = unit ]; then
    for t in "$BUILD"/tests/test_*; do
        [ -x "$t" ] || continue
        run_one "unit/$(basename "$t")" $VALGRIND "$t"
    done
fi
if [ "$WHAT" = all ] || [ "$WHAT" = e2e ]; then
    for t in "$ROOT"/tests/e2e/$ONLY.sh; do
        if [ ! -f "$t" ]; then
            [ "$ONLY" = '*' ] && continue
            echo "FAIL e2e/$ONLY: no such test ($t)"
            fail=$((fail + 1)); failed="$failed e2e/$ONLY"; continue
        fi
        run_one "e2e/$(basename "$t" .sh)" sh "$t"
    done
fi
[ -n "$failed" ] && echo "failed:$failed"
if [ "$skip" -gt 0 ]; then
    echo "$pass passed, $fail failed, $skip skipped"
else
    echo "$pass passed, $fail failed"
fi
[ "$fail" -eq 0 ]
