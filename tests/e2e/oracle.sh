#!/bin/sh
# End-to-end: efplan oracle on the bundled 10-job instance.
# - greedy admits 6, the ILP proves 8 (the early "big" job blocks two
#   later ones): JSON format, statuses, bound and gap; the ILP's plan
#   file is written (the binary checks it with plan_check first) and the
#   LP model too; same bytes (but "seconds") for OMP_NUM_THREADS 1 and 4;
# - no run depends on wall time: every run has no time limit and a node
#   budget (100000, the optimum needs 323) unless it sets its own, so
#   the results are the same under valgrind (the default 10 s limit ran
#   out there and made the first run "feasible");
# - the answer (issue 36): the verdict names the range of the optimum,
#   each plan's distance to the bound and the jobs the best answer admits
#   that greedy rejects; --plan-out writes the best plan (here the
#   offline admission's, 8 jobs, even with the relaxation alone);
# - the bundled sample with the defaults: greedy 24, offline 25, bound
#   26: exit 0, "optimum between 25 and 26; greedy 24 is within 2", the
#   exact ILP not run (43,036 binaries), byte-identical JSON twice;
# - a node budget gives "feasible" with a bound, exit 0; a spent time
#   limit stops every LP: no answer, exit 4, no plan file; --must-admit
#   of every deadline job is "infeasible", exit 4;
# - a GLPK fatal error (test hook) is exit 5 with a message, no abort, no
#   output file; usage errors exit 2, bad input exit 3;
# - the bound at real size (issue 22): --method auto runs both here; the
#   relaxation's bound is 8 too, the offline admission admits 8 (arrival
#   order 6); --method relaxed alone writes its own LP (efplan_bound), no
#   "ilp"; --method exact has no "relaxed";
# - plan --admission offline admits 8 and says why "big" is out; the
#   default (online) still admits 6; a job submitted into the offline plan
#   is admitted while its 8 stay admitted (the old runs kept), one that
#   cannot fit is refused;
# - the offline admission's exact step on a generated instance where the
#   search alone cannot reach the optimum: 8 admitted with it, 7 without
#   (--offline-exact 0), not run on a model above --offline-exact.
. "$(dirname "$0")/lib/common.sh"
J=$EFPLAN_DATA/jobs/oracle10.json
# NODES, SECS: the node and time budgets (an option given twice is a
# usage error)
oracle() { $V "$EFPLAN" oracle --jobs "$J" --cluster n1g8 --curves A100 --slot 300 \
    --time-limit "${SECS:-0}" --node-limit "${NODES:-100000}" "$@"; }
has() { grep -qF "$2" "$1" || { cat "$1"; fail "$1 lacks $2"; }; }

OMP_NUM_THREADS=1 oracle --out "$T/r1.json" --plan-out "$T/p1.json" \
    --write-lp "$T/m.lp" >"$T/o1.txt" || fail "oracle failed"
