#!/bin/sh
# .ci/slurm.sh: end-to-end test of `efplan apply --backend slurm` against a
# real single-node Slurm (Debian's slurmctld, slurmd, munge), started here
# as root without systemd, cgroups or GPUs: the node's 8 GPUs are faked
# as GRES gpu backed by /dev/tty0..7 (Slurm drops File-less GPUs; see
# ../shared/reference/ecosystem.md §1).
#
# Runs when CI=true, or as root with EFPLAN_SLURM_TEST=1; otherwise it
# says it skipped. Needs build/efplan (run after `make test`). It
#   1. installs the packages if missing, starts munged, slurmctld, slurmd;
#   1b. applies a one-job plan with a state directory whose path holds a
#      quote and shell text: no text runs, the job's exit 0 is recorded;
#   2. plans the 3-job queue of tests/e2e/apply.sh on n1g8 and applies it
#      with --backend slurm; checks from Slurm's own answers (scontrol
#      show job: name, state, GPUs per node) that every attempt ran with
#      the planned GPU count, and from the job logs that each process saw
#      that many GPUs, none held twice;
#   3. applies it again, stops slurmctld mid-plan: apply fails with a
#      clear error (exit 5), the journal stays readable, a rerun while the
#      controller is down fails the same way; slurmctld restarted, a rerun
#      finishes the plan with nothing lost;
#   4. runs the closed loop (efplan serve --backend slurm): a job resized
#      when another arrives (Slurm's GPU counts as planned), the node
#      drained in Slurm (the loop marks it down, stops what runs, flags
#      the admitted jobs at risk) and resumed (both jobs finish), nothing
#      launched twice;
#   5. stops the daemons it started (by their pid files) and removes its
#      scratch directory. Packages it installed stay installed.
set -eu
cd "$(dirname "$0")/.."
ROOT=$(pwd)
NAME="slurm e2e"
. .ci/lib/slurm.sh
slurm_prologue 8

R=$(mktemp -d /tmp/efplan-slurm.XXXXXX)
H=$(hostname -s)
mkdir -p "$R/etc" "$R/state" "$R/spool" "$R/log" "$R/run"
export SLURM_CONF=$R/etc/slurm.conf
started=""
stop_daemons() {
    slurm_stop_daemons "$R/run/slurmd.pid" "$R/run/slurmctld.pid" \
        "$R/run/munged.pid"
}
SPID=
cleanup() {
    rc=$?
    # the loop's service (section 4), should a check have failed under it
    [ -z "$SPID" ] || kill -9 "$SPID" 2>/dev/null || true
    if [ $rc -ne 0 ] && [ -d "$R/log" ]; then
        for f in "$R"/s*/journal.jsonl "$R"/err*; do
            [ -f "$f" ] && { echo "--- $f"; cat "$f"; }
        done
        echo "--- slurmctld.log (tail)"; tail -20 "$R/log/slurmctld.log" 2>/dev/null || true
        echo "--- slurmd.log (tail)"; tail -20 "$R/log/slurmd.log" 2>/dev/null || true
    fi
    [ -n "$started" ] && stop_daemons
    rm -rf "$R"
    exit $rc
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }

{ echo ClusterName=efplanci; slurm_conf_common; cat <<CONF; } > "$R/etc/slurm.conf"
MinJobAge=600
SlurmdSpoolDir=$R/spool
SlurmdPidFile=$R/run/slurmd.pid
SlurmdLogFile=$R/log/slurmd.log
NodeName=$H CPUs=16 RealMemory=1000 Gres=gpu:8 State=UNKNOWN
PartitionName=ci Nodes=$H Default=YES MaxTime=INFINITE State=UP
CONF
cat > "$R/etc/gres.conf" <<CONF
NodeName=$H Name=gpu File=/dev/tty[0-7]
CONF
slurm_start_munge
/usr/sbin/slurmctld -i
/usr/sbin/slurmd
idle=""
for _ in $(seq 1 150); do
    case "$(sinfo -h -o %T 2>/dev/null)" in idle*) idle=1; break ;; esac
    sleep 0.2
