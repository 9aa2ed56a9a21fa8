#!/bin/sh
# End-to-end: efplan apply with the local backend on a real plan.
# A 4-job plan on one 8-GPU node (made by efplan plan) has resizes, a
# migration and completions; each job runs tests/data/dummy_train.sh,
# which logs the GPUs it saw, advances its progress file and checkpoints
# on its signal. Checks:
# - the launches happen in the plan's order with the plan's GPU sets, and
#   each process saw exactly the plan's CUDA_VISIBLE_DEVICES;
# - no process started on a GPU that another process still held;
# - kill -9 of the executor mid-plan, then the same command again, gives
#   the same launches and outcome: nothing launched twice, nothing left;
# - re-applying a finished plan does nothing;
# - a failing job is reported (exit 4, its log named), never relaunched;
#   --until stops and checkpoints what runs, and the state file it writes
#   is accepted by efplan plan --jobs;
# - dry-run prints the actions and runs nothing; its MASTER_ADDR is the
#   node of --nodelist; its paths (EFPLAN_PROGRESS_FILE, the sbatch log)
#   are the real run's, absolute; a --nodes file that names too few nodes
#   (or a node twice) is an error naming the file and line (exit 3).
. "$(dirname "$0")/lib/common.sh"
: "${EFPLAN_ROOT:?}"
cleanup() {
    # stop anything a failed run may have left (by the pids it recorded)
    kill_attempts "$T"/*/run
    rm -rf "$T"
}
trap cleanup EXIT
DUMMY=$EFPLAN_ROOT/tests/data/dummy_train.sh
# 60-second slots last 0.2 s (0.4 s for the kill test; 2 s under valgrind,
# whose start-up alone takes most of a second)
SCALE=300
KSCALE=150
if [ -n "$V" ]; then SCALE=30; KSCALE=30; fi

jobs() { # events-file finish-of-c
    cat <<JSON
{"jobs": [
 {"id": "a", "model": "resnet50", "batch_size": 64, "iterations": 8000,
  "submit_time": 60, "deadline": 660, "grace_seconds": 5,
  "command": ["sh", "$DUMMY", "$1", "2"]},
 {"id": "b", "model": "deepspeech2", "batch_size": 32, "iterations": 6000,
  "submit_time": 0, "deadline": 1200, "grace_seconds": 5,
  "checkpoint_signal": "SIGUSR1", "env": {"DUMMY_NOTE": "b's own"},
  "command": ["sh", "$DUMMY", "$1", "4"]},
 {"id": "c", "model": "gpt2", "batch_size": 128, "iterations": 2000,
  "submit_time": 0, "deadline": 1500, "grace_seconds": 5,
  "command": ["sh", "$DUMMY", "$1", "$2"]},
 {"id": "d", "model": "deepspeech2", "batch_size": 32, "iterations": 6000,
  "submit_time": 0, "deadline": 1200, "grace_seconds": 5,
  "command": ["sh", "$DUMMY", "$1", "2"]}]}
JSON
}
cd "$T"
jobs "$T/ev1" 1 > jobs.json
# --moves any: the paper's rule, which moves jobs here (the default holds
# them still), so that apply's migration path is exercised
"$EFPLAN" plan --jobs jobs.json --cluster n1g8 --curves A100 --moves any \
    --out plan.json >/dev/null || fail "plan failed"
grep -q '"migrations": [1-9]' plan.json || fail "the plan has no migration"
grep -q '"resizes": [1-9]' plan.json || fail "the plan has no resize"

# launches recorded in a journal: "job gpu,gpu,..." in order (per slot:
# the restarts of resized and migrated jobs, then new starts)
# (a launch the executor was killed before making is dropped: the rerun
# records it as start_failed and launches the next attempt)
launches() {
    grep -E '"ev":"start(_failed)?",' "$1" | awk '
        function field(name) {
            if (!match($0, "\"" name "\":[^,}]*")) return ""
            v = substr($0, RSTART + length(name) + 3, RLENGTH - length(name) - 3)
            gsub(/"/, "", v); return v }
        { key = field("job") "." field("attempt")
          if (field("ev") == "start") {
              p = $0; sub(/.*"place":\[\{"gpus":\[/, "", p)
              sub(/\],"node":0\}\].*/, "", p)
              n++; k[n] = key; line[n] = field("job") " " p
          } else for (i = 1; i <= n; i++) if (k[i] == key) k[i] = "" }
        END { for (i = 1; i <= n; i++) if (k[i] != "") print line[i] }'
}
# processes as they saw themselves: "job CUDA_VISIBLE_DEVICES", sorted
seen() { grep '^start ' "$1" | awk '{print $2, $4}' | sort; }
# each (job, attempt) started at most once
once() { [ -z "$(grep '^start ' "$1" | awk '{print $2, $3}' | sort | uniq -d)" ]; }
# no GPU held by two processes at once, replaying start/end events
no_overlap() {
    awk '$1 == "start" { n = split($4, g, ",");
            for (i = 1; i <= n; i++) {
                if (g[i] in held) { print "GPU " g[i] " of " $2 " held by " held[g[i]]; bad = 1 }
                held[g[i]] = $2 "." $3 } ;
            gpus[$2 "." $3] = $4 }
         $1 == "end" { n = split(gpus[$2 "." $3], g, ",");
            for (i = 1; i <= n; i++) delete held[g[i]] }
         END { exit bad }' "$1"
}
cat > expected <<'TXT'
b 0,1,2,3
c 4,5
d 6,7
b 2,3
a 0,1
a 0,1,2,3
b 4,5
b 4,5,6,7
d 0,1,2,3
TXT
sort expected > expected_seen