has "$T/r1.json" '"format": "efplan-oracle"'
has "$T/r1.json" '"version": 3'
has "$T/r1.json" '"method": "both"'
has "$T/r1.json" '"bound": 8,'
has "$T/r1.json" '"offline": {"admitted": 8, "admitted_jobs": ["s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8"], "exact": "not_needed", "gap_jobs": 0,'
has "$T/r1.json" '"relaxed": {"bound": 8,'
has "$T/o1.txt" 'offline admission admits 8 jobs'
has "$T/o1.txt" 'relaxed bound: at most 8 jobs admissible'
has "$T/r1.json" '"gap_jobs": 2,'
has "$T/r1.json" '"greedy": {"admitted": 6, "admitted_jobs": ["big", "s1", "s2", "s3", "s4", "s6"]'
has "$T/r1.json" '"ilp": {"admitted": 8, "admitted_jobs": ["s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8"]'
has "$T/r1.json" '"bound": 8,'
has "$T/r1.json" '"status": "optimal"'
has "$T/r1.json" '"gpu_status": "optimal"'
has "$T/r1.json" '"slots": 24'
has "$T/o1.txt" 'ilp: the optimum admits 8, greedy 6 (2 more)'
has "$T/o1.txt" 'answer: optimum 8 (a plan admits 8, no plan admits more); greedy 6 is within 2, offline 8 within 0, ilp 8 within 0'
has "$T/o1.txt" 'it admits 3 jobs greedy rejects: s5, s7, s8'
has "$T/o1.txt" 'it leaves out 1 job greedy admits: big'
has "$T/r1.json" '"verdict": {"answer": "proven", "best": "offline", "gained_jobs": ["s5", "s7", "s8"], "gap_jobs": 0, "given_up_jobs": ["big"], "greedy_within": 2, "lower": 8, "upper": 8}'
grep -q '^  ilp  *optimal  *8  *8 ' "$T/o1.txt" || { cat "$T/o1.txt"; fail "table row"; }
has "$T/p1.json" '"format": "efplan-plan"'
has "$T/p1.json" '"admitted": 8, "best_effort": 1'
has "$T/p1.json" '"id": "big", "iterations": 99000'
grep -q '"decision": "rejected".*"id": "big"' "$T/p1.json" || fail "big not rejected in the best plan"
has "$T/o1.txt" "wrote $T/p1.json (offline, 8 jobs admitted)"
head -1 "$T/m.lp" | grep -q 'Problem: efplan_oracle' || fail "LP file header"
has "$T/m.lp" 'Maximize'
has "$T/m.lp" 'cap_0:'

OMP_NUM_THREADS=4 oracle --out "$T/r4.json" --plan-out "$T/p4.json" >/dev/null ||
    fail "oracle failed (4 threads)"
sed 's/"seconds": [0-9.]*//' "$T/r1.json" >"$T/r1.cut"
sed 's/"seconds": [0-9.]*//' "$T/r4.json" >"$T/r4.cut"
cmp -s "$T/r1.cut" "$T/r4.cut" || fail "result differs between runs"
cmp -s "$T/p1.json" "$T/p4.json" || fail "ILP plan differs between runs"

# node budget: reproducible, honest status
NODES=5 oracle --out "$T/n.json" >"$T/n.txt" || fail "node limit: exit $?"
has "$T/n.json" '"status": "feasible"'
has "$T/n.json" '"limit": "nodes"'
has "$T/n.json" '"nodes": 5,'
has "$T/n.txt" 'stopped by the node limit'

rc=0
SECS=0.000000001 oracle --out "$T/t.json" --plan-out "$T/tp.json" \
    >"$T/t.txt" || rc=$?
[ $rc -eq 4 ] || fail "spent time limit: exit $rc, expected 4"
has "$T/t.json" '"status": "no_incumbent"'
has "$T/t.json" '"ilp": {"admitted": null'
has "$T/t.json" '"limit": "time"'
has "$T/t.json" '"answer": "no_bound"'
has "$T/t.txt" 'answer: none (no bound: every LP was stopped by its limit)'
[ ! -e "$T/tp.json" ] || fail "plan file written without an answer"
# the bundled sample with the defaults (issue 36): an answer, exit 0
$V "$EFPLAN" oracle --jobs "$EFPLAN_DATA/jobs/sample.json" --cluster n4g8 --curves A100 \
    --out "$T/s1.json" >"$T/s.txt" || { cat "$T/s.txt"; fail "sample: exit $?"; }
has "$T/s.txt" 'answer: optimum between 25 and 26; greedy 24 is within 2, offline 25 within 1'
has "$T/s.txt" 'best plan: the offline admission, 25 jobs, within 3.8% of the bound'
has "$T/s.txt" 'it admits 2 jobs greedy rejects: j27, j29'
has "$T/s1.json" '"ilp": null'
has "$T/s1.json" '"jobs_file": "'"$EFPLAN_DATA"'/jobs/sample.json"'
has "$T/s1.json" '"method": "relaxed"'
OMP_NUM_THREADS=2 "$EFPLAN" oracle --jobs "$EFPLAN_DATA/jobs/sample.json" --cluster n4g8 \
    --curves A100 --out "$T/s2.json" >/dev/null || fail "sample again"
