#!/bin/sh
# End-to-end: elastic batch size (issue 9) with the real binary.
# - gen-trace --elastic-batch writes a batch_sizes column, the same bytes
#   for the same seed, and validate reads it;
# - plan --elastic-batch: the plan file says each elastic allocation's
#   batch and passes the planner's own check; submit keeps the mode and
#   every job's batch range, samples and planned end;
# - simulate --policy saxena and ef --elastic-batch: result keys, the
#   policy time per point, results independent of the thread count
#   (timings aside); ef --elastic-batch without overheads misses no
#   deadline it admitted;
# - --elastic-batch with a policy that keeps batch sizes: usage error;
# - apply gives each launch its allocation's batch size (EFPLAN_BATCH_SIZE)
#   and restarts a job whose batch size changes.
. "$(dirname "$0")/lib/common.sh"

$V "$EFPLAN" gen-trace --jobs 150 --mean-interarrival 400 --deadline-factor 0.5 1.5 \
    --seed 5 --elastic-batch 0.6 --out "$T/g.csv" || fail "gen-trace"
$V "$EFPLAN" gen-trace --jobs 150 --mean-interarrival 400 --deadline-factor 0.5 1.5 \
    --seed 5 --elastic-batch 0.6 >"$T/g2.csv" || fail "gen-trace (stdout)"
cmp -s "$T/g.csv" "$T/g2.csv" || fail "gen-trace --elastic-batch is not deterministic"
head -1 "$T/g.csv" | grep -q ',best_effort,batch_sizes$' || fail "no batch_sizes column"
n=$(awk -F, 'NR > 1 && $10 ~ /;/' "$T/g.csv" | wc -l)
[ "$n" -gt 40 ] && [ "$n" -lt 110 ] || fail "$n of 150 jobs with a batch range (share 0.6)"
"$EFPLAN" gen-trace --jobs 150 --mean-interarrival 400 --deadline-factor 0.5 1.5 \
    --seed 5 >"$T/g0.csv"
head -1 "$T/g0.csv" | grep -q 'batch_sizes' && fail "batch_sizes column without the option"
# the other columns do not depend on the option
cut -d, -f1-9 "$T/g.csv" | tail -n +2 >"$T/a"; tail -n +2 "$T/g0.csv" >"$T/b"
cmp -s "$T/a" "$T/b" || fail "--elastic-batch changed the other columns"
$V "$EFPLAN" validate --jobs "$T/g.csv" --curves A100 --cluster n2g8 >/dev/null ||
    fail "validate rejects the generated trace"

$V "$EFPLAN" plan --jobs "$T/g.csv" --cluster n2g8 --curves A100 --elastic-batch \
    --out "$T/p.json" >/dev/null || fail "plan --elastic-batch"
grep -q '"elastic_batch": true' "$T/p.json" || fail "plan file lacks elastic_batch"
grep -q '{"batch_size": [0-9]*, "end": [0-9]*, "gpus": [0-9]*, "job": ' "$T/p.json" ||
    fail "no run says its batch"
grep -q '"samples_left": ' "$T/p.json" || fail "no samples_left"
"$EFPLAN" plan --jobs "$T/g.csv" --cluster n2g8 --curves A100 --out "$T/p0.json" >/dev/null
grep -q '"batch_size": [0-9]*, "gpus"' "$T/p0.json" && fail "fixed-batch plan names batches"
# submit into an elastic-batch plan keeps every old job as the plan had
# it: a job submitted after the plan's end leaves each old job's entry
# (batch range, samples, planned end, ...) byte for byte
cp "$T/p.json" "$T/pa.json"
end=$(sed -n 's/.*"summary": {[^}]*"end": \([0-9]*\),.*/\1/p' "$T/pa.json")
$V "$EFPLAN" submit --plan "$T/pa.json" --job "{\"id\": \"after\", \"model\": \"resnet50\", \"batch_size\": 64, \"iterations\": 100, \"submit_time\": $((end + 60)), \"deadline\": null}" \
    >"$T/sa.out" || fail "submit after the end of an elastic-batch plan: exit $?"
