#!/bin/sh
# End-to-end: tests/run.sh itself. A scratch e2e folder of three scripts
# (one passes, one fails, one is skipped with exit 77) run through
# tests/run.sh: PASS, FAIL and SKIP lines (SKIP with the test's reason),
# the closing "1 passed, 1 failed, 1 skipped", exit 1; only the passing
# and the skipped one: "1 passed, 0 failed, 1 skipped", exit 0.
. "$(dirname "$0")/lib/common.sh"
: "${EFPLAN_ROOT:?}"
BUILD=$(dirname "$EFPLAN")
mkdir "$T/e2e"
printf '#!/bin/sh\nexit 0\n' >"$T/e2e/a_ok.sh"
printf '#!/bin/sh\necho broken\nexit 1\n' >"$T/e2e/b_bad.sh"
printf '#!/bin/sh\necho "skipped: no torch here"\nexit 77\n' >"$T/e2e/c_skip.sh"
rc=0
EFPLAN_E2E_DIR=$T/e2e sh "$EFPLAN_ROOT/tests/run.sh" "$BUILD" e2e \
    >"$T/all.txt" 2>&1 || rc=$?
[ $rc -eq 1 ] || { cat "$T/all.txt"; fail "a failing test: exit $rc, expected 1"; }
grep -qx 'PASS e2e/a_ok' "$T/all.txt" || { cat "$T/all.txt"; fail "PASS line"; }
grep -qx 'FAIL e2e/b_bad' "$T/all.txt" || { cat "$T/all.txt"; fail "FAIL line"; }
grep -qx 'SKIP e2e/c_skip (skipped: no torch here)' "$T/all.txt" ||
    { cat "$T/all.txt"; fail "SKIP line"; }
[ "$(tail -n 1 "$T/all.txt")" = "1 passed, 1 failed, 1 skipped" ] ||
    { cat "$T/all.txt"; fail "closing line"; }
rm "$T/e2e/b_bad.sh"
rc=0
EFPLAN_E2E_DIR=$T/e2e sh "$EFPLAN_ROOT/tests/run.sh" "$BUILD" e2e \
    >"$T/ok.txt" 2>&1 || rc=$?
[ $rc -eq 0 ] || { cat "$T/ok.txt"; fail "a skip is no failure: exit $rc"; }
[ "$(tail -n 1 "$T/ok.txt")" = "1 passed, 0 failed, 1 skipped" ] ||
    { cat "$T/ok.txt"; fail "closing line without a failure"; }
echo "runner: PASS, FAIL, SKIP and the closing line"
