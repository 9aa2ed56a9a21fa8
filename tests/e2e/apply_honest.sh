#!/bin/sh
# End-to-end: efplan apply tells how the admitted jobs did against the
# plan, and nothing rewrites a plan under a running apply. A 2-job plan on
# one 8-GPU node: x (deadline 600) runs on 4 GPUs until 480, y (deadline
# 3000) until the plan's end at 1680; both run tests/data/dummy_train.sh
# told never to finish (one iteration per 0.05 s: thousands short of the
# plan at any --time-scale used here, so no check depends on wall time).
# Checks:
# - applied to its end: both listed behind their plan, x's deadline passed
#   (missed), y's ahead; exit 9; state.json's apply.behind says the same;
#   re-applying the finished plan lists them again and exits 9 again;
# - --until 240: both behind, no deadline passed: listed, exit 0;
# - a failed job and a missed one: exit 4 (a failure comes first);
# - efplan submit into the plan while a local apply runs it: refused,
#   exit 3, naming the apply's state directory; the plan file unchanged;
#   a second apply of the plan (another --state): refused, exit 3;
# - the apply killed (-9) with its attempts running: submit still refused
#   (exit 3), and so is an apply of the plan with another --state (it
#   would launch them twice); after `apply --until 0` stops them, submit
#   works (exit 0);
# - a state directory whose journal is another plan's: refused (exit 3)
#   with what is safe: while its attempts may run, resume that plan from
#   the copy the state directory keeps (the command it prints works and
#   stops them), never "another --state"; once nothing runs, a state
#   directory of its own.
. "$(dirname "$0")/lib/common.sh"
: "${EFPLAN_ROOT:?}"
cleanup() {
    kill_attempts "$T"/*/run
    rm -rf "$T"
}
trap cleanup EXIT
DUMMY=$EFPLAN_ROOT/tests/data/dummy_train.sh
# the plan's 1680 s in 2.8 s (28 s under valgrind)
SCALE=600
if [ -n "$V" ]; then SCALE=60; fi
cd "$T"
TP=$(pwd -P)

jobs() { # finish-of-x finish-of-y [extra job]
    cat <<JSON
{"jobs": [
 {"id": "x", "model": "resnet50", "batch_size": 64, "iterations": 8000,
  "submit_time": 0, "deadline": 600, "grace_seconds": 5,
  "command": ["sh", "$DUMMY", "$T/ev", "$1"]},
 {"id": "y", "model": "gpt2", "batch_size": 128, "iterations": 30000,
  "submit_time": 0, "deadline": 3000, "grace_seconds": 5,
  "command": ["sh", "$DUMMY", "$T/ev", "$2"]}${3:-}]}
JSON
}
jobs 99 99 > jobs.json
"$EFPLAN" plan --jobs jobs.json --cluster n1g8 --curves A100 \
    --out plan.json >/dev/null || fail "plan failed"
grep -q '"admitted": 2' plan.json || fail "the plan does not admit x and y"
grep -q '"slot_ends": \[\(.*, \)\{0,1\}480, 1680\]' plan.json || fail "the plan does not end at 1680"

# "behind: ID: DONE of N iterations done, EXP expected by t=T; ..." with
# DONE < EXP, for the job and the tail given
behind() { # file id tail
    awk -v id="$2" -v tail="$3" '
        $1 == "behind:" && $2 == id ":" {
            d = $3; want = $8
            rest = $0; sub(/^[^;]*; /, "", rest)
            if (d + 0 < want + 0 && rest == tail) ok = 1 }
        END { exit !ok }' "$1"
}

# 1. to the plan's end: x missed its deadline, y is behind, exit 9
set +e
$V "$EFPLAN" apply plan.json --time-scale $SCALE --state s1 >out1 2>err1
rc=$?
set -e
[ $rc -eq 9 ] || { cat out1 err1; fail "missed deadline: exit $rc, expected 9"; }
behind out1 x "deadline +10m passed: missed" ||
    { cat out1; fail "x not listed as missed"; }
grep -q '^behind: x: [0-9]* of 8000 iterations done, 8000 expected by t=+28m; ' out1 ||
    { cat out1; fail "x: expected its 8000 iterations by 1680"; }
behind out1 y "deadline +50m ahead" || { cat out1; fail "y not listed as behind"; }
grep -q '^2 admitted job(s) behind their plan at t=+28m, 1 not done by their deadline$' out1 ||
    { cat out1; fail "the count line"; }
grep -q 'jobs: 0 done, 0 failed, 2 not done' out1 || { cat out1; fail "outcome"; }
# the state file: apply.behind, one entry per job, x missed and y not
tr -d ' \n' < s1/state.json > st1
grep -q '"behind":\[{"deadline":600,"done":[0-9]*,"expected":8000,"id":"x","missed":true},{"deadline":3000,"done":[0-9]*,"expected":30000,"id":"y","missed":false}\]' st1 ||
    { cat s1/state.json; fail "state.json: apply.behind"; }
"$EFPLAN" plan --jobs s1/state.json --cluster n1g8 --curves A100 \
    --now 1680 >/dev/null || fail "the state file is not a valid queue"
# the same answer when the plan was already applied
set +e
$V "$EFPLAN" apply plan.json --time-scale $SCALE --state s1 >out1b 2>&1
rc=$?
set -e
[ $rc -eq 9 ] || { cat out1b; fail "re-apply: exit $rc, expected 9"; }
grep -q 'already applied' out1b || fail "re-apply: not 'already applied'"
behind out1b x "deadline +10m passed: missed" || { cat out1b; fail "re-apply: x"; }
# --json: the same answer as one object on standard output
set +e
$V "$EFPLAN" apply plan.json --time-scale $SCALE --state s1 --json >out1c.json 2>err1c
rc=$?
set -e
[ $rc -eq 9 ] || { cat out1c.json err1c; fail "re-apply --json: exit $rc, expected 9"; }
python3 -c 'import json,sys; d=json.load(sys.stdin)
assert d["already_done"] and d["missed"] == 1, d
assert [(b["id"], b["missed"]) for b in d["behind"]] == [("x", True), ("y", False)], d' \
    <out1c.json || { cat out1c.json; fail "re-apply --json"; }

# 2. --until 240: behind, but every deadline ahead: listed, exit 0
$V "$EFPLAN" apply plan.json --time-scale $SCALE --state s2 --until 240 \
    >out2 2>err2 || { cat out2 err2; fail "behind, deadlines ahead: exit $?"; }
behind out2 x "deadline +10m ahead" || { cat out2; fail "--until 240: x"; }
behind out2 y "deadline +50m ahead" || { cat out2; fail "--until 240: y"; }
grep -q 'expected by t=+4m;' out2 || { cat out2; fail "--until 240: the time"; }
grep -q '^2 admitted job(s) behind their plan at t=+4m, 0 not done by their deadline$' out2 ||
    { cat out2; fail "--until 240: count"; }
grep -q '"missed": true' s2/state.json && fail "--until 240: a missed job in state.json"

# 3. y fails, x misses its deadline: the failure's exit 4 comes first
jobs 99 fail > jobs.json
set +e
$V "$EFPLAN" apply plan.json --time-scale $SCALE --state s3 >out3 2>err3
rc=$?
set -e
[ $rc -eq 4 ] || { cat out3 err3; fail "failed and missed: exit $rc, expected 4"; }
behind out3 x "deadline +10m passed: missed" || { cat out3; fail "failed and missed: x"; }
grep -q '^behind: y:' out3 && fail "a failed job listed as behind"
jobs 99 99 > jobs.json

# wait (bounded) until the journal of state directory $1 records a slot
# entered: the apply has claimed the plan and launched the slot's jobs
wait_slot() {
    for _ in $(seq 1 400); do
        grep -q '"ev":"slot"' "$1/journal.jsonl" 2>/dev/null && return 0
        sleep 0.025
    done
    fail "the apply on $1 never entered a slot"
}
JOB_Z='{"id": "z", "model": "resnet50", "batch_size": 64, "iterations": 100, "deadline": 5000, "command": ["sh", "'"$DUMMY"'", "'"$T/ev"'", "99"]}'

# 4. submit while a local apply runs the plan (real time: it would take
# 28 minutes): planned from the apply's clock and admitted; the apply
# follows the rewritten plan (a "plan" record); a second apply is refused
cp plan.json plan.before
$V "$EFPLAN" apply plan.json --state s4 >out4 2>err4 &
pid=$!
wait_slot s4
$V "$EFPLAN" submit --plan plan.json --job "$JOB_Z" >sub4 2>sub4.err ||
    { cat sub4 sub4.err; fail "submit during apply: exit $?"; }
grep -qF "note: efplan apply is applying this plan (state directory $TP/s4, plan time" sub4 ||
    { cat sub4; fail "submit during apply: the note"; }
grep -q '^admitted: z' sub4 || { cat sub4; fail "submit during apply: not admitted"; }
grep -q '"z"' jobs.json || fail "submit during apply: z not in the jobs file"
# (the apply journals the "plan" record, then replaces its copy: wait
# for both, bounded)
for _ in $(seq 1 400); do
    grep -q '"ev":"plan"' s4/journal.jsonl && cmp -s plan.json s4/plan.json &&
        break
    sleep 0.025
done
grep -q '"ev":"plan"' s4/journal.jsonl || fail "the apply did not follow the new plan"
cmp -s plan.json s4/plan.json || fail "s4/plan.json is not the followed version"
set +e
$V "$EFPLAN" apply plan.json --state s4b >out4b 2>err4b
rc=$?
set -e
[ $rc -eq 3 ] || { cat err4b; fail "a second apply of the plan: exit $rc, expected 3"; }
grep -qF "plan.json: another efplan apply is applying this plan (state directory $TP/s4)" err4b ||
    { cat err4b; fail "a second apply of the plan: message"; }
[ ! -e s4b/journal.jsonl ] || fail "the second apply wrote a journal"

# 5. the apply killed with its attempts running: a submit is admitted (the
# rerun follows it), another state directory may not take the plan over
# (it would launch x and y a second time); the same one resumes it
kill -9 $pid
wait $pid 2>/dev/null || true
JOB_Z2=$(echo "$JOB_Z" | sed 's/"z"/"z2"/')
$V "$EFPLAN" submit --plan plan.json --job "$JOB_Z2" >sub5 2>&1 ||
    { cat sub5; fail "submit after kill -9: exit $?"; }
grep -qF "note: efplan apply stopped before the end of this plan (state directory $TP/s4" sub5 ||
    { cat sub5; fail "submit after kill -9: the note"; }
set +e
$V "$EFPLAN" apply plan.json --state s4c >out5c 2>err5c
rc=$?
set -e
[ $rc -eq 3 ] || { cat err5c; fail "another --state after kill -9: exit $rc, expected 3"; }
grep -qF "plan.json: its last apply (state directory $TP/s4) stopped before the plan's end and" err5c &&
grep -qF "applying it with another state directory would launch them a second time. Resume that apply: efplan apply plan.json --state $TP/s4 --backend local" err5c ||
    { cat err5c; fail "another --state after kill -9: message"; }
[ ! -e s4c/journal.jsonl ] || fail "the refused apply wrote a journal"
$V "$EFPLAN" apply plan.json --state s4 --until 0 >out5 2>err5 ||
    { cat out5 err5; fail "apply --until 0 exited $?"; }
grep -q 'taking over from plan.json: [0-9]* attempt(s) run on, 0 stopped' err5 ||
    { cat err5; fail "the rerun did not follow the submitted version"; }
grep -q 'end of the window at +0s: stopping [23] job(s)' err5 || { cat err5; fail "--until 0 stopped nothing"; }
[ "$(grep -c '"ev":"start","job":"x"' s4/journal.jsonl)" -eq 1 ] ||
    fail "x launched twice: $(grep '"ev":"start"' s4/journal.jsonl)"

# 6. another plan's journal whose attempts may still run: the message
# says to resume that plan from the copy the state directory keeps (and
# not to use another --state); that command works and stops them
cp plan.before plan.json
jobs 99 99 > jobs.json
$V "$EFPLAN" apply plan.json --state s7 >out7 2>err7 &
pid=$!
wait_slot s7
kill -9 $pid
wait $pid 2>/dev/null || true
cmp -s plan.json s7/plan.json || fail "s7/plan.json is not a copy of the plan"
cp plan.json plan.s7
# another plan file's apply given that state directory
jobs 99 99 ', {"id": "w", "model": "resnet50", "batch_size": 64,
  "iterations": 100, "submit_time": 0, "deadline": 5000,
  "command": ["sh", "'"$DUMMY"'", "'"$T/ev"'", "1"]}' > jobs2.json
"$EFPLAN" plan --jobs jobs2.json --cluster n1g8 --curves A100 \
    --out plan2.json >/dev/null || fail "re-plan failed"
set +e
$V "$EFPLAN" apply plan2.json --state s7 >out8 2>err8
rc=$?
set -e
[ $rc -eq 3 ] || { cat err8; fail "another plan's running journal: exit $rc, expected 3"; }
grep -qF "not applied to its end, and 2 attempt(s) it launched may still run (first: x): another --state would launch them a second time. Resume that plan from the copy the state directory keeps: efplan apply $TP/s7/plan.json --state $TP/s7 --backend local --jobs jobs2.json (add --until 0 to stop them now)" err8 ||
    { cat err8; fail "another plan's running journal: what to do"; }
grep -q 'use another --state' err8 && fail "the message suggests another --state"
[ "$(grep -c '"ev":"start",' s7/journal.jsonl)" -eq 2 ] || fail "the refused apply launched"
$V "$EFPLAN" apply "$TP/s7/plan.json" --state "$TP/s7" --backend local \
    --jobs jobs2.json --until 0 >out9 2>err9 ||
    { cat out9 err9; fail "the suggested resume exited $?"; }
grep -q 'resuming from' err9 || { cat err9; fail "the suggested command did not resume"; }
grep -q 'end of the window at +0s: stopping 2 job(s)' err9 || { cat err9; fail "the resume stopped nothing"; }
[ "$(grep -c '"ev":"start",' s7/journal.jsonl)" -eq 2 ] || fail "the resume launched again"
for f in s7/run/*.pid; do
    pg=$(cut -d' ' -f1 "$f")
    for _ in $(seq 1 40); do
        left=$(cat /proc/[0-9]*/stat 2>/dev/null |
               awk -v g="$pg" '$5 == g && $3 != "Z" { print $1 }')
        [ -z "$left" ] && break
        sleep 0.05
    done
    [ -z "$left" ] || fail "process group $pg ($f) still runs: $left"
done
echo "apply_honest e2e ok"
