#!/bin/sh
# End-to-end property test: an admitted job meets its deadline.
# Over PROMISE_CASES (default 1000) generated cases, the same ones on
# every run (tests/e2e/lib/promise_gen.awk: case ids 0 .. N-1, each drawn
# from its own seeded generator: 50 .. 2000 jobs, 8 .. 1024 GPUs on g8 or
# g4 nodes, load 0.05 .. 3, slot 60 .. 600 s, every overhead model, with
# and without elastic batch, some best-effort jobs), each case generates a
# trace, simulates it with --policy ef and checks from the jobs CSV that
# no admitted deadline job missed (tests/e2e/lib/promise_case.sh; also the
# at_risk flags when the result has them). Every case runs; a failing one
# prints the commands that reproduce it and the missed jobs' rows; the
# test fails at the end if any case failed. Cases run PROMISE_JOBS at a
# time (default 2). Under VALGRIND the default is 20 cases. PROMISE_FIRST
# (default 0) starts at another case id: PROMISE_FIRST=17 PROMISE_CASES=1
# reruns case 17 alone (benchmarks/promise_sweep.sh uses ids from
# 1000000). Ends with the line
#   promise: C cases, J jobs, D deadline jobs, A admitted, M admitted
#   missed (K cases), F flagged at risk (G of them missed)
# ("no flagged at risk" while the simulator writes no at_risk).
. "$(dirname "$0")/lib/common.sh"
L=$(cd "$(dirname "$0")/lib" && pwd)
if [ -n "$V" ]; then N=${PROMISE_CASES:-20}; else N=${PROMISE_CASES:-1000}; fi
P=${PROMISE_JOBS:-2}
F=${PROMISE_FIRST:-0}
case $N in ''|*[!0-9]*) fail "PROMISE_CASES: a count, not \"$N\"" ;; esac
case $F in ''|*[!0-9]*) fail "PROMISE_FIRST: a case id, not \"$F\"" ;; esac
case $P in ''|*[!0-9]*|0) fail "PROMISE_JOBS: >= 1, not \"$P\"" ;; esac
mkdir "$T/res"
awk -v first="$F" -v count="$N" -f "$L/promise_gen.awk" >"$T/cases"
[ "$(wc -l <"$T/cases")" -eq "$N" ] || fail "the case generator failed"
xargs -P "$P" -L 1 sh "$L/promise_case.sh" "$T/res" <"$T/cases" ||
    fail "a case could not be run"

# report in case order, so the output does not depend on scheduling
missing=0
while read -r id rest; do
    if [ ! -f "$T/res/$id.res" ] || [ ! -s "$T/res/$id.res" ]; then
        echo "FAIL case $id: no result"; missing=$((missing + 1))
        continue
    fi
    [ -f "$T/res/$id.fail" ] && cat "$T/res/$id.fail"
    cat "$T/res/$id.res" >>"$T/all"
done <"$T/cases"
touch "$T/all"
awk -v missing="$missing" '
{ c++; jobs += $4; dl += $5; adm += $6; miss += $7
  if ($7 > 0) { mc++; k = $2 ($3 ? ", elastic batch" : ""); mo[k]++
                mj[k] += $7 }
  if ($10 >= 0) { fl += $10; flm += $13; hasfl = 1 }
  if ($12) bad++ }
END {
    if (mc) {
        n = split("fig12 reference restart none", om, " ")
        for (i = 1; i <= n; i++)
            for (e = 0; e <= 1; e++) {
                k = om[i] (e ? ", elastic batch" : "")
                if (k in mo)
                    printf "missed with %s: %d cases, %d jobs\n", k, mo[k],
                        mj[k]
            }
    }
    printf "promise: %d cases, %d jobs, %d deadline jobs, %d admitted, " \
        "%d admitted missed (%d cases), %s\n", c, jobs, dl, adm, miss, mc,
        hasfl ? fl " flagged at risk (" flm " of them missed)" \
              : "no flagged at risk"
    if (bad || missing) {
        printf "%d of %d cases failed\n", bad + missing, c + missing
        exit 1
    }
}' "$T/all" || fail "an admitted job missed its deadline (cases above)"