sed 's/"seconds": [0-9.]*//g' "$T/s1.json" >"$T/s1.cut"
sed 's/"seconds": [0-9.]*//g' "$T/s2.json" >"$T/s2.cut"
cmp -s "$T/s1.cut" "$T/s2.cut" || fail "sample: result differs between runs"

rc=0
oracle --must-admit big,s1,s2,s3,s4,s5,s6,s7,s8 --out "$T/i.json" >/dev/null || rc=$?
[ $rc -eq 4 ] || fail "infeasible: exit $rc, expected 4"
has "$T/i.json" '"status": "infeasible"'
has "$T/i.json" '"gap_jobs": null'

rc=0
EFPLAN_ILP_FAULT=glpk oracle --out "$T/f.json" >"$T/f.out" 2>"$T/f.err" || rc=$?
[ $rc -eq 5 ] || fail "GLPK failure: exit $rc, expected 5"
grep -q '^efplan: error: GLPK failed: glp_set_col_bnds' "$T/f.err" || {
    cat "$T/f.err"; fail "GLPK failure: message"; }
[ ! -e "$T/f.json" ] || fail "GLPK failure wrote a result"

for v in 0 x; do
    rc=0
    NODES=$v SECS=$v oracle >"$T/bad.out" 2>&1 || rc=$?
    [ $rc -eq 2 ] || fail "oracle budget $v: exit $rc, expected 2"
    grep -q "is not a" "$T/bad.out" || { cat "$T/bad.out"; fail "budget $v: message"; }
done
for bad in "--must-admit nosuch" "--must-admit be" "--bogus" \
           "--slot 60"; do
    rc=0
    # shellcheck disable=SC2086
    oracle $bad >/dev/null 2>&1 || rc=$?
    [ $rc -eq 2 ] || fail "oracle $bad: exit $rc, expected 2"
done
# the relaxation alone, and the exact ILP alone
oracle --method relaxed --out "$T/x.json" --write-lp "$T/x.lp" --plan-out \
    "$T/xp.json" >"$T/x.txt" || fail "relaxed: exit $?"
has "$T/x.json" '"method": "relaxed"'
has "$T/x.json" '"ilp": null'
has "$T/x.json" '"status": "optimal", "windows": '
has "$T/x.txt" 'answer: optimum 8 (a plan admits 8, no plan admits more); greedy 6 is within 2, offline 8 within 0'
has "$T/x.txt" "wrote $T/xp.json (offline, 8 jobs admitted)"
$V "$EFPLAN" validate --plan "$T/xp.json" >/dev/null || fail "relaxed: best plan invalid"
head -1 "$T/x.lp" | grep -q 'Problem: efplan_bound' || fail "relaxed LP file"
oracle --method exact --out "$T/e.json" >/dev/null || fail "exact: exit $?"
has "$T/e.json" '"relaxed": null'
has "$T/e.json" '"method": "exact"'
for bad in "--method x" "--windows 0" "--offline-plans 0"; do
    rc=0
    # shellcheck disable=SC2086
    oracle $bad >/dev/null 2>&1 || rc=$?
    [ $rc -eq 2 ] || fail "oracle $bad: exit $rc, expected 2"
done

# plan: offline admission beside the online default
$V "$EFPLAN" plan --jobs "$J" --cluster n1g8 --curves A100 --slot 300 \
    --admission offline --out "$T/off.json" >"$T/off.txt" || fail "plan offline"
has "$T/off.txt" 'offline admission: 8 admitted (arrival order: 6), 1 jobs left out'
has "$T/off.json" 'left out by the offline admission'
# submit into the offline plan (a copy of the queue: submit appends the
# job to the plan's jobs file): arrival order cannot hold its 8 jobs, so
# without the plan's own runs every new job would "break" a promise; a
# small job due late is admitted, the 8 stay admitted, and a job that
# really does not fit is refused with an earliest deadline
cp "$J" "$T/q10.json"
$V "$EFPLAN" plan --jobs "$T/q10.json" --cluster n1g8 --curves A100 --slot 300 \
    --admission offline --out "$T/off2.json" >/dev/null || fail "plan offline copy"
