#!/bin/sh
# .ci/slurm_multi.sh: `efplan apply --backend slurm` on a real two-node
# Slurm (Debian 12's Slurm 22.05: slurmctld, two slurmd, munge), started
# here as root without systemd, cgroups or GPUs. Both nodes run on this
# machine: one slurm.conf names node1 (NodeAddr 127.0.0.1, Port 17011)
# and node2 (NodeAddr 127.0.0.2, Port 17012), each slurmd started with
# `slurmd -N nodeK`; the names need not resolve. Each node has 8 GPUs
# faked as GRES gpu on character devices (node1 /dev/tty0..7, node2
# /dev/tty8..15; ../shared/reference/ecosystem.md §1). sacct cannot be
# checked: Debian's 22.05 has no accounting storage but slurmdbd
# (accounting_storage/none|slurmdbd), so the records are scontrol's
# (MinJobAge=3600 keeps ended jobs there) and the job completion log
# (JobCompType=jobcomp/filetxt).
#
# Runs when CI=true, or as root with EFPLAN_SLURM_TEST=1; otherwise it
# says it skipped. Needs build/efplan. It
#   1. installs the packages if missing, starts munged, slurmctld and the
#      two slurmd; srun -N 2 runs one task on each node;
#   2. how Slurm numbers GPUs inside a node (README "Slurm picks the
#      GPUs"): two 4-GPU jobs get IDX 0-3 and 4-7 in submission order,
#      a 4-GPU job after a 2-GPU one gets 2-5 (not an aligned block),
#      and a job sees its IDX as CUDA_VISIBLE_DEVICES and SLURM_JOB_GPUS;
#   3. applies a hand-written plan on the 2 x 8 GPUs (--nodes names them
#      in the other order than slurm.conf; --partition, --account, --qos
#      and --sbatch-arg=--comment=...): "big" on 16 GPUs over both nodes,
#      resized to one node; "in" and "mig" on one node, where Slurm gives
#      each the other's GPUs (journal "placed", differs); "mig" migrated
#      to the other node; "in" moved inside its node by the plan, kept by
#      efplan (one attempt: Slurm picks the GPUs); "pg" with processes
#      per_gpu on both nodes (16 processes). Checks Slurm's own records of
#      every attempt (scontrol show job: name, state, nodes, GPUs per
#      node, partition, account, comment; the completion log; --qos is
#      in the sbatch line, but Slurm without accounting keeps no QOS:
#      QOS=(null)), each
#      process's launch environment (NODE_RANK = SLURM_NODEID, NNODES,
#      NPROC_PER_NODE, WORLD_SIZE, MASTER_ADDR = the NodeAddr of the node
#      with NODE_RANK 0, MASTER_PORT = PET_MASTER_PORT = the port the
#      log's "efplan: rendezvous" line names, which skipped the job's
#      port that something listened on; per_gpu: RANK, LOCAL_RANK,
#      GROUP_RANK, LOCAL_WORLD_SIZE), that every "placed" record is what
#      the process saw (CUDA_VISIBLE_DEVICES), and that state.json holds
#      where the jobs really ran;
#   4. a --partition without the plan's nodes: exit 3 naming the node,
#      nothing submitted; an sbatch that refuses a job (--mem too large):
#      exit 5 with sbatch's own message;
#   4b. efplan serve --backend slurm --partition small --sbatch-arg=...:
#      three jobs launched at once get other GPUs from Slurm than the plan
#      gave them; the loop counts them where Slurm runs them (its log, the
#      attempts and the plan of GET /v1/jobs/ID), restarts none, and
#      Slurm's records show the partition and the comment;
#   5. the PyTorch example (examples/pytorch/train.py under torchrun,
#      gloo over loopback) on two nodes, resized to one: when
#      /usr/bin/python3 imports torch and the example is there; else it
#      says it skipped that part;
#   6. stops the daemons it started (by their pid files) and removes its
#      scratch directory (EFPLAN_SLURM_KEEP=1 keeps it), on every way
#      out. Packages stay installed.
set -eu
cd "$(dirname "$0")/.."
ROOT=$(pwd)
NAME="slurm multi"
. .ci/lib/slurm.sh
slurm_prologue 16
T0=$(date +%s)

