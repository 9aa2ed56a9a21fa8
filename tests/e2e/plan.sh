#!/bin/sh
# End-to-end: efplan plan and submit on real files.
# - the bundled sample and the cluster10 / philly traces give valid plans
#   (the binary runs its own checker before writing), byte-identical for
#   OMP_NUM_THREADS=1 and 4, with the required top-level keys;
# - submit admits a feasible job (rewriting the plan) and rejects an
#   infeasible one (exit 4, plan untouched, earliest deadline given);
# - --horizon limits the slots written;
# - the plan file's two versions: --plan-version 1 writes the slot list,
#   and validate --plan reads either and writes the other back, byte for
#   byte what plan writes in that version; version 2 is the smaller.
. "$(dirname "$0")/lib/common.sh"

plan_twice() { # name jobs cluster curves
    OMP_NUM_THREADS=1 $V "$EFPLAN" plan --jobs "$2" --cluster "$3" \
        --curves "$4" --out "$T/$1.1.json" >"$T/$1.out" || fail "$1: plan failed"
    OMP_NUM_THREADS=4 $V "$EFPLAN" plan --jobs "$2" --cluster "$3" \
        --curves "$4" --out "$T/$1.4.json" >/dev/null || fail "$1: plan failed (4 threads)"
    cmp -s "$T/$1.1.json" "$T/$1.4.json" || fail "$1: plan differs between 1 and 4 threads"
    for k in '"format": "efplan-plan"' '"version": 2' '"slot_seconds": 60' \
             '"runs": [' '"slot_ends": [' '"placement": [' \
             '"earliest_feasible_deadline"' '"planned_end"' '"decision"'; do
        grep -qF "$k" "$T/$1.1.json" || fail "$1: plan lacks $k"
    done
    # version 1, and each version converted to the other
    $V "$EFPLAN" plan --jobs "$2" --cluster "$3" --curves "$4" \
        --plan-version 1 --out "$T/$1.v1.json" >/dev/null ||
        fail "$1: plan --plan-version 1 failed"
    for k in '"version": 1' '"slots": [' '"allocations": ['; do
        grep -qF "$k" "$T/$1.v1.json" || fail "$1: version 1 plan lacks $k"
    done
    $V "$EFPLAN" validate --plan "$T/$1.v1.json" --out "$T/$1.to2.json" \
        >"$T/$1.val" || fail "$1: validate --plan of version 1 failed"
    grep -q "^plan     .*: version 1, " "$T/$1.val" || fail "$1: validate --plan line"
    cmp -s "$T/$1.to2.json" "$T/$1.1.json" ||
        fail "$1: version 1 converted to 2 differs from plan's version 2"
    $V "$EFPLAN" validate --plan "$T/$1.1.json" --plan-version 1 \
        --out "$T/$1.to1.json" >"$T/$1.val" ||
        fail "$1: validate --plan of version 2 failed"
    grep -q "^plan     .*: version 2, .* allocations in [0-9]* runs$" "$T/$1.val" ||
        fail "$1: validate --plan line (version 2)"
    cmp -s "$T/$1.to1.json" "$T/$1.v1.json" ||
        fail "$1: version 2 converted to 1 differs from plan's version 1"
    [ "$(wc -c <"$T/$1.1.json")" -lt "$(wc -c <"$T/$1.v1.json")" ] ||
        fail "$1: version 2 is not smaller than version 1"
    grep -q '^  admitted [0-9]*, rejected [0-9]*, best-effort [0-9]*$' \
        "$T/$1.out" || fail "$1: summary line missing"
}

# submit (below) adds its job to the plan's jobs file: plan from a copy
cp "$D/jobs/sample.json" "$T/sample.json"
plan_twice sample "$T/sample.json" n4g8 A100
plan_twice c10 "$D/traces/itp/cluster10.csv" n32g8 A100
plan_twice philly "$D/traces/artifact/philly_103959.csv" n32g8 A100
grep -q 'admitted 257, rejected 3, best-effort 0' "$T/c10.out" || {
    cat "$T/c10.out"; fail "cluster10: admission counts changed"; }

# submit: feasible job admitted, plan rewritten
cp "$T/sample.1.json" "$T/s.json"
$V "$EFPLAN" submit --plan "$T/s.json" --job \
    '{"id":"new","model":"resnet50","batch_size":128,"iterations":2000,"deadline":30000}' \
    >"$T/sub.out" || fail "submit of a feasible job failed"