# 1. one uninterrupted run
$V "$EFPLAN" apply plan.json --time-scale $SCALE --state s1 >out1 2>err1 ||
    { cat err1; fail "apply exited $?"; }
launches s1/journal.jsonl > got1
diff expected got1 || fail "launch order or GPU sets differ from the plan"
seen ev1 > seen1
diff expected_seen seen1 || fail "the GPUs the processes saw differ"
once ev1 || fail "an attempt started twice"
no_overlap ev1 || fail "two processes held one GPU"
grep -q 'jobs: 4 done, 0 failed, 0 not done' out1 || { cat out1; fail "outcome"; }
grep -q '"finished": \[' s1/state.json || fail "state file lacks finished"
grep -q 'slot 3 of 4 \[+3m, +10m): resize a 2->4 GPUs, migrate b' err1 ||
    { cat err1; fail "progress lines: no migrate/resize at 180"; }
grep -q '"progress":8000,"result":"done"' s1/journal.jsonl || fail "a's progress"

# 2. the same plan, the executor killed with -9 mid-plan, then rerun
jobs "$T/ev2" 1 > jobs.json
# err2 is opened for appending: the attempts' monitors outlive the kill, and
# under valgrind they still write to the stream it had
: > err2
$V "$EFPLAN" apply plan.json --time-scale $KSCALE --state s2 >/dev/null 2>>err2 &
pid=$!
# mid-plan: once the slot at 180 (a migration, a resize) is under way
for _ in $(seq 1 400); do
    grep -q '"slot":180' s2/journal.jsonl 2>/dev/null && break
    sleep 0.025
done
grep -q '"slot":180' s2/journal.jsonl || fail "the first run never reached the slot at 180"
kill -9 $pid
wait $pid 2>/dev/null || true
grep -q '"ev":"end"' s2/journal.jsonl && fail "the run ended before the kill"
# the monitors that outlive it hold none of its standard streams (a pipe
# reading apply's output would not end with apply otherwise)
for f in s2/run/*.pid; do
    mp=$(cut -d' ' -f1 "$f")
    for fd in 0 1 2; do
        l=$(readlink "/proc/$mp/fd/$fd" 2>/dev/null) || continue
        [ "$l" = /dev/null ] || fail "monitor $mp ($f) holds fd $fd: $l"
    done
done
$V "$EFPLAN" apply plan.json --time-scale $KSCALE --state s2 >out2 2>>err2 ||
    { cat err2; fail "resumed apply exited $?"; }
grep -q "resuming from" err2 || { cat err2; tail -5 s2/journal.jsonl; fail "no resume message"; }
launches s2/journal.jsonl > got2
diff expected got2 || fail "after kill -9: launches differ"
seen ev2 > seen2
diff expected_seen seen2 || fail "after kill -9: a process ran twice or on other GPUs"
once ev2 || fail "after kill -9: an attempt started twice"
no_overlap ev2 || fail "after kill -9: two processes held one GPU"
grep -q 'jobs: 4 done, 0 failed, 0 not done' out2 || { cat out2; fail "outcome after kill"; }
# nothing left: no live (non-zombie) process in any group it launched,
# once a dummy's last 'sleep 0.05' has had time to end
for f in s2/run/*.pid; do
    pg=$(cut -d' ' -f1 "$f")
    for _ in $(seq 1 40); do
        left=$(cat /proc/[0-9]*/stat 2>/dev/null |
               awk -v g="$pg" '$5 == g && $3 != "Z" { print $1 }')
        [ -z "$left" ] && break
        sleep 0.05
    done
    [ -z "$left" ] || fail "process group $pg ($f) still runs: $left"