R=$(mktemp -d /tmp/efplan-slurm-multi.XXXXXX)
H=$(hostname -s)
mkdir -p "$R/etc" "$R/state" "$R/spool/node1" "$R/spool/node2" "$R/log" "$R/run"
export SLURM_CONF=$R/etc/slurm.conf
started=""
LISTEN=
stop_daemons() {
    slurm_stop_daemons "$R/run/slurmd-node1.pid" "$R/run/slurmd-node2.pid" \
        "$R/run/slurmctld.pid" "$R/run/munged.pid"
}
cleanup() {
    rc=$?
    [ -z "$LISTEN" ] || kill "$LISTEN" 2>/dev/null || true
    [ -z "${SPID:-}" ] || kill -9 "$SPID" 2>/dev/null || true
    [ $rc -eq 0 ] || [ ! -f "$R/serve.log" ] || { echo "--- serve.log"; tail -40 "$R/serve.log"; }
    if [ $rc -ne 0 ] && [ -d "$R/log" ]; then
        for f in "$R"/s*/journal.jsonl "$R"/err* "$R"/s*/jobs/*/*.log; do
            [ -f "$f" ] && { echo "--- $f"; tail -40 "$f"; }
        done
        echo "--- slurmctld.log (tail)"; tail -20 "$R/log/slurmctld.log" 2>/dev/null || true
        for n in node1 node2; do
            echo "--- slurmd-$n.log (tail)"; tail -10 "$R/log/slurmd-$n.log" 2>/dev/null || true
        done
    fi
    [ -n "$started" ] && stop_daemons
    if [ "${EFPLAN_SLURM_KEEP:-}" = 1 ]; then
        echo "slurm multi: kept $R (EFPLAN_SLURM_KEEP=1)"
    else
        rm -rf "$R"
    fi
    exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
fail() { echo "FAIL: $*"; exit 1; }
# wait_for DESCRIPTION SECONDS CONDITION: poll every 0.2 s, bounded
wait_for() {
    i=0
    while ! eval "$3"; do
        i=$((i + 1))
        [ $i -le $(($2 * 5)) ] || fail "timed out after $2 s: $1"
        sleep 0.2
    done
}

{ echo ClusterName=efplanmulti; slurm_conf_common; cat <<CONF; } > "$R/etc/slurm.conf"
JobCompType=jobcomp/filetxt
JobCompLoc=$R/log/jobcomp.txt
MinJobAge=3600
SlurmdSpoolDir=$R/spool/%n
SlurmdPidFile=$R/run/slurmd-%n.pid
SlurmdLogFile=$R/log/slurmd-%n.log
NodeName=node1 NodeHostname=$H NodeAddr=127.0.0.1 Port=17011 CPUs=16 RealMemory=1000 Gres=gpu:8 State=UNKNOWN
NodeName=node2 NodeHostname=$H NodeAddr=127.0.0.2 Port=17012 CPUs=16 RealMemory=1000 Gres=gpu:8 State=UNKNOWN
PartitionName=ci Nodes=node1,node2 Default=YES MaxTime=INFINITE State=UP
PartitionName=small Nodes=node1 MaxTime=INFINITE State=UP
CONF
cat > "$R/etc/gres.conf" <<CONF
NodeName=node1 Name=gpu File=/dev/tty[0-7]
NodeName=node2 Name=gpu File=/dev/tty[8-15]
CONF
slurm_start_munge
/usr/sbin/slurmctld -i
/usr/sbin/slurmd -N node1
/usr/sbin/slurmd -N node2
wait_for "both nodes idle: $(sinfo -N 2>&1 | tr '\n' ' ')" 30 \
    '[ "$(sinfo -h -N -p ci -o "%N %t" 2>/dev/null | tr "\n" " ")" = "node1 idle node2 idle " ]'
echo "slurm multi: Slurm $(sinfo --version) up: node1, node2 on $H, 8 faked GPUs each"

# 1. one task on each node
out=$(timeout 60 srun -N 2 --ntasks-per-node=1 sh -c 'echo "$SLURMD_NODENAME $SLURM_NODEID"' | sort)
[ "$out" = "node1 0
node2 1" ] || fail "srun -N 2: $out"
echo "slurm multi: srun -N 2 ran on node1 (SLURM_NODEID 0) and node2 (1)"

cd "$R"
# 2. how Slurm numbers the GPUs of a node: the lowest free indices
idx() { scontrol show job -d -o "$1" | grep -o 'GRES=gpu[^ ]*' | tail -1; }
sb() { sbatch --parsable -w node1 -N 1 --gres=gpu:"$1" -o "$R/idx.%j" --wrap \
    'echo "CVD=$CUDA_VISIBLE_DEVICES JOB_GPUS=$SLURM_JOB_GPUS"; sleep 30'; }
running() { [ "$(squeue -h -j "$1" -o %T)" = RUNNING ]; }
a=$(sb 4); b=$(sb 4)
wait_for "two 4-GPU jobs run" 30 'running $a && running $b && [ -s idx.$a ] && [ -s idx.$b ]'
[ "$(idx "$a")" = "GRES=gpu:4(IDX:0-3)" ] && [ "$(idx "$b")" = "GRES=gpu:4(IDX:4-7)" ] ||
    fail "two 4-GPU jobs: $(idx "$a") then $(idx "$b"), expected IDX 0-3 then 4-7"
grep -q '^CVD=4,5,6,7 JOB_GPUS=4,5,6,7$' "idx.$b" || fail "the second job saw $(cat "idx.$b")"
scancel "$a" "$b"
wait_for "the GPUs freed" 30 '[ -z "$(squeue -h -t running,completing -o %i)" ]'
a=$(sb 2); sleep 1; b=$(sb 4)
wait_for "a 2-GPU then a 4-GPU job run" 30 'running $a && running $b'
[ "$(idx "$a")" = "GRES=gpu:2(IDX:0-1)" ] && [ "$(idx "$b")" = "GRES=gpu:4(IDX:2-5)" ] ||
    fail "2 then 4 GPUs: $(idx "$a") then $(idx "$b"), expected IDX 0-1 then 2-5"
scancel "$a" "$b"
wait_for "the GPUs freed" 30 '[ -z "$(squeue -h -t running,completing -o %i)" ]'
echo "slurm multi: Slurm gives the lowest free GPU indices, in submission order (4+4: 0-3, 4-7; 2+4: 0-1, 2-5, not an aligned block); the job sees them as CUDA_VISIBLE_DEVICES and SLURM_JOB_GPUS"

# 3. the plan: 2 nodes x 8 GPUs, slots of 60 s
ENV=$R/env
mkdir -p "$ENV"
JOB=$ROOT/tests/data/rank_job.sh
PJOB() { # id gpu_seconds start
    printf '{"batch_size": 64, "deadline": null, "decision": "best_effort", "earliest_feasible_deadline": null, "gpu_seconds": %s, "id": "%s", "iterations": 1000000, "iterations_done": 0, "iterations_left": 1000000, "migrations": 0, "model": "bert", "planned_end": null, "resizes": 0, "slack": null, "start": %s, "submit_time": 0}' "$2" "$1" "$3"
}
ALL='[0, 1, 2, 3, 4, 5, 6, 7]'
cat > plan.json <<JSON
{"cluster": {"gpus_per_node": 8, "nodes": 2}, "curves": "A100", "format": "efplan-plan",
 "jobs": [$(PJOB big 1440 60), $(PJOB in 720 120), $(PJOB mig 720 120), $(PJOB pg 960 0)],
 "jobs_file": "jobs.json", "now": 0, "slot_seconds": 60,
 "slots": [
  {"allocations": [{"gpus": 16, "job": "pg", "placement": [{"gpus": $ALL, "node": 0}, {"gpus": $ALL, "node": 1}]}], "end": 60, "start": 0},
  {"allocations": [{"gpus": 16, "job": "big", "placement": [{"gpus": $ALL, "node": 0}, {"gpus": $ALL, "node": 1}]}], "end": 120, "start": 60},
  {"allocations": [{"gpus": 8, "job": "big", "placement": [{"gpus": $ALL, "node": 1}]},
                   {"gpus": 4, "job": "in", "placement": [{"gpus": [4, 5, 6, 7], "node": 0}]},
                   {"gpus": 4, "job": "mig", "placement": [{"gpus": [0, 1, 2, 3], "node": 0}]}], "end": 180, "start": 120},
  {"allocations": [{"gpus": 4, "job": "in", "placement": [{"gpus": [4, 5, 6, 7], "node": 0}]},
                   {"gpus": 4, "job": "mig", "placement": [{"gpus": [4, 5, 6, 7], "node": 1}]}], "end": 240, "start": 180},
  {"allocations": [{"gpus": 4, "job": "in", "placement": [{"gpus": [0, 1, 2, 3], "node": 0}]},
                   {"gpus": 4, "job": "mig", "placement": [{"gpus": [4, 5, 6, 7], "node": 1}]}], "end": 300, "start": 240}],
 "summary": {"admitted": 0, "best_effort": 4, "end": 300, "migrations": 2, "promised_gpu_hours": 0, "rejected": 0, "replan_fallbacks": 0, "resizes": 1, "scheduling_points": 5, "used_gpu_hours": 1.07, "utilisation": 0.6},
 "surplus": "gain", "version": 1}
JSON
QJOB() { # id [extra members]
    printf '{"id": "%s", "model": "bert", "batch_size": 64, "iterations": 1000000, "submit_time": 0, "deadline": null, "grace_seconds": 10, %s"command": ["sh", "%s", "%s"]}' "$1" "${2:-}" "$JOB" "$ENV"
}
cat > jobs.json <<JSON
{"jobs": [$(QJOB big), $(QJOB in), $(QJOB mig), $(QJOB pg '"processes": "per_gpu", ')]}
JSON
# plan node 0 is node2: the other order than slurm.conf's
printf 'node2\nnode1\n' > nodes.txt
SL="--partition ci --account efplan-ci --qos efplan-qos --sbatch-arg=--comment=efplan-multi"
"$EFPLAN" apply plan.json --backend dry-run --nodes nodes.txt $SL > dry.out
grep -q "slurm: sbatch --comment=efplan-multi --parsable --job-name=efp-[0-9a-f]*-big-1 --partition=ci --account=efplan-ci --qos=efplan-qos --nodes=2 --nodelist=node2,node1 --ntasks-per-node=1 --gres=gpu:8 " dry.out ||
    { grep 'slurm: sbatch' dry.out | head -3; fail "the dry run's sbatch line"; }
grep -q -- "--job-name=efp-[0-9a-f]*-pg-1 .*--ntasks-per-node=8 --gres=gpu:8 " dry.out ||
    fail "per_gpu: no --ntasks-per-node=8 in the dry run"
# something listens on big's rendezvous port: its first attempt takes the next
P=$(sed -n 's/^    node 0: .* MASTER_PORT=\([0-9]*\) .*EFPLAN_JOB_ID=big EFPLAN_PROGRESS_FILE=.* EFPLAN_ATTEMPT=1 .*/\1/p' dry.out | head -1)
[ -n "$P" ] || fail "no MASTER_PORT for big in the dry run"
/usr/bin/python3 -c 'import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", int(sys.argv[1]))); s.listen(1); time.sleep(600)' "$P" &
LISTEN=$!
wait_for "a listener on port $P" 10 'grep -qi ":$(printf %04X "$P") 00000000:0000 0A" /proc/net/tcp'
SCALE=12
TA=$(date +%s)
set +e
"$EFPLAN" apply plan.json --backend slurm --nodes nodes.txt $SL --time-scale $SCALE \
    --state s1 >out1 2>err1
rc=$?
set -e
TB=$(date +%s)
kill "$LISTEN" 2>/dev/null || true
LISTEN=
[ $rc -eq 0 ] || { cat err1 out1; fail "apply --backend slurm: exit $rc"; }
grep -q 'applied to its end; 6 launch(es); jobs: 0 done, 0 failed, 4 not done' out1 ||
    { cat out1 err1; fail "apply's outcome"; }
# every stop was a checkpoint: each process got the signal and exited 0
# (srun kills a step on a SIGTERM of its own: the batch script sends it
# to the tasks with scancel)
[ "$(grep -c '"ev":"stopped"' s1/journal.jsonl)" = 6 ] &&
    ! grep '"ev":"stopped"' s1/journal.jsonl | grep -v '"how":"exit 0"' ||
    fail "a stop that was not a checkpoint (exit 0)"
J=s1/journal.jsonl
starts() { grep -c "\"ev\":\"start\",\"job\":\"$1\"" "$J" || true; }
[ "$(starts big)" = 2 ] && [ "$(starts mig)" = 2 ] && [ "$(starts pg)" = 1 ] ||
    fail "launches: big $(starts big), mig $(starts mig), pg $(starts pg) (expected 2, 2, 1)"
[ "$(starts in)" = 1 ] ||
    fail "in was launched $(starts in) times: the plan's move inside its node must not restart it under Slurm"
name_of() { # plan node -> Slurm name
    sed -n "$(($1 + 1))p" nodes.txt
}
# every attempt, as Slurm recorded it
grep '"ev":"start",' "$J" | while read -r line; do
    job=$(echo "$line" | sed 's/.*"job":"\([^"]*\)".*/\1/')
    att=$(echo "$line" | sed 's/.*"attempt":\([0-9]*\).*/\1/')
    place=$(echo "$line" | sed 's/.*"place":\[\(.*\)\],"slot".*/\1/')
    # {"gpus":[...],"node":N} per node: "NAME:COUNT" sorted by name
    want=$(echo "$place" | sed 's/},{/}\n{/g' | while read -r e; do
        nd=$(echo "$e" | sed 's/.*"node":\([0-9]*\).*/\1/')
        g=$(echo "$e" | sed 's/.*"gpus":\[\([^]]*\)\].*/\1/' | tr ',' '\n' | grep -c .)
        echo "$(name_of "$nd"):$g"
    done | sort | tr '\n' ' ')
    id=$(grep "\"attempt\":$att,\"ev\":\"started\",\"handle\":\"[0-9]*\",\"job\":\"$job\"" "$J" |
         sed 's/.*"handle":"\([0-9]*\)".*/\1/')
    [ -n "$id" ] || fail "$job attempt $att: no Slurm job id in the journal"
    info=$(scontrol show job -o "$id") || fail "scontrol show job $id"
    for f in "JobName=efp-[0-9a-f]*-$job-$att " "JobState=(COMPLETED|CANCELLED) " \
             "Partition=ci " "Account=efplan-ci " "Comment=efplan-multi "; do
        echo "$info" | grep -Eq "$f" || fail "Slurm job $id ($job attempt $att): no $f in: $info"
    done
    nl=$(echo "$info" | sed 's/.* NodeList=\([^ ]*\) .*/\1/')
    g=$(echo "$info" | sed -n 's/.* TresPerNode=\(gres:\)\{0,1\}gpu:\([0-9]*\).*/\2/p')
    got=$(scontrol show hostnames "$nl" | while read -r n; do echo "$n:$g"; done | sort | tr '\n' ' ')
    [ "$got" = "$want" ] ||
        fail "$job attempt $att: planned $want, Slurm job $id ran on $got"
    awk -v id="JobId=$id " -v nl=" NodeList=$nl " -v nm="-$job-$att " \
        'index($0, id) == 1 && index($0, nl) && index($0, nm) { ok = 1 } END { exit !ok }' \
        "$R/log/jobcomp.txt" ||
        fail "Slurm job $id: not in the completion log: $(grep "^JobId=$id " "$R/log/jobcomp.txt")"
    echo "slurm multi: $job attempt $att = Slurm job $id on $got(partition ci, account and comment as given)"
done
# the processes: ranks, sizes, rendezvous
env_of() { sed -n "s/^$2=//p" "$1"; }
[ "$(ls "$ENV"/big.1.*.env | wc -l)" = 2 ] || fail "big attempt 1: $(ls "$ENV") (expected 2 processes)"
for f in "$ENV"/big.1.*.env; do
    nr=$(env_of "$f" NODE_RANK)
    [ "$nr" = "$(env_of "$f" SLURM_NODEID)" ] && [ "$nr" = "$(env_of "$f" PET_NODE_RANK)" ] ||
        fail "big.1: NODE_RANK $nr, SLURM_NODEID $(env_of "$f" SLURM_NODEID), PET_NODE_RANK $(env_of "$f" PET_NODE_RANK)"
    for v in "NNODES=2" "PET_NNODES=2" "NPROC_PER_NODE=8" "PET_NPROC_PER_NODE=8" "WORLD_SIZE=16" \
             "MASTER_ADDR=127.0.0.1" "PET_MASTER_ADDR=127.0.0.1" "CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7"; do
        grep -qx "$v" "$f" || fail "big.1 node rank $nr: no $v in $(tr '\n' ' ' < "$f")"
    done
    ! grep -q '^RANK=' "$f" || fail "big.1: RANK set for a process of 8 GPUs"
done
# rank 0 runs where the batch script does: node1, Slurm's first node, whose address is MASTER_ADDR
grep -qx SLURMD_NODENAME=node1 "$ENV"/big.1.0.-.env || fail "big.1: NODE_RANK 0 is not on node1"
port=$(sed -n 's/^efplan: rendezvous 127\.0\.0\.1:\([0-9]*\)$/\1/p' s1/jobs/big/1.log)
[ "$port" = $((P + 1)) ] ||
    fail "big.1: rendezvous port ${port:-none} (log: $(grep rendezvous s1/jobs/big/1.log)), expected $((P + 1)): $P was listened on"
for f in "$ENV"/big.1.*.env; do
    grep -qx "MASTER_PORT=$port" "$f" && grep -qx "PET_MASTER_PORT=$port" "$f" ||
        fail "big.1: MASTER_PORT $(env_of "$f" MASTER_PORT), PET_ $(env_of "$f" PET_MASTER_PORT), log $port"
done
echo "slurm multi: big on 2 nodes: NODE_RANK = SLURM_NODEID (0 on node1), NNODES 2, NPROC_PER_NODE 8, WORLD_SIZE 16, MASTER_ADDR 127.0.0.1 (node1's NodeAddr), rendezvous port $port (its port $P was taken)"
f=$(ls "$ENV"/big.2.*.env)
for v in NNODES=1 NODE_RANK=0 WORLD_SIZE=8 SLURMD_NODENAME=node1 MASTER_ADDR=127.0.0.1; do
    grep -qx "$v" "$f" || fail "big.2 (resized to node1): no $v"
done
# per_gpu: 16 processes, RANK = NODE_RANK * 8 + LOCAL_RANK
[ "$(ls "$ENV"/pg.1.*.env | wc -l)" = 16 ] || fail "pg: $(ls "$ENV"/pg.1.*.env | wc -l) processes, expected 16"
ranks=$(for f in "$ENV"/pg.1.*.env; do
    nr=$(env_of "$f" NODE_RANK); lr=$(env_of "$f" LOCAL_RANK); r=$(env_of "$f" RANK)
    [ "$r" = $((nr * 8 + lr)) ] && [ "$r" = "$(env_of "$f" SLURM_PROCID)" ] &&
        [ "$(env_of "$f" GROUP_RANK)" = "$nr" ] && [ "$nr" = "$(env_of "$f" SLURM_NODEID)" ] &&
        [ "$(env_of "$f" LOCAL_WORLD_SIZE)" = 8 ] && [ "$(env_of "$f" WORLD_SIZE)" = 16 ] &&
        [ "$(env_of "$f" PET_NODE_RANK)" = "$nr" ] ||
        fail "pg: $(tr '\n' ' ' < "$f")"
    echo "$r"
done | sort -n | tr '\n' ' ')
[ "$ranks" = "0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 " ] || fail "pg ranks: $ranks"
echo "slurm multi: pg per_gpu: 16 processes, RANK 0-15 = SLURM_PROCID, LOCAL_RANK 0-7, GROUP_RANK = NODE_RANK"
# where Slurm put them: a "placed" record per attempt, what each process saw
[ "$(grep -c '"ev":"placed"' "$J")" = 6 ] || fail "$(grep -c '"ev":"placed"' "$J") placed records, expected 6"
placed() { grep "\"attempt\":$2,.*\"ev\":\"placed\",\"job\":\"$1\"" "$J"; }
placed in 1 | grep -q '"differs":true,.*"place":\[{"gpus":\[0,1,2,3\],"node":0}\]' ||
    fail "in: $(placed in 1) (expected Slurm's 0-3 on plan node 0, not the plan's 4-7)"
placed mig 1 | grep -q '"differs":true,.*"place":\[{"gpus":\[4,5,6,7\],"node":0}\]' ||
    fail "mig 1: $(placed mig 1) (expected 4-7, not the plan's 0-3)"
placed mig 2 | grep -q '"differs":true,.*"place":\[{"gpus":\[0,1,2,3\],"node":1}\]' ||
    fail "mig 2: $(placed mig 2) (expected 0-3 on plan node 1, not the plan's 4-7)"
! placed big 1 | grep -q differs || fail "big 1: $(placed big 1)"
grep -q "in attempt 1: slurm placed it on node 0 GPUs 0,1,2,3, not the plan's node 0 GPUs 4,5,6,7" err1 ||
    { grep placed err1; fail "apply did not say that Slurm placed in elsewhere"; }
for spec in "in 1 0 0,1,2,3" "mig 1 0 4,5,6,7" "mig 2 0 0,1,2,3"; do
    set -- $spec
    grep -qx "CUDA_VISIBLE_DEVICES=$4" "$ENV/$1.$2.$3.-.env" ||
        fail "$1 attempt $2 saw $(env_of "$ENV/$1.$2.$3.-.env" CUDA_VISIBLE_DEVICES), its placed record says $4"
done
echo "slurm multi: Slurm gave in 0-3 and mig 4-7 (the plan: the other way round), mig 0-3 on node1 after its migration; journalled as placed, as the processes saw"
# the state file: where the jobs really were
for spec in 'in:[{"gpus":[0,1,2,3],"node":0}]' 'mig:[{"gpus":[0,1,2,3],"node":1}]'; do
    j=${spec%%:*}; pl=${spec#*:}
    got=$(jq -c --arg j "$j" '.jobs[] | select(.id == $j) | .placement' s1/state.json)
    [ "$got" = "$pl" ] || fail "state.json: $j at $got, expected $pl (where Slurm ran it)"
done
"$EFPLAN" plan --jobs s1/state.json --cluster n2g8 --curves A100 >replan.out 2>&1 ||
    { cat replan.out; fail "the state file does not plan again"; }
echo "slurm multi: state.json has in and mig where Slurm ran them; it plans again ($((TB - TA)) s for the apply)"

# 4. a partition without node2; sbatch's own refusal reaches the user
set +e
"$EFPLAN" apply plan.json --backend slurm --nodes nodes.txt --partition small --state s2 >out2 2>err2
rc=$?
set -e
[ $rc -eq 3 ] && grep -q 'node node2 (plan node 0) is not in partition small (its nodes: node1)' err2 ||
    { cat err2; fail "--partition small: exit $rc"; }
[ -z "$(squeue -h -o %j | grep '^efp-' || true)" ] || fail "--partition small: something was submitted"
set +e
"$EFPLAN" apply plan.json --backend slurm --nodes nodes.txt --sbatch-arg=--mem=999999 \
    --time-scale $SCALE --state s3 >out3 2>err3
rc=$?
set -e
[ $rc -eq 5 ] && grep -q 'efplan: error: slurm: sbatch failed (exit 1): sbatch: error: Memory specification can not be satisfied' err3 ||
    { cat err3; fail "sbatch --mem=999999: exit $rc"; }
echo "slurm multi: a partition without the plan's nodes: exit 3 before anything runs; sbatch's refusal: exit 5 with its message"

# 4b. the loop (efplan serve --backend slurm --partition small: node1
# alone) follows Slurm's GPUs. Three jobs launched in one tick: the plan
# gives c (a deadline: the spare GPUs' ties go to it) 4 GPUs at 0-3, the
# best-effort a and b 2 each at 4-5 and 6-7; launched in id order, Slurm
# gives a 0-1, b 2-3, c 4-7: buddy blocks all, so the loop counts them
# there, re-plans from there, and restarts none of them
LJOB=$ROOT/tests/data/loop_job.py
LC=$ROOT/tests/data/loop_curves
"$EFPLAN" token add ops --operator --db loop.db 2>/dev/null >ops.tok
chmod 600 ops.tok
SPID=
serve() { # port-file [more options]: efplan serve on loop.db, in the background
    pf=$1; shift
    "$EFPLAN" serve --db loop.db --cluster n1g8 --curves "$LC" --listen 127.0.0.1:0 \
        --port-file "$pf" --quiet "$@" >>serve.log 2>&1 &
    SPID=$!
    wait_for "serve started" 20 "[ -s $pf ]"
    U=http://127.0.0.1:$(cat "$pf")
}
api() { m=$1; p=$2; shift 2
    curl -sS --max-time 10 -X "$m" -H "Authorization: Bearer $(cat ops.tok)" "$@" "$U$p"; }
# the jobs go in while the service only plans: the loop then starts them at once
serve lport0
now=$(api GET /healthz | jq .time)
for spec in "a null 100000000" "b null 100000000" "c $((now + 200000)) 100000"; do
    set -- $spec
    body=$(jq -cn --arg id "$1" --argjson dl "$2" --argjson it "$3" --arg job "$LJOB" --arg ev "$R/lev" \
        '{id: $id, model: "sublinear", batch_size: 64, iterations: $it,
          deadline: $dl, grace_seconds: 5,
          command: ["python3", $job, $ev, "--scale", "50", "--tput", "1:1,2:1.9,4:3.6,8:6.4"]}')
    "$EFPLAN" submit --server "$U" --token-file ops.tok --job "$body" >/dev/null ||
        fail "serve: $1 not taken"
done
kill "$SPID"; wait "$SPID" || true
SPID=
# --single-user: the stand-in jobs write into this script's private
# directory, as the service (as root its jobs would run as nobody:
# docs/security.md)
serve lport --backend slurm --single-user --partition small \
    --sbatch-arg=--comment=efplan-serve --run-dir lrun --time-scale 50
places() { for j in a b c; do printf '%s:%s ' "$j" "$(api GET "/v1/jobs/$j" | jq -c '.attempts[-1].placement')"; done; }
wait_for "the loop counts a, b, c where Slurm runs them: $(places)" 60 \
    'grep -q "c: attempt 1: counted where the cluster runs it" serve.log'
grep -q "a: attempt 1: the cluster placed it on node 0 GPUs 0,1, not the plan's node 0 GPUs 4,5" serve.log &&
    grep -q "c: attempt 1: the cluster placed it on node 0 GPUs 4,5,6,7, not the plan's node 0 GPUs 0,1,2,3" serve.log ||
    { grep placed serve.log; fail "serve: Slurm's GPUs not as expected"; }
sleep 3 # a few re-plans and ticks: nothing restarts
for spec in 'a:[{"gpus":[0,1],"node":0}]' 'b:[{"gpus":[2,3],"node":0}]' 'c:[{"gpus":[4,5,6,7],"node":0}]'; do
    j=${spec%%:*}; pl=${spec#*:}
    js=$(api GET "/v1/jobs/$j")
    [ "$(echo "$js" | jq '.attempts | length')" = 1 ] ||
        fail "serve: $j was restarted: $(echo "$js" | jq -c .attempts)"
    [ "$(echo "$js" | jq -c '.attempts[0].placement')" = "$pl" ] &&
        [ "$(echo "$js" | jq -c '.placement')" = "$pl" ] ||
        fail "serve: $j: attempt $(echo "$js" | jq -c '.attempts[0].placement'), plan $(echo "$js" | jq -c .placement), Slurm $pl"
    info=$(scontrol show job -o | grep "JobName=efp-[0-9a-f]*-$j-1 ") || fail "serve: no Slurm job for $j"
    echo "$info" | grep -q "Partition=small .*Comment=efplan-serve " ||
        fail "serve: $j's Slurm job: $info"
done
kill "$SPID"; wait "$SPID" || fail "serve exited $?"
SPID=
scancel --user=root
wait_for "the loop's jobs ended" 30 '[ -z "$(squeue -h -o %i)" ]'
echo "slurm multi: serve on partition small: Slurm put a, b, c on 0-1, 2-3, 4-7 (the plan: 4-5, 6-7, 0-3); the loop counts them there, the plan follows, nothing restarted; partition and --sbatch-arg in Slurm's records"

# 5. the PyTorch example over loopback, on two nodes, then one
TRAIN=$ROOT/examples/pytorch/train.py
if [ ! -f "$TRAIN" ]; then
    echo "slurm multi: PyTorch part skipped: $TRAIN is not there"
elif ! /usr/bin/python3 -c 'import torch' 2>/dev/null; then
    echo "slurm multi: PyTorch part skipped: /usr/bin/python3 cannot import torch (apt-get install python3-torch)"
else
    cat > tplan.json <<JSON
{"cluster": {"gpus_per_node": 1, "nodes": 2}, "curves": "A100", "format": "efplan-plan",
 "jobs": [$(PJOB t 180 0)], "jobs_file": "tjobs.json", "now": 0, "slot_seconds": 60,
 "slots": [
  {"allocations": [{"gpus": 2, "job": "t", "placement": [{"gpus": [0], "node": 0}, {"gpus": [0], "node": 1}]}], "end": 60, "start": 0},
  {"allocations": [{"gpus": 1, "job": "t", "placement": [{"gpus": [0], "node": 1}]}], "end": 120, "start": 60}],
 "summary": {"admitted": 0, "best_effort": 1, "end": 120, "migrations": 0, "promised_gpu_hours": 0, "rejected": 0, "replan_fallbacks": 0, "resizes": 1, "scheduling_points": 2, "used_gpu_hours": 0.05, "utilisation": 0.75},
 "surplus": "gain", "version": 1}
JSON
    cat > tjobs.json <<JSON
{"jobs": [{"id": "t", "model": "bert", "batch_size": 64, "iterations": 1000000, "submit_time": 0,
  "deadline": null, "grace_seconds": 60,
  "command": ["/usr/bin/torchrun", "--redirects", "2", "--tee", "2", "$TRAIN",
              "--step-seconds", "0.02"]}]}
JSON
    set +e
    "$EFPLAN" apply tplan.json --backend slurm --nodes nodes.txt --time-scale 2 --state st >outt 2>errt
    rc=$?
    set -e
    [ $rc -eq 0 ] || { cat errt; tail -30 st/jobs/t/*.log; fail "PyTorch example: exit $rc"; }
    [ "$(grep -c '"ev":"start",' st/journal.jsonl)" = 2 ] || fail "PyTorch example: launches"
    # attempt 1: both ranks, one per node, in one gloo group over
    # loopback; stopped by its checkpoint signal at step N; attempt 2
    # resumed from that very step on one node
    grep -q '^step [0-9]* world 2 ' st/jobs/t/1.log ||
        { tail -20 st/jobs/t/1.log; fail "PyTorch example: attempt 1 did not train at world 2"; }
    n1=$(sed -n 's/.*"attempt":1,"ev":"stopped",.*"progress":\([0-9]*\),.*/\1/p' st/journal.jsonl)
    [ "${n1:-0}" -gt 0 ] || fail "PyTorch example: attempt 1 stopped with no progress"
    grep -q "^resume step $n1 world 1 " st/jobs/t/2.log ||
        { head -3 st/jobs/t/2.log; fail "PyTorch example: attempt 2 did not resume from step $n1"; }
    prog=$(cut -d' ' -f1 st/jobs/t/progress)
    [ "$prog" -gt "$n1" ] || fail "PyTorch example: attempt 2 made no progress past $n1"
    echo "slurm multi: the PyTorch example trained at world 2 on node1 and node2 (gloo, rendezvous $(sed -n "s/^efplan: rendezvous //p" st/jobs/t/1.log)), checkpointed at step $n1, resumed there at world 1, reached $prog"
fi

echo "slurm multi ok ($(($(date +%s) - T0)) s)"