done
[ -n "$idle" ] || fail "the Slurm node did not become idle: $(sinfo 2>&1)"
echo "slurm e2e: Slurm $(sinfo --version) up on $H with 8 faked GPUs"

# the queue of tests/e2e/apply.sh: resizes, a migration, completions. The
# plan migrates b inside the node (GPUs 2,3 -> 4,5) when a grows: under
# Slurm, which picks the GPUs inside a node itself, that is no restart
# (b keeps running where Slurm put it), so b starts 3 times, not 4, and
# finishes on its third start
DUMMY=$ROOT/tests/data/dummy_train.sh
cd "$R"
jobs() { # events-file
    cat <<JSON
{"jobs": [
 {"id": "a", "model": "resnet50", "batch_size": 64, "iterations": 8000,
  "submit_time": 60, "deadline": 660, "grace_seconds": 10,
  "command": ["sh", "$DUMMY", "$1", "2"]},
 {"id": "b", "model": "deepspeech2", "batch_size": 32, "iterations": 6000,
  "submit_time": 0, "deadline": 1200, "grace_seconds": 10,
  "checkpoint_signal": "SIGUSR1", "command": ["sh", "$DUMMY", "$1", "3"]},
 {"id": "c", "model": "gpt2", "batch_size": 128, "iterations": 2000,
  "submit_time": 0, "deadline": 1500, "grace_seconds": 10,
  "command": ["sh", "$DUMMY", "$1", "1"]},
 {"id": "d", "model": "deepspeech2", "batch_size": 32, "iterations": 6000,
  "submit_time": 0, "deadline": 1200, "grace_seconds": 10,
  "command": ["sh", "$DUMMY", "$1", "2"]}]}
JSON
}
jobs "$R/ev1" > jobs.json
"$EFPLAN" plan --jobs jobs.json --cluster n1g8 --curves A100 --out plan.json >/dev/null
SCALE=30

# 1b. a state directory whose path holds a quote and shell text: the batch
# script quotes it (it used to run the text and end with "Unterminated
# quoted string"); the job's exit 0 is recorded as exit 0 (bash as
# /bin/sh used to record 127)
Q="$R/night's;touch PWNED;'.state"
cat > q.json <<JSON
{"jobs": [{"id": "q", "model": "bert", "batch_size": 64, "iterations": 200,
  "submit_time": 0, "deadline": 600, "grace_seconds": 10,
  "command": ["sh", "-c", "echo ran > \"\$1\"", "q", "$R/q.ran"]}]}
JSON
"$EFPLAN" plan --jobs q.json --cluster n1g8 --curves A100 --out q-plan.json >/dev/null
set +e
"$EFPLAN" apply q-plan.json --backend slurm --time-scale $SCALE --state "$Q" >outq 2>errq
rc=$?
set -e
[ $rc -eq 0 ] || { cat errq; fail "apply with a quote in --state: exit $rc"; }
grep -q 'jobs: 1 done, 0 failed, 0 not done' outq || { cat outq errq; fail "quoted state: outcome"; }
[ -s "$R/q.ran" ] || fail "quoted state: the job did not run"
[ ! -e "$R/PWNED" ] && [ ! -e "$Q/PWNED" ] && [ ! -e PWNED ] ||
    fail "quoted state: the state path ran as shell text"
grep -q '"code":0,"ev":"exit","job":"q"' "$Q/journal.jsonl" ||
    { cat "$Q/journal.jsonl"; fail "quoted state: exit status not 0"; }
echo "slurm e2e: a state directory named $Q works"

