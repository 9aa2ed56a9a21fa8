#!/bin/sh
# rank_job.sh DIR: a stand-in for one process of a distributed training
# job, for .ci/slurm_multi.sh.
#
# Writes what it was launched with to DIR/JOB.ATTEMPT.NODE_RANK.RANK.env
# (RANK "-" when it has none): the launch environment efplan promises
# (NNODES ... MASTER_PORT, their PET_ twins, the per-process ranks) and
# what Slurm told it (SLURMD_NODENAME, SLURM_NODEID, SLURM_PROCID,
# SLURM_LOCALID, CUDA_VISIBLE_DEVICES, SLURM_JOB_GPUS), one VAR=VALUE a
# line, sorted. Then it runs until its checkpoint signal (SIGTERM or
# SIGUSR1): the first process (NODE_RANK 0, RANK 0 or none) counts one
# iteration every 0.1 s into $EFPLAN_PROGRESS_FILE, from what the file
# held (its checkpoint); on the signal it saves that and exits 0.
d=$1
f="$d/$EFPLAN_JOB_ID.$EFPLAN_ATTEMPT.${NODE_RANK:--}.${RANK:--}.env"
env | grep -E '^(NNODES|NODE_RANK|NPROC_PER_NODE|WORLD_SIZE|MASTER_ADDR|MASTER_PORT|PET_[A-Z_]*|RANK|LOCAL_RANK|LOCAL_WORLD_SIZE|GROUP_RANK|CUDA_VISIBLE_DEVICES|SLURM_JOB_GPUS|SLURMD_NODENAME|SLURM_NODEID|SLURM_PROCID|SLURM_LOCALID|EFPLAN_JOB_ID|EFPLAN_ATTEMPT)=' |
    sort > "$f.tmp.$$" && mv "$f.tmp.$$" "$f"
first=
[ "${NODE_RANK:-0}" = 0 ] && [ "${RANK:-0}" = 0 ] && first=1
pf=$EFPLAN_PROGRESS_FILE
p=$(cat "$pf" 2>/dev/null || echo 0)
p=${p%% *}
save() { [ -z "$first" ] || { echo "$p" > "$pf.tmp.$$" && mv "$pf.tmp.$$" "$pf"; }; }
trap 'save; exit 0' TERM USR1
while :; do
    sleep 0.1 &
    wait $!
    p=$((p + 1))
    save
done
