#!/bin/sh
# dummy_train.sh EVENTS FINISH: a stand-in for a training job, for the
# efplan apply end-to-end tests.
#
# Appends "start JOB ATTEMPT CUDA_VISIBLE_DEVICES WORLD_SIZE" to EVENTS when
# it starts and "end JOB ATTEMPT HOW" just before it exits. Continues from
# the iterations in $EFPLAN_PROGRESS_FILE (its checkpoint) and adds one
# every 0.05 s. On SIGTERM or SIGUSR1 (checkpoint) it saves its progress
# and exits 0. FINISH says when it completes: from attempt FINISH on it writes
# $EFPLAN_ITERATIONS and exits 0; FINISH=fail exits 3 at once.
ev=$1
fin=$2
pf=$EFPLAN_PROGRESS_FILE
p=$(cat "$pf" 2>/dev/null || echo 0)
save() { echo "$1" > "$pf.tmp.$$" && mv "$pf.tmp.$$" "$pf"; }
echo "start $EFPLAN_JOB_ID $EFPLAN_ATTEMPT $CUDA_VISIBLE_DEVICES $WORLD_SIZE" >> "$ev"
trap 'save "$p"; echo "end $EFPLAN_JOB_ID $EFPLAN_ATTEMPT checkpoint" >> "$ev"; exit 0' TERM USR1
if [ "$fin" = fail ]; then
    echo "end $EFPLAN_JOB_ID $EFPLAN_ATTEMPT failed" >> "$ev"
    echo "dummy_train: failing on purpose" >&2
    exit 3
fi
if [ "$EFPLAN_ATTEMPT" -ge "$fin" ]; then
    sleep 0.05
    save "$EFPLAN_ITERATIONS"
    echo "end $EFPLAN_JOB_ID $EFPLAN_ATTEMPT done" >> "$ev"
    exit 0
fi
while :; do
    sleep 0.05 &
    wait $!
    p=$((p + 1))
    save "$p"
done