# 2. apply on Slurm
set +e
"$EFPLAN" apply plan.json --backend slurm --time-scale $SCALE --state s1 >out1 2>err1
rc=$?
set -e
[ $rc -eq 0 ] || { cat err1; fail "apply --backend slurm: exit $rc"; }
cat err1
grep -q 'jobs: 4 done, 0 failed, 0 not done' out1 || { cat out1; fail "outcome"; }
# every attempt, as Slurm saw it: job name, state, GPUs per node
n=0
grep '"ev":"start",' s1/journal.jsonl |
    sed 's/.*"attempt":\([0-9]*\),"ev":"start","job":"\([^"]*\)","place":\[\(.*\)\],"slot".*/\2 \1 \3/' |
    while read -r job att place; do
        # place: [{"gpus":[0,1,...],"node":0}] (one node here)
        gpus=$(echo "$place" | sed 's/"node":[0-9]*//g' | grep -o '[0-9][0-9]*' |
               wc -l)
        id=$(grep "\"attempt\":$att,\"ev\":\"started\",\"handle\":\"[0-9]*\",\"job\":\"$job\"" s1/journal.jsonl |
             sed 's/.*"handle":"\([0-9]*\)".*/\1/')
        [ -n "$id" ] || fail "$job attempt $att: no Slurm job id in the journal"
        info=$(scontrol show job -o "$id") || fail "scontrol show job $id"
        echo "$info" | grep -q "JobName=efp-[0-9a-f]*-$job-$att " || fail "job $id: name ($info)"
        echo "$info" | grep -Eq "JobState=(COMPLETED|CANCELLED)" || fail "job $id: state ($info)"
        echo "$info" | grep -Eq "TresPerNode=(gres:)?gpu:$gpus( |$)" ||
            fail "job $id ($job attempt $att): planned $gpus GPUs, Slurm says: $info"
        echo "slurm e2e: $job attempt $att = Slurm job $id with gpu:$gpus"
    done
[ "$(grep -c '"ev":"start",' s1/journal.jsonl)" -eq 8 ] || fail "expected 8 launches"
[ "$(grep -c '"ev":"start","job":"b"' s1/journal.jsonl)" -eq 3 ] ||
    fail "b: the plan's move inside the node restarted it under Slurm"
# Slurm's GPUs of each running attempt are journalled ("placed"), and are
# what the process saw
grep '"ev":"placed"' s1/journal.jsonl | while read -r line; do
    job=$(echo "$line" | sed 's/.*"job":"\([^"]*\)".*/\1/')
    att=$(echo "$line" | sed 's/.*"attempt":\([0-9]*\),.*/\1/')
    g=$(echo "$line" | sed 's/.*"gpus":\[\([0-9,]*\)\].*/\1/')
    grep -q "^start $job $att $g " ev1 ||
        fail "$job attempt $att: placed on $g, the process saw $(grep "^start $job $att " ev1)"
done
[ "$(grep -c '"ev":"placed"' s1/journal.jsonl)" -ge 4 ] || fail "too few placed records"
# the processes saw as many GPUs as planned (Slurm chooses which), and no
# GPU was held by two at once
grep '^start ' ev1 | while read -r _ job att cvd world; do
    n=$(echo "$cvd" | tr ',' '\n' | grep -c .)
    [ "$n" = "$world" ] || fail "$job attempt $att saw CUDA_VISIBLE_DEVICES=$cvd for $world GPUs"
done
awk '$1 == "start" { n = split($4, g, ",");
        for (i = 1; i <= n; i++) { if (g[i] in held) bad = 1; held[g[i]] = 1 }
        gpus[$2 "." $3] = $4 }
     $1 == "end" { n = split(gpus[$2 "." $3], g, ","); for (i = 1; i <= n; i++) delete held[g[i]] }
     END { exit bad }' ev1 || fail "two processes held one GPU"

# 3. slurmctld down mid-plan: clear error, journal intact, nothing lost
jobs "$R/ev2" > jobs.json
"$EFPLAN" apply plan.json --backend slurm --time-scale $SCALE --state s2 >out2 2>err2 &
pid=$!
for _ in $(seq 1 100); do
    grep -q '"ev":"started"' s2/journal.jsonl 2>/dev/null && break
    sleep 0.1