done
sed 's/"journal": "[^"]*"//' s1/state.json > st1
sed 's/"journal": "[^"]*"//' s2/state.json > st2
diff st1 st2 || fail "state files differ after kill -9"

# 3. re-applying a finished plan does nothing
cp s2/journal.jsonl j.before
$V "$EFPLAN" apply plan.json --time-scale $KSCALE --state s2 >out3 2>&1 || fail "re-apply failed"
grep -q 'already applied' out3 || fail "re-apply: no 'already applied'"
cmp -s j.before s2/journal.jsonl || fail "re-apply changed the journal"

# 4. a failing job; stop at 400 with b and d running (a is done: the dummy
# completes at its second start); the state file re-plans
jobs "$T/ev4" fail > jobs.json
set +e
$V "$EFPLAN" apply plan.json --time-scale $SCALE --state s4 --until 400 >out4 2>err4
rc=$?
set -e
[ $rc -eq 4 ] || { cat err4; fail "failing job: exit $rc, expected 4"; }
grep -q "FAILED c attempt 1: exit 3; log $T/s4/jobs/c/1.log" err4 || { cat err4; fail "failure not reported"; }
grep -q 'failing on purpose' s4/jobs/c/1.log || fail "c's log"
[ "$(grep -c '"ev":"start","job":"c"' s4/journal.jsonl)" -eq 1 ] || fail "c relaunched"
grep -q '"why": "exit 3"' s4/state.json || fail "state: c's failure"
grep -q '"placement": \[' s4/state.json || fail "state: b's placement"
"$EFPLAN" plan --jobs s4/state.json --cluster n1g8 --curves A100 \
    --now 400 >replan.out || fail "the state file is not a valid queue"
grep -q '^plan     2 jobs' replan.out || { cat replan.out; fail "re-plan: expected b and d"; }

# 5. dry-run: actions and launches printed, nothing run or written
$V "$EFPLAN" apply plan.json --backend dry-run --state s5 >dry.out || fail "dry-run failed"
[ ! -e s5 ] || fail "dry-run wrote its state directory"
grep -q '^  migrate b: checkpoint, stop, start again' dry.out || fail "dry-run: migrate"
grep -q 'slurm: sbatch --parsable --job-name=efp-[0-9a-f]*-b-4 --nodes=1 --nodelist=node0 --ntasks-per-node=1 --gres=gpu:4' dry.out ||
    fail "dry-run: sbatch line"
grep -q 'CUDA_VISIBLE_DEVICES=4,5 .*EFPLAN_JOB_ID=c ' dry.out || fail "dry-run: env"
grep -q "DUMMY_NOTE='b'\\\\''s own' NNODES=1 " dry.out || fail "dry-run: env quoting"
# the progress file and the log are where the real run puts them: under
# the state directory's absolute path (--state s5 is relative and does not
# exist; a real run would create it here), in the environment and in the
# sbatch line alike
TP=$(cd "$T" && pwd -P)
grep -qF "EFPLAN_PROGRESS_FILE=$TP/s5/jobs/b/progress " dry.out ||
    fail "dry-run: EFPLAN_PROGRESS_FILE is not $TP/s5/jobs/b/progress"
grep -qF -- "--output=$TP/s5/jobs/b/1.log " dry.out ||
    fail "dry-run: sbatch --output is not under $TP/s5"
grep 'EFPLAN_PROGRESS_FILE=[^/]' dry.out && fail "dry-run: a relative EFPLAN_PROGRESS_FILE"
# an existing state directory: its real path, as the real run's
$V "$EFPLAN" apply plan.json --backend dry-run --state s1 >dry1s.out || fail "dry-run --state s1 failed"
grep -qF "EFPLAN_PROGRESS_FILE=$TP/s1/jobs/b/progress " dry1s.out ||
    fail "dry-run --state s1: EFPLAN_PROGRESS_FILE is not $TP/s1/jobs/b/progress"
