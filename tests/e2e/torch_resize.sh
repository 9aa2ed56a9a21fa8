#!/bin/sh
# End-to-end: a real PyTorch DDP job (examples/pytorch/train.py, gloo on
# the CPU) resized by efplan apply on the local backend, from a plan
# written here by hand on one node with 4 (fake) GPUs:
#   1. under torchrun, once per node (the job's default "processes"):
#      1 -> 2 -> 4 -> 2 processes; torchrun gets its sizes from the PET_*
#      variables the executor exports, none on its command line;
#   2. as plain python3, one process per GPU ("processes": "per_gpu"):
#      4 -> 2.
# Each run must:
# - finish with exactly its iterations (progress file, journal, summary);
# - log every step 1..N exactly once across its attempts, in order: none
#   lost, none repeated, each attempt resuming at the step the previous
#   one checkpointed;
# - run each attempt at the world size of its slot (the journal's launch,
#   the script's own "resume ... world W" and "step ... world W" lines,
#   and no world-size warning from efplan), each stopped attempt
#   checkpointing at its last step on SIGTERM and exiting 75 (recorded
#   as a stop, never a failure);
# - carry the optimizer's state: Adam's own step count equals the step at
#   every resume and on every step line;
# - end with the loss of an uninterrupted one-process run of the same
#   steps (the samples of a step are a function of the step alone).
# Skipped (exit 77, "skipped: ...": tests/run.sh says SKIP) when
# /usr/bin/python3 cannot import torch, unless EFPLAN_TORCH_TEST=1
# (make test-torch), where that fails.
# Verdicts come from the logs; timing only bounds the waits: slots of
# 10 s are long enough to start 4 processes on 2 busy cores (about 5 s
# measured), and the per-step sleep (0.05 s) keeps the job from
# finishing before its last slot (N exceeds what the sleep allows in the
# slots before it). About 2 minutes, most of it the plans' own length.
# KEEP=1 keeps the temporary directory (logs, journals) and says where.
. "$(dirname "$0")/lib/common.sh"
. "$(dirname "$0")/lib/torch.sh"
if [ -n "$TORCHRUN" ]; then
    TORCHRUN="\"$TORCHRUN\""
else
    TORCHRUN="\"$PY\", \"-m\", \"torch.distributed.run\""