$V "$EFPLAN" submit --plan "$T/off2.json" --job '{"id": "late", "model":
    "resnet50", "batch_size": 64, "iterations": 1000, "submit_time": 600,
    "deadline": 200000}' >"$T/sub.txt" 2>&1 || fail "submit into offline plan"
has "$T/sub.txt" 'admitted: late'
$V "$EFPLAN" plan --jobs "$T/q10.json" --cluster n1g8 --curves A100 --slot 300 \
    --admission offline >/dev/null || fail "the queue file after submit"
grep -c '"decision": "admitted"' "$T/off2.json" | grep -qx 9 ||
    fail "offline plan after submit: not 9 admitted"
$V "$EFPLAN" validate --plan "$T/off2.json" >/dev/null || fail "plan after submit invalid"
rc=0
$V "$EFPLAN" submit --plan "$T/off2.json" --job '{"id": "huge", "model":
    "resnet50", "batch_size": 64, "iterations": 9000000, "submit_time": 600,
    "deadline": 3600}' >"$T/sub2.txt" 2>&1 || rc=$?
has "$T/sub2.txt" 'rejected: huge'
[ $rc -eq 4 ] || fail "submit huge: exit $rc, expected 4"
$V "$EFPLAN" plan --jobs "$J" --cluster n1g8 --curves A100 --slot 300 \
    >"$T/on.txt" || fail "plan online"
has "$T/on.txt" 'admitted 6, rejected 3'
for bad in "--offline-exact -1" "--offline-exact x"; do
    rc=0
    # shellcheck disable=SC2086
    "$EFPLAN" plan --jobs "$J" --cluster n1g8 --curves A100 --admission \
        offline $bad >/dev/null 2>&1 || rc=$?
    [ $rc -eq 2 ] || fail "plan $bad: exit $rc, expected 2"
done

# the exact step: the oracle study's synthetic instance 18 (gen-trace seed
# 18, its first 10 jobs of at most 5.3 h) on 8 GPUs: arrival order admits
# 7, the search alone 7 too (no set of jobs left out and no order of
# decisions lets MSS reservations hold 8), the ILP 8: its jobs with its
# schedule as their reservations make a plan of 8 that passes the
# checks; --offline-exact 0 is the search alone
"$EFPLAN" gen-trace --jobs 40 --mean-interarrival 300 --deadline-factor 0.4 \
    1.0 --seed 18 | awk -F, 'NR == 1 { print; next }
    $8 <= 19000 && c < 10 { print; c++ }' >"$T/syn18.csv"
plan18() { $V "$EFPLAN" plan --jobs "$T/syn18.csv" --cluster n1g8 --curves A100 \
    --slot 300 --overhead none --admission offline "$@"; }
plan18 --out "$T/x18.json" >"$T/x18.txt" || fail "plan syn18 offline"
has "$T/x18.txt" 'offline admission: 8 admitted (arrival order: 7), 0 jobs left out'
has "$T/x18.txt" "exact step: the ILP's 8 jobs"
$V "$EFPLAN" validate --plan "$T/x18.json" >/dev/null || fail "syn18 plan invalid"
plan18 --offline-exact 0 >"$T/s18.txt" || fail "plan syn18 search alone"
has "$T/s18.txt" 'offline admission: 7 admitted (arrival order: 7)'
has "$T/s18.txt" 'exact step: off'
plan18 --offline-exact 100 >"$T/b18.txt" || fail "plan syn18 small budget"
has "$T/b18.txt" 'exact step: not run (its model has 262 binaries'
rc=0
"$EFPLAN" plan --jobs "$J" --cluster n1g8 --curves A100 --admission later \
    >/dev/null 2>&1 || rc=$?
[ $rc -eq 2 ] || fail "plan --admission later: exit $rc, expected 2"

rc=0
$V "$EFPLAN" oracle --jobs "$T/missing.json" --cluster n1g8 --curves A100 \
    >/dev/null 2>&1 || rc=$?
[ $rc -eq 3 ] || fail "missing jobs file: exit $rc, expected 3"
echo "oracle e2e ok"
