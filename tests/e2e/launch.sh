#!/bin/sh
# End-to-end: what the executor gives the processes it launches (local
# backend), and what it does when a launch does not fit its allocation.
# Checks:
# - every process sees the torchrun variables (PET_NNODES, PET_NODE_RANK,
#   PET_NPROC_PER_NODE, PET_MASTER_ADDR, PET_MASTER_PORT) equal to the
#   plain ones and to the attempt's GPU count in the journal, and its
#   checkpoint directory (EFPLAN_CHECKPOINT_DIR) exists;
# - a "per_gpu" job gets one process per GPU, ranks 0..n-1 (RANK,
#   LOCAL_RANK, LOCAL_WORLD_SIZE, GROUP_RANK), one rendezvous port;
# - a job on one GPU (per node) gets RANK 0 and LOCAL_RANK 0 too, so a
#   plain `python3 train.py` finds them;
# - a job whose first attempt dies of "Address already in use" is
#   launched again (journal result "retry", not a failure) on another
#   port, and finishes; apply exits 0;
# - a torchrun command that fixes --nproc-per-node to another count than
#   the allocation, and a job that reports another world size in its
#   progress file ("N world=W attempt=A"), get a "warning" record in the
#   journal and a line in their log;
# - a "per_gpu" job one of whose processes fails: the others are stopped
#   (none is left running), the attempt is failed with that process's
#   status, apply exits 4.
. "$(dirname "$0")/lib/common.sh"
: "${EFPLAN_ROOT:?}"
cleanup() {
    kill_attempts "$T"/*/run
    rm -rf "$T"
}
trap cleanup EXIT
# 60-second slots last 1 s (6 s under valgrind)
SCALE=60
if [ -n "$V" ]; then SCALE=10; fi
cd "$T"
mkdir env bin

# job.sh MODE: writes its launch environment to env/JOB.ATTEMPT.RANK, then
#   ok     rank 0 (or the one process) writes all its iterations; exit 0
#   port   attempt 1 fails as torch does when its port is taken; then ok
#   world  reports a world size one above its GPUs, waits for the executor's warning; then ok
#   fail   rank 1 exits 3 once the others wait to be stopped
cat > job.sh <<'SH'
#!/bin/sh
mode=$1
env | grep -E '^(RANK|LOCAL_RANK|LOCAL_WORLD_SIZE|GROUP_RANK|WORLD_SIZE|NNODES|NODE_RANK|NPROC_PER_NODE|MASTER_ADDR|MASTER_PORT|PET_[A-Z_]+|EFPLAN_CHECKPOINT_DIR|CUDA_VISIBLE_DEVICES)=' |
    sort > "$ENVDIR/$EFPLAN_JOB_ID.$EFPLAN_ATTEMPT.${RANK:-none}"
done_() {
    if [ "${RANK:-0}" = 0 ]; then
        echo "$EFPLAN_ITERATIONS" > "$EFPLAN_PROGRESS_FILE.tmp" &&
            mv "$EFPLAN_PROGRESS_FILE.tmp" "$EFPLAN_PROGRESS_FILE"
    fi
    exit 0
}
case $mode in
ok) done_ ;;
port)
    if [ "$EFPLAN_ATTEMPT" = 1 ]; then
        echo "RuntimeError: The server socket has failed to bind to [::]:$MASTER_PORT (errno: 98 - Address already in use)." >&2
        exit 1
    fi
    done_ ;;
world)
    echo "0 world=$((WORLD_SIZE + 1)) attempt=$EFPLAN_ATTEMPT" > "$EFPLAN_PROGRESS_FILE"
    for _ in $(seq 1 400); do
        grep -q '"ev":"warning","job":"world"' "$JOURNAL" 2>/dev/null && done_
        sleep 0.05
    done
    exit 5 ;;
fail)
    if [ "$RANK" = 1 ]; then
        # once every other process waits
        for _ in $(seq 1 400); do
            [ "$(ls "$ENVDIR"/pid.* 2>/dev/null | wc -l)" -ge $((WORLD_SIZE - 1)) ] && exit 3
            sleep 0.05
        done
        exit 3
    fi
    echo $$ > "$ENVDIR/pid.$RANK"
    while :; do sleep 1; done ;;
esac
SH
# a stand-in torchrun: writes its environment, finishes the job
cat > bin/torchrun <<'SH'
#!/bin/sh
exec sh "$JOBSH" ok
SH
chmod +x bin/torchrun

job() { # id command extra-json; $ITER iterations, $DL deadline
    cat <<JSON
 {"id": "$1", "model": "resnet50", "batch_size": 64,
  "iterations": ${ITER:-500}, "submit_time": 0, "deadline": ${DL:-3000},
  "grace_seconds": 2,
  "env": {"ENVDIR": "$T/env", "JOURNAL": "$T/s/journal.jsonl",
          "JOBSH": "$T/job.sh"}$3,
  "command": $2}
JSON
}
{
    echo '{"jobs": ['
    job pergpu "[\"sh\", \"$T/job.sh\", \"ok\"]" ', "processes": "per_gpu"'
    echo ,
    job pernode "[\"sh\", \"$T/job.sh\", \"ok\"]" ''
    echo ,
    job port "[\"sh\", \"$T/job.sh\", \"port\"]" ''
    echo ,
    job world "[\"sh\", \"$T/job.sh\", \"world\"]" ''
    echo ,
    job fixed "[\"$T/bin/torchrun\", \"--nproc-per-node\", \"3\", \"train.py\"]" ''
    echo ']}'
} > jobs.json
"$EFPLAN" plan --jobs jobs.json --cluster n1g8 --curves A100 \
    --out plan.json >/dev/null || fail "plan failed"
$V "$EFPLAN" apply plan.json --time-scale $SCALE --state s >out 2>err ||
    { rc=$?; cat err; fail "apply exited $rc"; }
grep -q 'jobs: 5 done, 0 failed, 0 not done' out || { cat out err; fail "outcome"; }
J=s/journal.jsonl

# GPUs of job $1's attempt $2, from its start record
gpus() {
    grep "\"ev\":\"start\",\"job\":\"$1\"" $J | grep "\"attempt\":$2," |
        sed 's/.*"place":\[\(.*\)\],"slot".*/\1/' | tr -cd ',g' |
        awk '{ n = gsub(/g/, ""); c = gsub(/,/, ","); print c + 2 - n }'
}
# value of $2 in environment file $1
val() { sed -n "s/^$2=//p" "$1"; }
for f in env/*; do
    case $f in */pid.*) continue ;; esac
    b=${f#env/}; id=${b%%.*}; rest=${b#*.}; a=${rest%%.*}
    [ "$(val "$f" PET_NNODES)" = "$(val "$f" NNODES)" ] || fail "$b: PET_NNODES"
    [ "$(val "$f" PET_NODE_RANK)" = "$(val "$f" NODE_RANK)" ] || fail "$b: PET_NODE_RANK"
    [ "$(val "$f" PET_NPROC_PER_NODE)" = "$(val "$f" NPROC_PER_NODE)" ] || fail "$b: PET_NPROC_PER_NODE"
    [ "$(val "$f" PET_MASTER_ADDR)" = 127.0.0.1 ] || fail "$b: PET_MASTER_ADDR"
    [ "$(val "$f" PET_MASTER_PORT)" = "$(val "$f" MASTER_PORT)" ] || fail "$b: PET_MASTER_PORT"
    [ -d "$(val "$f" EFPLAN_CHECKPOINT_DIR)" ] || fail "$b: no checkpoint directory"
    g=$(echo "$(val "$f" CUDA_VISIBLE_DEVICES)" | tr ',' '\n' | wc -l)
    [ "$(val "$f" WORLD_SIZE)" = "$g" ] || fail "$b: WORLD_SIZE vs CUDA_VISIBLE_DEVICES"
done
# per_gpu: one process per GPU, ranks 0..n-1, one port
n=$(ls env/pergpu.1.* | wc -l)
[ "$n" -ge 1 ] || fail "pergpu: no process"
[ "$(ls env/pergpu.* | sed 's/.*\.\([0-9]*\)\.[^.]*$/\1/' | sort -u)" = 1 ] ||
    fail "pergpu: more than one attempt"
[ "$(cat env/pergpu.1.* | sed -n 's/^MASTER_PORT=//p' | sort -u | wc -l)" = 1 ] ||
    fail "pergpu: processes of one attempt got different ports"
w=$(val env/pergpu.1.0 WORLD_SIZE)
[ "$n" = "$w" ] || fail "pergpu: $n processes for $w GPUs"
r=0
while [ $r -lt "$n" ]; do
    f=env/pergpu.1.$r
    [ -f "$f" ] || fail "pergpu: no process of rank $r"
    [ "$(val $f LOCAL_RANK)" = $r ] || fail "pergpu: LOCAL_RANK of rank $r"
    [ "$(val $f LOCAL_WORLD_SIZE)" = "$n" ] || fail "pergpu: LOCAL_WORLD_SIZE"
    [ "$(val $f GROUP_RANK)" = 0 ] || fail "pergpu: GROUP_RANK"
    [ "$(val $f NPROC_PER_NODE)" = "$n" ] || fail "pergpu: NPROC_PER_NODE"
    r=$((r + 1))
done
# a per-node job: RANK etc. exactly when it has one GPU
for f in env/pernode.* env/port.* env/world.*; do
    if [ "$(val "$f" NPROC_PER_NODE)" = 1 ]; then
        case $f in *.0) ;; *) fail "$f: one GPU, and no RANK 0" ;; esac
        [ "$(val "$f" LOCAL_RANK)" = 0 ] || fail "$f: LOCAL_RANK"
    else
        case $f in *.none) ;; *) fail "$f: RANK on a multi-GPU per-node job" ;; esac
    fi