grep '^    {"batch_size"' "$T/p.json" | sed 's/,$//' >"$T/ja"
grep '^    {"batch_size"' "$T/pa.json" | grep -v '"id": "after"' | sed 's/,$//' >"$T/jb"
grep -q '"batch_sizes": \[' "$T/ja" || fail "the plan has no job with a batch range"
cmp -s "$T/ja" "$T/jb" || { diff "$T/ja" "$T/jb" | head -4; fail "submit changed the jobs of an elastic-batch plan"; }
cat >"$T/j.json" <<'J'
{"id": "late", "model": "resnet50", "batch_sizes": [64, 128, 256], "samples": 6400000, "submit_time": SUBMIT, "deadline": 9999999}
J
# after the plan's end: a job submitted at 0 could cost an admitted job
# its promise, and submit refuses that
sed -i "s/SUBMIT/$((end + 60))/" "$T/j.json"
rc=0; $V "$EFPLAN" submit --plan "$T/p.json" --job "$(cat "$T/j.json")" >"$T/s.out" || rc=$?
[ "$rc" -eq 0 ] || fail "submit to an elastic plan: exit $rc"
grep -q '"elastic_batch": true' "$T/p.json" || fail "submit dropped elastic_batch"
grep -q '"id": "late"' "$T/p.json" || fail "submit did not add the job"

for p in saxena "ef --elastic-batch"; do
    f=$(echo "$p" | tr -d ' -')
    OMP_NUM_THREADS=1 $V "$EFPLAN" simulate --trace "$T/g.csv" --cluster n2g8 \
        --curves A100 --policy $p --out "$T/$f.1.json" >"$T/$f.out" || fail "$p"
    OMP_NUM_THREADS=4 $V "$EFPLAN" simulate --trace "$T/g.csv" --cluster n2g8 \
        --curves A100 --policy $p --out "$T/$f.4.json" >/dev/null || fail "$p (4 threads)"
    grep -v 'wall_seconds\|point_us' "$T/$f.1.json" >"$T/a"
    grep -v 'wall_seconds\|point_us' "$T/$f.4.json" >"$T/b"
    cmp -s "$T/a" "$T/b" || fail "$p: result differs between 1 and 4 threads"
    for k in '"elastic_batch": true' '"batch_changes":' '"point_us": {"max":' \
             '"deadline_ratio":' '"mean_jct":'; do
        grep -qF "$k" "$T/$f.1.json" || fail "$p: result lacks $k"
    done
    grep -q '^  decision time per point  *p50 [0-9.]* us, p99 [0-9.]* us, max [0-9.]* us$' "$T/$f.out" ||
        fail "$p: no decision time in the table"
done
grep -q '"rejected": 0,' "$T/saxena.1.json" || fail "saxena rejected a job"

$V "$EFPLAN" simulate --trace "$T/g.csv" --cluster n1g8 --curves A100 --policy ef \
    --elastic-batch --overhead none --out "$T/none.json" >/dev/null || fail "overhead none"
mis=$(sed -n 's/^  "missed": \([0-9]*\),$/\1/p' "$T/none.json")
rej=$(sed -n 's/^  "rejected": \([0-9]*\),$/\1/p' "$T/none.json")
[ "$mis" -eq 0 ] || fail "ef --elastic-batch without overheads missed $mis admitted deadlines"
[ "$rej" -gt 0 ] || fail "the trace is not tight enough to test the guarantee"

rc=0; "$EFPLAN" simulate --trace "$T/g.csv" --cluster n2g8 --curves A100 \
    --policy edf --elastic-batch 2>"$T/err" || rc=$?
