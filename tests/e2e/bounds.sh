#!/bin/sh
# End-to-end: run time is bounded by the input's size, not its numbers.
# - plan: a best-effort job at the work limit (1e12 iterations at 1 it/s,
#   1e12 s alone; slot by slot it was 1.7e10 slots, hours) plans under
#   every overhead model, ends between 1e12/1.5 s (both GPUs) and
#   1.05e12 s, and plan_check (run before writing) accepts it;
# - simulate: ef and edf on it finish with a few points; themis and
#   chronus on jobs at the limit that want more GPUs than there are (a
#   lease decision every slot for 1e12 s) stop as a runaway, exit 5 with
#   a message, at SIM_MAX_POINTS (they grew memory without end);
#   chronus on deadlines and arrivals 1e12-9e14 s away meets all four;
# - a job that makes no progress (reference overheads on 1 s slots cost
#   the whole slot) stops the plan as a runaway, exit 5 (it looped
#   forever); one with a deadline is rejected as "too slow", and a job
#   alone whose minimum share cannot pay its overheads says so: neither
#   says "GPUs promised to admitted jobs" when nothing is admitted;
# - tiresias on a 1e-300 curve is an input error, exit 3 (it never
#   finished, growing memory by ~100 MB/s).
# Every command runs under `timeout 120` as a safety net only: a hang
# fails the test instead of blocking the suite; nothing is timed.
. "$(dirname "$0")/lib/common.sh"
mkdir -p "$T/c" "$T/tiny"
printf 'global_batch_size,1,2\n8,1.0,1.5\n' >"$T/c/m.csv"
printf 'global_batch_size,1,2\n8,1e-300,2e-300\n' >"$T/tiny/m.csv"
cat >"$T/lim.json" <<'EOF'
{"jobs": [{"id": "a", "model": "m", "batch_size": 8, "iterations": 1000000000000, "submit_time": 0, "deadline": null}]}
EOF
cat >"$T/lim3.json" <<'EOF'
{"jobs": [{"id": "a", "model": "m", "batch_size": 8, "iterations": 1000000000000, "submit_time": 0, "deadline": null, "num_gpu": 2},
 {"id": "b", "model": "m", "batch_size": 8, "iterations": 1000000000000, "submit_time": 0, "deadline": null, "num_gpu": 2},
 {"id": "c", "model": "m", "batch_size": 8, "iterations": 1000000000000, "submit_time": 0, "deadline": 5000000000000, "num_gpu": 1}]}
EOF
cat >"$T/slow.json" <<'EOF'
{"jobs": [{"id": "a", "model": "m", "batch_size": 8, "iterations": 100000000, "submit_time": 0, "deadline": null, "num_gpu": 1}]}
EOF
cat >"$T/dl.json" <<'EOF'
{"jobs": [{"id": "a", "model": "m", "batch_size": 8, "iterations": 1000, "submit_time": 0, "deadline": 100000}]}
EOF
ef() { timeout 120 $V "$EFPLAN" "$@"; }

for ov in fig12 reference restart none; do
    rc=0
    ef plan --jobs "$T/lim.json" --cluster n1g2 --curves "$T/c" \
        --overhead $ov --out "$T/p-$ov.json" >"$T/p-$ov.txt" 2>&1 || rc=$?
    [ $rc -eq 0 ] || { cat "$T/p-$ov.txt"; fail "plan at the limit, $ov: exit $rc"; }
    end=$(sed -n 's/.*"planned_end": \([0-9]*\).*/\1/p' "$T/p-$ov.json")
    [ -n "$end" ] && [ "$end" -ge 666666666666 ] && [ "$end" -le 1050000000000 ] ||
        fail "plan at the limit, $ov: planned_end $end"
done

for pol in ef edf; do
    rc=0
    ef simulate --policy $pol --trace "$T/lim.json" --cluster n1g2 \
        --curves "$T/c" --out "$T/s-$pol.json" >"$T/s-$pol.txt" 2>&1 || rc=$?
    [ $rc -eq 0 ] || { cat "$T/s-$pol.txt"; fail "simulate $pol at the limit: exit $rc"; }
    grep -q '"points": [1-9],' "$T/s-$pol.json" ||
        { grep -o '"points": [0-9]*' "$T/s-$pol.json"; fail "simulate $pol: points"; }
done