done
# address in use: a retry on another port, then done
grep -q '"job":"port","log":"[^"]*","progress":-1,"result":"retry"' $J ||
    grep -q '"job":"port".*"result":"retry"' $J || fail "port: no retry record"
grep '"ev":"exit","job":"port"' $J | grep -q '"result":"failed"' &&
    fail "port: recorded as failed"
p1=$(val env/port.1.* MASTER_PORT)
p2=$(val env/port.2.* MASTER_PORT)
[ -n "$p2" ] || fail "port: no second attempt"
[ "$p1" != "$p2" ] || fail "port: the second attempt got the same port $p1"
grep -q 'address was in use' err || fail "port: no progress line about it"
# world-size warnings: reported, and fixed in a torchrun command
grep -q '"ev":"warning","job":"world","msg":"job world attempt 1 runs world size [0-9]* on an allocation of' $J ||
    fail "world: no warning record"
grep -q 'efplan: job world attempt 1 runs world size' s/jobs/world/1.log || fail "world: not in its log"
grep -q '"ev":"warning","job":"fixed","msg":"job fixed attempt 1: its torchrun command fixes --nproc-per-node 3' $J ||
    fail "fixed: no warning record"
grep -q 'efplan: attempt 1: rendezvous 127.0.0.1:' s/jobs/fixed/1.log || fail "fixed: no rendezvous line"
grep -q '"ev":"warning","job":"per' $J && fail "a warning for a job that runs its allocation"