# every launch's MASTER_ADDR is the first node of its --nodelist (a
# one-node job used to print 127.0.0.1 beside --nodelist=node0)
same_master() {
    awk '/MASTER_ADDR=/ { m = $0; sub(/.*MASTER_ADDR=/, "", m); sub(/ .*/, "", m) }
         /--nodelist=/ { n = $0; sub(/.*--nodelist=/, "", n); sub(/[ ,].*/, "", n); k++
             if (m != n) { print "MASTER_ADDR " m " beside --nodelist " n; bad = 1 } }
         END { if (!k) { print "no launch"; bad = 1 }; exit bad }' "$1"
}
same_master dry.out || fail "dry-run: MASTER_ADDR differs from --nodelist"
# the end of the window stops what still runs
grep -q '^end of dry-run at [0-9]*' dry.out || fail "dry-run: end line"

# 6. --nodes: one node table for every backend. A 2-node plan with a file
# naming one node is a clear error, exit 3, before anything is printed
# (the dry run used to read past its table); with two names (trimmed,
# comments skipped) the dry run names both, MASTER_ADDR as in --nodelist
"$EFPLAN" plan --jobs jobs.json --cluster n2g2 --curves A100 \
    --out plan2.json >/dev/null || fail "plan on n2g2 failed"
grep -q '"node": 1' plan2.json || fail "the n2g2 plan does not use node 1"
printf 'only-node\n' > one.txt
set +e
$V "$EFPLAN" apply plan2.json --backend dry-run --nodes one.txt >dry1.out 2>dry1.err
rc=$?
set -e
[ $rc -eq 3 ] || { cat dry1.err; fail "one node name for 2 nodes: exit $rc, expected 3"; }
grep -q 'one.txt: 1 node name in 1 line for a plan of 2 nodes: plan node 1 has no name' dry1.err ||
    { cat dry1.err; fail "one node name for 2 nodes: message"; }
[ ! -s dry1.out ] || fail "one node name for 2 nodes: printed before the error"
printf ' head-0 \n# spare\n\nhead-1\n' > two.txt
$V "$EFPLAN" apply plan2.json --backend dry-run --nodes two.txt >dry2.out ||
    fail "dry-run with two node names failed"
grep -q -- '--nodelist=head-1 ' dry2.out || fail "--nodes: plan node 1 is not head-1"
same_master dry2.out || fail "--nodes: MASTER_ADDR differs from --nodelist"
printf 'head-0\nhead-0\n' > dup.txt
set +e
$V "$EFPLAN" apply plan2.json --backend dry-run --nodes dup.txt >/dev/null 2>dup.err
rc=$?
set -e
[ $rc -eq 3 ] && grep -q 'dup.txt:2: node "head-0" is already plan node 0 (line 1)' dup.err ||
    { cat dup.err; fail "--nodes: a name twice: exit $rc"; }
# a journal whose begin record holds a clock no apply writes (a scale out
# of --time-scale's range): refused, naming the journal's line, before
# anything runs (it made the plan clock overflow: t=-106751991167300d)
grep -v '"ev":"end"' s1/journal.jsonl |
    sed '1s/"scale":[^,}]*/"scale":1e300/' > s1/j.bad
mv s1/j.bad s1/journal.jsonl
set +e
$V "$EFPLAN" apply plan.json --state s1 >bad.out 2>bad.err
rc=$?
set -e
[ $rc -eq 3 ] && grep -q 's1/journal.jsonl:1: begin: scale: 1e+300 is out of range (expected plan seconds per wall second, 0.001 to 1e+06, as --time-scale)$' bad.err ||
    { cat bad.err; fail "a journal's scale 1e300: exit $rc"; }
set +e
"$EFPLAN" apply plan.json --time-scale 0.0001 --state s9 >/dev/null 2>bad.err
rc=$?
set -e
[ $rc -eq 2 ] && grep -q -- '--time-scale: "0.0001" (expected 0.001 to 1000000)' bad.err ||
    { cat bad.err; fail "--time-scale 0.0001: exit $rc"; }
[ ! -e s9 ] || fail "--time-scale 0.0001: created the state directory"
echo "apply e2e ok"