[ "$rc" -eq 2 ] || fail "--elastic-batch with edf: exit $rc"
grep -q 'keeps every job' "$T/err" || fail "no reason for the usage error"
# apply runs each allocation at its batch size: the job sees it in
# EFPLAN_BATCH_SIZE (the job's own batch_size where the plan names none),
# and a batch change at the same GPUs restarts it (a resize)
cat >"$T/job.sh" <<'SH'
echo "$EFPLAN_JOB_ID $EFPLAN_BATCH_SIZE $WORLD_SIZE" >> "$EV"
trap 'exit 0' TERM
while :; do sleep 0.05; done
SH
cmd="[\"sh\", \"$T/job.sh\"]"
cat >"$T/eq.json" <<J
{"jobs": [
 {"id": "e", "model": "resnet50", "batch_sizes": [64, 128, 256], "samples": 2000000,
  "submit_time": 0, "deadline": null, "grace_seconds": 5, "env": {"EV": "$T/ev"}, "command": $cmd},
 {"id": "f", "model": "bert", "batch_size": 64, "iterations": 3000, "submit_time": 0,
  "deadline": 900, "grace_seconds": 5, "env": {"EV": "$T/ev"}, "command": $cmd}]}
J
# (a version 1 plan: the slot list, which apply reads too, is what the
# sed below edits)
$V "$EFPLAN" plan --jobs "$T/eq.json" --cluster n1g8 --curves A100 --elastic-batch \
    --plan-version 1 --out "$T/ep.json" >/dev/null || fail "plan of the apply queue"
grep -q '"batch_size": 256, "gpus": 4, "job": "e"' "$T/ep.json" || fail "e does not run at 256"
# (the stand-in never reports progress: f, admitted with deadline 900,
# is not done at the plan's end at 900, so apply exits 9 and says so)
rc=0; $V "$EFPLAN" apply "$T/ep.json" --time-scale 600 --state "$T/s1" >"$T/a1.out" 2>"$T/a1.err" || rc=$?
[ "$rc" -eq 9 ] || { cat "$T/a1.err"; fail "apply of an elastic-batch plan: exit $rc"; }
grep -q '^behind: f: 0 of 3000 iterations done, 3000 expected by t=+15m; deadline +15m passed: missed$' "$T/a1.out" ||
    { cat "$T/a1.out"; fail "apply of an elastic-batch plan: f not listed as missed"; }
# each job's launches in order (the two jobs start at once: their lines
# may come in either order)
launches() { grep "^$1 " "$T/ev" | tr '\n' ';'; }
[ "$(launches e)" = "e 256 4;e 256 8;" ] && [ "$(launches f)" = "f 64 4;" ] ||
    { cat "$T/ev"; fail "the jobs did not see the plan's batch sizes"; }
# the same GPUs at another batch size: a resize, launched with the new size
sed 's/{"batch_size": 256, "gpus": 8, "job": "e", "placement": \[{"gpus": \[0, 1, 2, 3, 4, 5, 6, 7\]/{"batch_size": 128, "gpus": 4, "job": "e", "placement": [{"gpus": [0, 1, 2, 3]/' \
    "$T/ep.json" >"$T/ep2.json"
grep -q '"batch_size": 128, "gpus": 4' "$T/ep2.json" || fail "no batch change made"
rm -f "$T/ev"
rc=0; $V "$EFPLAN" apply "$T/ep2.json" --jobs "$T/eq.json" --time-scale 600 --state "$T/s2" \
    >/dev/null 2>"$T/a2.err" || rc=$?
[ "$rc" -eq 9 ] || { cat "$T/a2.err"; fail "apply with a batch change: exit $rc"; }
[ "$(launches e)" = "e 256 4;e 128 4;" ] ||
    { cat "$T/ev"; fail "a batch change did not relaunch the job at its new size"; }
grep -q 'resize e batch 256->128' "$T/a2.err" || { cat "$T/a2.err"; fail "no resize for the batch change"; }
grep -q '"batch":128,"ev":"start","job":"e"' "$T/s2/journal.jsonl" || fail "the journal lacks the batch"

echo "elastic batch: $n ranged jobs; guarantee: $rej rejected, 0 admitted late"