# a million points each: skipped under valgrind (minutes there)
if [ -z "$V" ]; then
    for pol in themis chronus; do
        rc=0
        ef simulate --policy $pol --trace "$T/lim3.json" --cluster n1g2 \
            --curves "$T/c" >"$T/r-$pol.txt" 2>"$T/r-$pol.err" || rc=$?
        [ $rc -eq 5 ] || { cat "$T/r-$pol.err"; fail "simulate $pol: exit $rc, expected 5"; }
        grep -q "^efplan: error: the simulation ran away: policy $pol at t=[0-9]* after 1060864 scheduling points (expected at most 1060864 for 3 jobs" "$T/r-$pol.err" ||
            { cat "$T/r-$pol.err"; fail "simulate $pol: message"; }
        [ ! -s "$T/r-$pol.txt" ] || fail "simulate $pol: output on a runaway"
    done
fi

# chronus on deadlines and arrivals up to 9e14 s away: lease numbers
# stay small (it doubled an int past 2^31 and looped forever)
cat >"$T/far.json" <<'EOF'
{"jobs": [{"id": "a", "model": "m", "batch_size": 8, "iterations": 1000, "submit_time": 0, "deadline": 900000000000000, "num_gpu": 1},
 {"id": "b", "model": "m", "batch_size": 8, "iterations": 1000, "submit_time": 0, "deadline": 1000000000000, "num_gpu": 2},
 {"id": "c", "model": "m", "batch_size": 8, "iterations": 1000, "submit_time": 0, "deadline": 2000, "num_gpu": 2},
 {"id": "d", "model": "m", "batch_size": 8, "iterations": 1000, "submit_time": 800000000000000, "deadline": 800000000100000, "num_gpu": 2}]}
EOF
ef simulate --policy chronus --trace "$T/far.json" --cluster n1g2 \
    --curves "$T/c" --out "$T/far-r.json" >"$T/far.txt" 2>&1 ||
    { cat "$T/far.txt"; fail "chronus on far deadlines failed"; }
grep -q '"met": 4,' "$T/far-r.json" || fail "chronus on far deadlines: met"

rc=0
ef plan --jobs "$T/slow.json" --cluster n1g2 --curves "$T/c" \
    --overhead reference --slot 1 --out "$T/ra.json" >"$T/ra.txt" 2>"$T/ra.err" || rc=$?
[ $rc -eq 5 ] || { cat "$T/ra.err"; fail "no-progress plan: exit $rc, expected 5"; }
grep -q '^efplan: error: the plan ran away: at t=' "$T/ra.err" ||
    { cat "$T/ra.err"; fail "no-progress plan: message"; }
[ ! -e "$T/ra.json" ] || fail "no-progress plan: a plan file was written"

ef plan --jobs "$T/dl.json" --cluster n1g2 --curves "$T/c" --overhead reference \
    --slot 3 --out "$T/dl-plan.json" >/dev/null || fail "too-slow plan failed"
grep -q '"reason": "too slow: even alone on the cluster, no plan that pays the reference overheads of 3 s slots finishes its 1000 iterations"' \
    "$T/dl-plan.json" || { grep -o '"reason": "[^"]*"' "$T/dl-plan.json"; fail "too-slow reason"; }

# alone on an empty cluster, its minimum share cannot pay its overheads
# by the deadline (the fastest plan could): the reason says that, not
# "GPUs promised to admitted jobs" (there are none)
printf 'job_id,submit_time,num_iteration,model_name,deadline,batch_size\nx,5858,3624,bert,6255,64\n' >"$T/one.csv"
ef plan --jobs "$T/one.csv" --cluster n128g8 --curves A100 --now 3793 \
    --out "$T/one.json" >/dev/null || fail "one-job plan failed"
grep -q '"reason": "no minimum-share reservation pays its overheads by the deadline (fastest plan alone: +1h 43m 52s); no GPUs are promised to other jobs before it"' \
    "$T/one.json" || { grep -o '"reason": "[^"]*"' "$T/one.json"; fail "one-job reason"; }

rc=0
ef simulate --policy tiresias --trace "$T/slow.json" --cluster n1g2 \
    --curves "$T/tiny" >/dev/null 2>"$T/ti.err" || rc=$?
[ $rc -eq 3 ] || { cat "$T/ti.err"; fail "tiresias on 1e-300: exit $rc, expected 3"; }
grep -q 'm.csv:2:3: "1e-300": throughput below the minimum' "$T/ti.err" ||
    { cat "$T/ti.err"; fail "tiresias on 1e-300: message"; }
echo "bounds e2e ok"