grep -q '^admitted: new' "$T/sub.out" || fail "submit: expected admitted"
grep -q '"id": "new"' "$T/s.json" || fail "submit: plan not rewritten"
# submit: infeasible job rejected with exit 4, plan untouched
cp "$T/s.json" "$T/s.before"
set +e
# (submitted after the sample's last arrival, 11346, as a live submission
# is: one placed before queued arrivals changes what they get, and may
# find no deadline that keeps every promise made to them)
$V "$EFPLAN" submit --plan "$T/s.json" --job \
    '{"id":"huge","model":"vgg16","batch_size":256,"iterations":200000,"submit_time":12000,"deadline":15000}' \
    >"$T/rej.out"
rc=$?
set -e
[ $rc -eq 4 ] || fail "submit of an infeasible job: exit $rc, expected 4"
grep -q '^earliest deadline that can be guaranteed: +[0-9dhms ]* ([0-9dhms ]* after the deadline asked)$' "$T/rej.out" || fail "no earliest deadline"
cmp -s "$T/s.json" "$T/s.before" || fail "rejected submit changed the plan file"
# the earliest deadline is admissible
# (as printed: "+15h 18m 32s" on this synthetic clock, which a job's
# deadline takes as it is)
E=$(sed -n 's/^earliest deadline that can be guaranteed: \(+[0-9dhms ]*[0-9dhms]\) (.*/\1/p' "$T/rej.out")
$V "$EFPLAN" submit --plan "$T/s.json" --job \
    "{\"id\":\"huge\",\"model\":\"vgg16\",\"batch_size\":256,\"iterations\":200000,\"submit_time\":12000,\"deadline\":\"$E\"}" \
    >"$T/acc.out" || fail "resubmission with the earliest deadline $E was not admitted"

# horizon: no slot ends after now + 1h
$V "$EFPLAN" plan --jobs "$D/jobs/sample.json" --cluster n4g8 --curves A100 \
    --horizon 1h --out "$T/h.json" >/dev/null || fail "horizon plan failed"
last=$(grep -o '"slot_ends": \[[0-9, ]*\]' "$T/h.json" | grep -o '[0-9]*' | tail -1)
[ "$last" -le 3600 ] || fail "horizon: last slot ends at $last"

# svg is written and well formed enough to open
$V "$EFPLAN" plan --jobs "$D/jobs/sample.json" --cluster n4g8 --curves A100 \
    --svg "$T/p.svg" >/dev/null || fail "svg plan failed"
head -c 4 "$T/p.svg" | grep -q '<svg' || fail "svg: not an svg"
tail -1 "$T/p.svg" | grep -q '</svg>' || fail "svg: truncated"
# current placements: a job that keeps its size stays on its GPUs; a
# placement that breaks the buddy rule is an input error naming the job
cat > "$T/cur.json" <<'JSON'
{"jobs": [
 {"id": "a", "model": "resnet50", "batch_size": 128, "iterations": 100000,
  "iterations_done": 5000, "submit_time": 0, "deadline": 20000,
  "placement": [{"node": 1, "gpus": [4, 5, 6, 7]}]},
 {"id": "b", "model": "bert", "batch_size": 64, "iterations": 20000,
  "submit_time": 0, "deadline": 9000,
  "placement": [{"node": 0, "gpus": [0, 1]}]}]}
JSON
$V "$EFPLAN" plan --jobs "$T/cur.json" --cluster n2g8 --curves A100 \
    --out "$T/cur-plan.json" >/dev/null || fail "plan with placements failed"
grep -q '"id": "b", .*"migrations": 0,' "$T/cur-plan.json" || fail "job b migrated"
sed 's/"gpus": \[0, 1\]/"gpus": [1, 2]/' "$T/cur.json" > "$T/bad.json"
set +e
$V "$EFPLAN" plan --jobs "$T/bad.json" --cluster n2g8 --curves A100 \
    >/dev/null 2>"$T/bad.err"
rc=$?
set -e
[ $rc -eq 3 ] || fail "bad placement: exit $rc, expected 3"
grep -q 'bad.json: jobs\[1\].placement: 2 GPUs not placed by the buddy rule' \
    "$T/bad.err" || { cat "$T/bad.err"; fail "bad placement: wrong message"; }

# the whole of cluster09 (11,134 jobs, 1,024 GPUs) gives a valid plan
$V "$EFPLAN" plan --jobs "$D/traces/itp/cluster09.csv" --cluster n128g8 \
    --curves A100 --out "$T/c09.json" >"$T/c09.out" || fail "cluster09: plan failed"
grep -q '^plan     11134 jobs on n128g8' "$T/c09.out" || fail "cluster09: summary"
echo "plan e2e ok"