done
sleep 1
kill "$(cat "$R/run/slurmctld.pid")"
set +e
wait $pid
rc=$?
set -e
[ $rc -eq 5 ] || { cat err2; fail "slurmctld down: exit $rc, expected 5"; }
grep -q 'efplan: error: slurm: .*failed' err2 || { cat err2; fail "no clear error"; }
grep -q 'journal .* is intact: run the same command again to resume' err2 || fail "no resume hint"
grep -q '"ev":"error"' s2/journal.jsonl || fail "error not journalled"
cp s2/journal.jsonl j2.before
set +e
"$EFPLAN" apply plan.json --backend slurm --time-scale $SCALE --state s2 >/dev/null 2>err3
rc=$?
set -e
[ $rc -eq 5 ] || { cat err3; fail "rerun with slurmctld down: exit $rc, expected 5"; }
head -c "$(wc -c < j2.before)" s2/journal.jsonl | cmp -s - j2.before || fail "journal rewritten"
# the controller back (with its saved state): the rerun finishes the plan
sleep 0.5
/usr/sbin/slurmctld
# wait until the controller answers and the node has registered again
# (sinfo marks a node that does not respond yet with '*')
for _ in $(seq 1 300); do
    st=$(sinfo -h -o %t 2>/dev/null || true)
    case $st in ''|*'*'*) sleep 0.2 ;; *) break ;; esac
done
set +e
"$EFPLAN" apply plan.json --backend slurm --time-scale $SCALE --state s2 >out4 2>err4
rc=$?
set -e
# exit 9: an admitted job missed its deadline, as the plan clock ran on
# while the controller was down (apply says which, "behind: ...")
[ $rc -eq 0 ] || [ $rc -eq 9 ] ||
    { cat err4; fail "rerun after slurmctld restart: exit $rc"; }
[ $rc -eq 0 ] || grep -q 'missed' out4 err4 ||
    { cat out4 err4; fail "exit 9 without the missed jobs listed"; }
cat err4
# the plan clock ran on while the controller was down, so the jobs may not
# have finished; nothing is lost: every job is finished or back in the
# queue with its progress, none failed, none launched twice, none of ours
# left in Slurm, and the journal closed the plan
grep -q 'jobs: [0-4] done, 0 failed, [0-4] not done' out4 || { cat out4; fail "outcome after restart"; }
for j in a b c d; do
    grep -q "\"$j\"" s2/state.json || fail "job $j missing from the state file"
done
grep -q '"failed": \[\]' s2/state.json || fail "a job failed"
dups=$(grep '^start ' ev2 | awk '{print $2, $3}' | sort | uniq -d)
[ -z "$dups" ] || fail "launched twice: $dups"
left=$(squeue -h -o '%j %T' | grep '^efp-' || true)
[ -z "$left" ] || fail "jobs left in Slurm: $left"
tail -1 s2/journal.jsonl | grep -q '"ev":"end"' || fail "journal not closed"
"$EFPLAN" plan --jobs s2/state.json --cluster n1g8 --curves A100 >replan.out 2>&1 ||
    grep -q '"jobs": \[\]' s2/state.json ||
    { cat replan.out s2/state.json; fail "the state file does not re-plan"; }
# 4. the closed loop on Slurm (efplan serve --backend slurm): a job
# resized when a second one arrives (two attempts with Slurm's GPU counts
# as planned), the node drained in Slurm (the loop sees it, stops what
# runs, flags the admitted jobs at risk), resumed (the jobs run again and
# finish), nothing launched twice
LJOB=$ROOT/tests/data/loop_job.py
LC=$ROOT/tests/data/loop_curves
"$EFPLAN" token add ops --operator --db loop.db 2>/dev/null >ops.tok
chmod 600 ops.tok
# --single-user: the stand-in jobs write into this script's private
# directory, as the service (as root its jobs would run as nobody:
# docs/security.md)
"$EFPLAN" serve --db loop.db --cluster n1g8 --curves "$LC" --backend slurm \
    --single-user --run-dir lrun --time-scale 50 --listen 127.0.0.1:0 \
    --port-file lport --quiet >serve.log 2>&1 &
