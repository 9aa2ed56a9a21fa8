#!/bin/sh
# validate --plan checks the promise, not only the structure: a plan
# edited so that an admitted job ends after its deadline (its deadline
# moved before its planned end; its work raised past what its slots
# deliver) exits 9 naming the job with its planned end and deadline; the
# plan as written exits 0. And the two restart + elastic batch cases of
# issue 34: `plan` passes its own check (it exited 5, "slots complete it
# at -1": a rebatch at an unchanged GPU count was never charged) and
# `validate --plan` finds no job ending after its deadline that the plan
# does not flag; the simulation of the first admits no job that misses.
. "$(dirname "$0")/lib/common.sh"
cd "$T"
$V "$EFPLAN" plan --jobs "$D/jobs/sample.json" --cluster n4g8 --curves A100 \
    --out p.json >/dev/null || fail "plan failed"
$V "$EFPLAN" validate --plan p.json >out 2>&1 || { cat out; fail "plan as written"; }
grep -q '^promise  24 admitted jobs checked (overhead fig12, elastic batch off): 0 end after the deadline' out ||
    { cat out; fail "no promise line"; }

# j00: admitted, planned end 229, deadline 693 -> 200
grep -q '"deadline": 693, "decision": "admitted",.*"id": "j00",.*"planned_end": 229,' p.json ||
    fail "sample plan changed: j00 is not admitted with planned end 229"
sed 's/"deadline": 693, /"deadline": 200, /' p.json >e1.json
rc=0; $V "$EFPLAN" validate --plan e1.json >out 2>&1 || rc=$?
[ "$rc" -eq 9 ] || { cat out; fail "late job: exit $rc, expected 9"; }
grep -q '^  job j00: planned end 229, its slots end it at 229, deadline 200 (admitted, ends after its deadline)$' out ||
    { cat out; fail "late job not named"; }
grep -q 'error: e1.json: the plan breaks its promise' out || { cat out; fail "no error line"; }

# j02: 10,000 more iterations than its slots run
sed 's/"iterations": 24851, "iterations_done": 0, "iterations_left": 24851,/"iterations": 34851, "iterations_done": 0, "iterations_left": 34851,/' \
    p.json >e2.json
cmp -s p.json e2.json && fail "sample plan changed: j02's work"
rc=0; $V "$EFPLAN" validate --plan e2.json >out 2>&1 || rc=$?
[ "$rc" -eq 9 ] || { cat out; fail "unfinished job: exit $rc, expected 9"; }
grep -q '^  job j02: planned end 13888, its slots never end it, deadline 13942 (admitted, ends after its deadline)$' out ||
    { cat out; fail "unfinished job not named"; }

# --json: the broken jobs as members
rc=0; $V "$EFPLAN" validate --json --plan e1.json >out.json 2>&1 || rc=$?
[ "$rc" -eq 9 ] || fail "--json: exit $rc"
grep -q '"ok":false' out.json || fail "--json: ok"
grep -q '"broken":\[{"at_risk":false,"deadline":200,"id":"j00","late":true,"planned_end":229,"slots_end":229}\]' out.json ||
    { cat out.json; fail "--json: broken"; }

[ -n "$V" ] && exit 0  # the regression cases are long under valgrind
"$EFPLAN" gen-trace --jobs 1876 --mean-interarrival 66 --deadline-factor 0.9 1.37 \
    --seed 7400054366 --best-effort 0 --duration-scale 0.113 --elastic-batch 0.46 \
    --out u.csv >/dev/null
"$EFPLAN" plan --jobs u.csv --cluster n8g8 --curves A100 --overhead restart \
    --elastic-batch --out q.json >out 2>&1 || { tail -3 out; fail "u.csv: plan"; }
# (its job 615 is still flagged at risk: a job with no room for a
# migration moved by a tight job's own growth, docs/promise.md; the check
# holds the plan to what it declares: no unflagged job is late)
rc=0; "$EFPLAN" validate --plan q.json >out 2>&1 || rc=$?
[ "$rc" -eq 0 ] || [ "$rc" -eq 9 ] || { cat out; fail "u.csv: validate exit $rc"; }
if grep '^  job ' out | grep -v '(the plan flags it at risk)$' | grep -q .; then
    cat out; fail "u.csv: a late job the plan does not flag"
fi
# a third case (issue 34): a tight job that must grow onto a second
# whole node of a full cluster found each node free of held jobs taken (a
# 32-GPU job on four, itself on one) and three 2-GPU tight jobs on three
# other nodes: no placement kept them all, and the placement moved one
# (job 442), which then missed. Reservations now count whole nodes while
# a job placement must not move holds part of one (docs/promise.md):
# the plan keeps every promise, and so does the simulation
whole_nodes() { # seed cluster name: planned, checked and simulated, no miss
    "$EFPLAN" gen-trace --jobs 1876 --mean-interarrival 66 \
        --deadline-factor 0.9 1.37 --seed "$1" --best-effort 0 \
        --duration-scale 0.113 --elastic-batch 0.46 --out "$3.csv" >/dev/null
    "$EFPLAN" plan --jobs "$3.csv" --cluster "$2" --curves A100 \
        --overhead restart --elastic-batch --out "$3.json" >out 2>&1 ||
        { tail -3 out; fail "$3.csv: plan"; }
    "$EFPLAN" validate --plan "$3.json" >out 2>&1 ||
        { cat out; fail "$3.csv: validate"; }
    "$EFPLAN" simulate --trace "$3.csv" --cluster "$2" --curves A100 \
        --policy ef --slot 60 --overhead restart --elastic-batch >out 2>&1 ||
        fail "$3.csv: simulate"
    grep -q '^  deadlines  *[0-9]* met, 0 missed' out ||
        { cat out; fail "$3.csv: a miss"; }
    grep -q '^  admitted jobs flagged at risk' out &&
        { cat out; fail "$3.csv: a job at risk"; }
    return 0
}
whole_nodes 7400765196 n8g8 w
# the same shape on n4g8 (seed 7400765214 of benchmarks/promise_issue34.cases):
# the engine before whole-node reservations missed one job there
whole_nodes 7400765214 n4g8 x
"$EFPLAN" gen-trace --jobs 1743 --mean-interarrival 944 --deadline-factor 0.78 0.97 \
    --seed 7400057086 --best-effort 0 --duration-scale 0.809 --elastic-batch 0.45 \
    --out t.csv >/dev/null
"$EFPLAN" plan --jobs t.csv --cluster n4g8 --curves A100 --overhead restart \
    --elastic-batch --out p2.json >out 2>&1 || { tail -3 out; fail "t.csv: plan"; }
"$EFPLAN" validate --plan p2.json >out 2>&1 || { cat out; fail "t.csv: validate"; }
"$EFPLAN" simulate --trace t.csv --cluster n4g8 --curves A100 --policy ef \
    --slot 60 --overhead restart --elastic-batch --jobs-out j.csv >out 2>&1 ||
    fail "t.csv: simulate"
grep -q '^  deadlines  *[0-9]* met, 0 missed' out || { cat out; fail "t.csv: a miss"; }
echo "ok"
