#!/bin/sh
# End-to-end: apply --follow-jobs, the plan clock that follows the jobs
# (docs/apply.md, "The plan clock"). One job on one 8-GPU node, made far
# slower than its plan: a stand-in with a throttle that writes its
# progress in 10 steps with a pause of 0.3 s each (3 s of wall time at
# least), while its plan gives it a few hundred plan seconds, well under
# 1 s of wall time at --time-scale 2000. A second job starts when the
# first is planned to end. Checks, on the same plan and jobs:
# - without --follow-jobs the apply reaches the deadline before the job
#   is done: it reports the miss (`behind: ... missed`, exit 9, the state
#   file's apply.behind);
# - with --follow-jobs it exits 0, both jobs done, nothing behind: every
#   promise met on the followed clock; the progress lines say the clock
#   follows the jobs; the journal's begin record says so (follow);
# - the order of the plan is kept: the second job starts only after the
#   first is done (its slot's boundary waited for the first job);
# - a kill -9 of the followed apply and the same command again resumes
#   on the followed clock and still exits 0;
# - --follow-jobs with --backend slurm is refused (exit 2).
# No wall-time assertion: the throttle only makes the job slower than
# the plan, whatever the machine's load.
. "$(dirname "$0")/lib/common.sh"
cleanup() {
    kill_attempts "$T"/*/run
    rm -rf "$T"
}
trap cleanup EXIT
cd "$T"
# the stand-in: N steps of TOTAL/N iterations, a pause of P s before
# each; checkpoints its count on SIGTERM and resumes from it
cat >slow.sh <<'SH'
ck=$EFPLAN_CHECKPOINT_DIR/done
t=$EFPLAN_ITERATIONS
n=$(cat "$ck" 2>/dev/null || echo 0)
trap 'echo $n >"$ck.tmp" && mv "$ck.tmp" "$ck"; exit 75' TERM
while [ "$n" -lt "$t" ]; do
    sleep "$2"
    n=$((n + t / $1))
    [ "$n" -gt "$t" ] && n=$t
    echo "$n" >"$EFPLAN_PROGRESS_FILE"
done
SH
cat >jobs.json <<JSON
{"jobs": [
 {"id": "slow", "model": "resnet50", "batch_size": 64, "iterations": 3000,
  "submit_time": 0, "deadline": 150, "grace_seconds": 5,
  "command": ["sh", "$T/slow.sh", "10", "0.3"]},
 {"id": "next", "model": "resnet50", "batch_size": 64, "iterations": 20000,
  "submit_time": 0, "deadline": 3000, "grace_seconds": 5,
  "command": ["sh", "$T/slow.sh", "2", "0.05"]}]}
JSON
"$EFPLAN" plan --jobs jobs.json --cluster n1g8 --curves A100 \
    --out plan.json >plan.out || { cat plan.out; fail "plan failed"; }
grep -q 'admitted 2' plan.out || { cat plan.out; fail "not both admitted"; }
cp plan.json plain.json
cp plan.json follow.json

# --- the wall clock: the slow job misses ---------------------------------
rc=0
$V "$EFPLAN" apply plain.json --time-scale 2000 >plain.out 2>plain.err ||
    rc=$?
[ "$rc" -eq 9 ] || { cat plain.out plain.err; fail "plain: exit $rc, not 9"; }
grep -q '^behind: slow: .*missed$' plain.out ||
    { cat plain.out; fail "plain: the miss is not reported"; }
grep -q '"missed": true' plain.state/state.json ||
    fail "plain: state.json's apply.behind has no miss"
grep -q 'follows the jobs' plain.err &&
    fail "plain: says its clock follows the jobs"
grep -q '"follow"' plain.state/journal.jsonl &&
    fail "plain: a follow flag in the journal"

# --- the followed clock: every promise met -------------------------------
rc=0
$V "$EFPLAN" apply follow.json --time-scale 2000 --follow-jobs \
    >follow.out 2>follow.err || rc=$?
[ "$rc" -eq 0 ] || { cat follow.out follow.err; fail "follow: exit $rc"; }
grep -q 'jobs: 2 done, 0 failed, 0 not done' follow.out ||
    { cat follow.out; fail "follow: not every job done"; }
grep -q '^behind:' follow.out && { cat follow.out; fail "follow: behind"; }
grep -q '"behind": \[\]' follow.state/state.json ||
    { cat follow.state/state.json; fail "follow: state.json lists behind"; }
grep -q "the plan's clock follows the jobs" follow.err ||
    { cat follow.err; fail "follow: does not say its clock follows the jobs"; }
head -1 follow.state/journal.jsonl | grep -q '"follow":true' ||
    fail "follow: the begin record has no follow flag"
# the second job started after the first was done (its exit 0, or its
# progress reaching its iterations: then apply stops it, "done")
J=follow.state/journal.jsonl
done_at=$(grep -n '"ev":"done","job":"slow"\|"ev":"exit","job":"slow".*"result":"done"' \
    "$J" | head -1 | cut -d: -f1)
next_at=$(grep -n '"ev":"start","job":"next"' "$J" | head -1 | cut -d: -f1)
[ -n "$done_at" ] && [ -n "$next_at" ] && [ "$next_at" -gt "$done_at" ] ||
    { cat "$J"; fail "follow: next started before slow was done"; }

# --- kill -9 mid-run, the same command again -----------------------------
cp plan.json killed.json
"$EFPLAN" apply killed.json --time-scale 2000 --follow-jobs \
    >k1.out 2>k1.err &
pid=$!
# wait for the slow job's first progress (its second step at most)
i=0
until [ -s killed.state/jobs/slow/progress ] ||
      [ -s killed.state/progress/slow ]; do
    i=$((i + 1))
    [ "$i" -lt 600 ] || fail "kill: the slow job never wrote progress"
    sleep 0.05
done
kill -9 "$pid"
wait "$pid" 2>/dev/null || true
rc=0
$V "$EFPLAN" apply killed.json --time-scale 2000 >k2.out 2>k2.err || rc=$?
[ "$rc" -eq 0 ] || { cat k2.out k2.err; fail "resumed: exit $rc"; }
grep -q 'jobs: 2 done, 0 failed, 0 not done' k2.out ||
    { cat k2.out; fail "resumed: not every job done"; }
grep -q "the plan's clock follows the jobs" k2.err ||
    { cat k2.err; fail "resumed: not on the followed clock"; }
[ "$(grep -c '"ev":"start","job":"slow"' \
    killed.state/journal.jsonl)" -eq 1 ] ||
    { cat killed.state/journal.jsonl; fail "resumed: slow launched twice"; }

# --- refused with Slurm ---------------------------------------------------
rc=0
"$EFPLAN" apply plan.json --backend slurm --follow-jobs >s.out 2>&1 || rc=$?
[ "$rc" -eq 2 ] && grep -q 'follow-jobs' s.out ||
    { cat s.out; fail "slurm: exit $rc"; }
echo "apply_follow: ok"