fi
cleanup() {
    # stop anything a failed run left (by the pids its monitors recorded)
    kill_attempts "$T"/*/s/run
    rm -rf "$T"
}
trap cleanup EXIT
[ -n "${KEEP:-}" ] && trap - EXIT && echo "keeping $T"
cd "$T"

# the loss after N steps of one uninterrupted process: what every split
# of the same steps must end with
reference() { # N -> REF, the last step line's loss
    "$PY" "$TRAIN" --iterations "$1" --global-batch 64 \
        --checkpoint-dir "ref$1" --checkpoint-every 0 >"ref$1.log" 2>&1 ||
        { cat "ref$1.log"; fail "the reference run of $1 steps failed"; }
    REF=$(awk -v n="$1" '$1 == "step" && $2 == n { print $6 }' "ref$1.log")
    [ -n "$REF" ] || { cat "ref$1.log"; fail "the reference run of $1" \
        "steps logged no step $1"; }
}

# plan.json for job "tr" on 1 node x 4 GPUs, 10 s slots (plan time =
# wall time at --time-scale 1): one slot per size given, the last one
# LAST seconds long
plan() { # LAST SIZE...
    last=$1; shift
    t=0; slots=""; n=$#; k=0; gs=0
    for g in "$@"; do
        k=$((k + 1))
        len=10
        [ $k -eq $n ] && len=$last
        gpus=$(seq -s ', ' 0 $((g - 1)))
        slots="$slots${slots:+,
}    {\"allocations\": [{\"gpus\": $g, \"job\": \"tr\", \"placement\": [{\"gpus\": [$gpus], \"node\": 0}]}], \"end\": $((t + len)), \"start\": $t}"
        gs=$((gs + g * len))
        t=$((t + len))
    done
    cat <<JSON
{
  "cluster": {"gpus_per_node": 4, "nodes": 1},
  "curves": "A100",
  "format": "efplan-plan",
  "jobs": [
    {"batch_size": 64, "deadline": null, "decision": "best_effort", "earliest_feasible_deadline": null, "gpu_seconds": $gs, "id": "tr", "iterations": $N, "iterations_done": 0, "iterations_left": $N, "migrations": 0, "model": "resnet50", "planned_end": $t, "resizes": $((n - 1)), "slack": null, "start": 0, "submit_time": 0}
  ],
  "jobs_file": "jobs.json",
  "now": 0,
  "overhead": "fig12",
  "slot_seconds": 10,
  "slots": [
$slots
  ],
  "summary": {"admitted": 0, "best_effort": 1, "end": $t, "migrations": 0, "promised_gpu_hours": 0.000, "rejected": 0, "replan_fallbacks": 0, "resizes": $((n - 1)), "scheduling_points": $n, "used_gpu_hours": 0.000, "utilisation": 0.000000},
  "surplus": "gain",
  "version": 1
}
JSON
}

jobs() { # PROCESSES-MEMBER COMMAND-WORDS
    cat <<JSON
{"jobs": [
 {"id": "tr", "model": "resnet50", "batch_size": 64, "iterations": $N,
  "submit_time": 0, "deadline": null, "grace_seconds": 60,
  "env": {"OMP_NUM_THREADS": "1"}$1,
  "command": [$2, "$TRAIN", "--step-seconds", "0.05",
              "--checkpoint-every", "50"]}]}
JSON
}

# apply DIR: apply DIR/plan.json, bounded (the plan's length plus a
# minute); its exit status must be 0
apply() {
    (cd "$1" && timeout 240 $V "$EFPLAN" apply plan.json --backend local \
        --state s --time-scale 1 >out 2>err) ||
        { rc=$?; cat "$1/err" "$1"/s/jobs/*/*.log
          fail "$1: apply exited $rc (124: still running after 240 s)"; }
}

# the attempts of a journal that ran, in order: every launch but those
# relaunched because their rendezvous port was taken (result "retry")
attempts() { # JOURNAL
    grep '"ev":"start",' "$1" | sed 's/.*"attempt":\([0-9]*\),.*/\1/' |
        while read -r a; do
            grep '"ev":"exit",' "$1" | grep "\"attempt\":$a," |
                grep -q '"result":"retry"' || echo "$a"
        done
}