SPID=$!
for _ in $(seq 1 200); do [ -s lport ] && break; sleep 0.05; done
[ -s lport ] || { cat serve.log; fail "serve --backend slurm did not start"; }
U=http://127.0.0.1:$(cat lport)
api() { m=$1; p=$2; shift 2
    curl -sS --max-time 10 -X "$m" -H "Authorization: Bearer $(cat ops.tok)" "$@" "$U$p"; }
lsubmit() { # id iterations deadline-offset speed
    now=$(api GET /healthz | jq .time)
    body=$(jq -cn --arg id "$1" --argjson it "$2" --argjson dl $((now + $3)) \
        --arg job "$LJOB" --arg ev "$R/lev" --arg sp "$4" \
        '{id: $id, model: "sublinear", batch_size: 64, iterations: $it,
          deadline: $dl, grace_seconds: 5,
          command: ["python3", $job, $ev, "--speed", $sp, "--scale", "50",
                    "--tput", "1:1,2:1.9,4:3.6,8:6.4"]}')
    "$EFPLAN" submit --server "$U" --token-file ops.tok --job "$body"
}
lwait() { # description, condition
    i=0
    while ! eval "$2"; do
        i=$((i + 1))
        [ $i -le 900 ] || { tail -30 serve.log; fail "loop on Slurm: timed out: $1"; }
        sleep 0.2
    done
}
lstate() { api GET "/v1/jobs/$1" | jq -r .state; }
lsubmit la 3000 6000 0.8 || fail "la not admitted"
lwait "la runs" '[ "$(lstate la)" = running ]'
# (a deadline that needs GPUs now: la keeps its GPUs until a promise
# needs them, docs/loop.md; lb is planned at the speed la showed)
lsubmit lb 1500 1200 0.8 || fail "lb not admitted"
lwait "la resized" '[ "$(api GET /v1/jobs/la | jq "[.attempts[].placement[].gpus | length] | unique | length")" -ge 2 ]'
# Slurm's view of each attempt of la: as many GPUs as the loop planned
api GET /v1/jobs/la | jq -r '.attempts[] | "\(.attempt) \([.placement[].gpus[]] | length)"' |
    while read -r att g; do
        info=$(scontrol show job -o | grep "JobName=efp-[0-9a-f]*-la-$att ") ||
            fail "la attempt $att: no Slurm job"
        echo "$info" | grep -Eq "TresPerNode=(gres:)?gpu:$g( |$)" ||
            fail "la attempt $att: planned $g GPUs, Slurm says: $info"
        echo "slurm e2e: loop: la attempt $att on gpu:$g"
    done
# the node drained in Slurm: the loop marks it down, stops what runs there
scontrol update nodename="$H" state=drain reason=efplan-ci
lwait "node seen down" '[ "$(api GET /v1/nodes | jq -r ".nodes[0].state")" = down ]'
lwait "jobs stopped" '[ -z "$(squeue -h -o %j -t running | grep "^efp-" || true)" ]'
for j in la lb; do
    [ "$(api GET /v1/jobs/$j | jq -r .state)" = done ] && continue
    api GET /v1/jobs/$j | jq -e '.at_risk' >/dev/null ||
        fail "$j not at risk with every node drained"
done
scontrol update nodename="$H" state=resume
lwait "node up" '[ "$(api GET /v1/nodes | jq -r ".nodes[0].state")" = up ]'
lwait "both done" '[ "$(lstate la)" = done ] && [ "$(lstate lb)" = done ]'
! grep '^double' lev || fail "loop on Slurm: two attempts of one job at once"
dups=$(grep '^start ' lev | awk '{print $2, $3}' | sort | uniq -d)
[ -z "$dups" ] || fail "loop on Slurm: launched twice: $dups"
kill "$SPID"; wait "$SPID" || fail "serve exited $?"
SPID=
echo "slurm e2e: the loop on Slurm: a resize, a drain and its resume"

echo "slurm e2e ok"