# a per_gpu process fails: the others are stopped, the job failed, exit 4
rm -f env/*
{
    echo '{"jobs": ['
    ITER=8000 DL=600 job bad "[\"sh\", \"$T/job.sh\", \"fail\"]" \
        ', "processes": "per_gpu"'
    echo ']}'
} > jobs.json
"$EFPLAN" plan --jobs jobs.json --cluster n1g8 --curves A100 \
    --out plan.json >/dev/null || fail "plan failed"
grep -q '"gpus": \[0, 1' plan.json || fail "bad: fewer than 2 GPUs planned"
set +e
$V "$EFPLAN" apply plan.json --time-scale $SCALE --state s2 >out 2>err
rc=$?
set -e
[ $rc = 4 ] || { cat err; fail "a failed process: apply exited $rc, not 4"; }
grep -q '"code":3,"ev":"exit","job":"bad"' s2/journal.jsonl || fail "bad: not failed with exit 3"
grep -q '"ev":"stop","job":"bad"' s2/journal.jsonl &&
    fail "bad: its other processes ran on until apply stopped them"
for f in env/pid.*; do
    [ -f "$f" ] || fail "bad: no waiting process"
    pid=$(cat "$f")
    kill -0 "$pid" 2>/dev/null && fail "bad: process $pid left running"
done
echo "launch e2e ok"