# check DIR N REFLOSS WORLD...: the run's logs tell the story above
check() {
    d=$1; n=$2; ref=$3; shift 3
    s=$d/s
    grep -q 'jobs: 1 done, 0 failed, 0 not done' "$d/out" ||
        { cat "$d/out" "$d/err"; fail "$d: the job is not done"; }
    grep -q '"result":"failed"' "$s/journal.jsonl" &&
        fail "$d: an attempt was recorded as failed"
    grep '"ev":"warning"' "$s/journal.jsonl" &&
        fail "$d: efplan warned about the job's world size"
    set -- $(attempts "$s/journal.jsonl") -- "$@"
    ran=""
    while [ "$1" != -- ]; do ran="$ran $1"; shift; done
    shift
    [ "$(echo $ran | wc -w)" -eq $# ] ||
        fail "$d: attempts$ran ran, the plan has $# slots"
    k=0; prev=0; : >"$d/steps"
    for a in $ran; do
        k=$((k + 1))
        eval "w=\${$k}"
        log=$s/jobs/tr/$a.log
        [ -f "$log" ] || fail "$d: attempt $a has no log ($log)"
        # the journal launched it on the slot's GPU count
        got=$(grep '"ev":"start",' "$s/journal.jsonl" |
            grep "\"attempt\":$a," |
            sed 's/.*"place":\[{"gpus":\[\([0-9,]*\)\].*/\1/' |
            tr ',' '\n' | wc -l)
        [ "$got" -eq "$w" ] || fail "$d: attempt $a launched on $got GPUs," \
            "the plan says $w"
        # resume: one line, at the world of the slot, where the last
        # attempt stopped, with the optimizer's step count carried
        r=$(grep '^resume ' "$log") ||
            { cat "$log"; fail "$d: attempt $a never started training" \
                "(no resume line: a 10 s slot too short for this machine?)"; }
        [ "$(echo "$r" | wc -l)" -eq 1 ] || fail "$d: attempt $a: $r"
        echo "$r" | awk -v w="$w" -v p="$prev" '
            $3 != p || $5 != w || $7 != p { exit 1 }' ||
            fail "$d: attempt $a: '$r'; expected resume step $prev world" \
                "$w opt_steps $prev"
        # its steps: at its world, Adam's own count equal to the step
        awk -v w="$w" -v a="$a" '$1 == "step" {
                if ($4 != w || $8 != $2) { print "attempt " a ": " $0; bad = 1 }
                print $2 >> "'"$d/steps"'" }
            END { exit bad }' "$log" ||
            fail "$d: a step ran at the wrong world size or without the" \
                "optimizer's state"
        last=$(awk '$1 == "step" { s = $2 } END { print s + 0 }' "$log")
        [ "$last" -gt "$prev" ] || fail "$d: attempt $a ran no step"
        if [ $k -lt $# ]; then
            grep -q "^checkpoint step $last reason SIGTERM\$" "$log" &&
                grep -q "^stopped step $last exit 75\$" "$log" ||
                { cat "$log"; fail "$d: attempt $a did not checkpoint at" \
                    "its last step $last on its signal"; }
        else
            grep -q "^done step $n\$" "$log" ||
                { cat "$log"; fail "$d: the last attempt did not finish"; }
        fi
        prev=$last
    done
    [ "$(cat "$s/jobs/tr/progress")" = "$n world=$w attempt=$a" ] ||
        fail "$d: the progress file says '$(cat "$s/jobs/tr/progress")', not" \
            "'$n world=$w attempt=$a'"
    seq 1 "$n" | cmp -s - "$d/steps" ||
        { sort -n "$d/steps" | uniq -d | head -5 | sed 's/^/repeated: /'
          seq 1 "$n" | grep -vxFf "$d/steps" | head -5 | sed 's/^/lost: /'
          fail "$d: the steps logged are not 1..$n, each once, in order"; }
    loss=$(awk -v n="$n" '$1 == "step" && $2 == n { print $6 }' "$log")
    awk -v x="$loss" -v y="$ref" 'BEGIN { d = x - y; if (d < 0) d = -d
            exit !(d <= 1e-4 * y + 1e-9) }' ||
        fail "$d: final loss $loss, an uninterrupted run ends at $ref"
    echo "$d: $n steps over worlds $*, attempts$ran; final loss $loss" \
        "(uninterrupted: $ref)"
}

# 1. torchrun, once per node: 1 -> 2 -> 4 -> 2. The sleep allows at most
# 20 steps a second, 600 in the first three slots: N = 640 ends in the
# fourth, which lasts 50 s
N=640
reference $N
mkdir torchrun
jobs "" "$TORCHRUN, \"--redirects\", \"2\", \"--tee\", \"2\", \"--log_dir\", \"$T/torchrun/tl\"" \
    > torchrun/jobs.json
plan 50 1 2 4 2 > torchrun/plan.json
apply torchrun
check torchrun $N "$REF" 1 2 4 2

# 2. one process per GPU, plain python3: 4 -> 2 (at most 200 steps in the
# first slot: N = 300 ends in the second, 30 s long)
N=300
reference $N
mkdir pergpu
jobs ', "processes": "per_gpu"' "\"$PY\"" > pergpu/jobs.json
plan 30 4 2 > pergpu/plan.json
apply pergpu
check pergpu $N "$REF" 4 2
echo "torch_resize: ok"
