#!/bin/sh
# End-to-end: a real PyTorch DDP job (examples/pytorch/train.py under
# torchrun, gloo on the CPU) submitted to efplan serve --backend local,
# resized by the closed loop when a second job arrives, and finished:
# what README's "A real training job" shows.
#
# The cluster n1g4 (4 fake GPUs on this host), the curve "dummy" of
# tests/data/loop_curves (1 iteration per second per GPU), 60 s slots at
# --time-scale 10 (6 s of wall time: enough to start torchrun's workers
# on 2 busy cores).
#   - mlp (1200 iterations, a deadline far away) is submitted alone: the
#     plan gives it the cluster;
#   - once it has made progress, mlp2 (100 iterations, due in 240 s) is
#     submitted: it cannot wait for mlp to end, so the re-plan shares the
#     GPUs, and mlp is checkpointed and relaunched on fewer;
#   - both finish.
# What must hold (from the logs, not the clock):
#   - both jobs are done; no attempt failed; no world-size warning;
#   - mlp ran at two world sizes at least, each attempt at the GPU count
#     the service launched it on;
#   - mlp's steps 1..1200 are logged exactly once across its attempts,
#     each attempt resuming where the last one checkpointed, with Adam's
#     own step count carried (opt_steps = step).
# Skipped (exit 77, "skipped: ...": tests/run.sh says SKIP) when
# /usr/bin/python3 cannot import torch, unless EFPLAN_TORCH_TEST=1.
# Every wait is bounded (600 x 0.2 s).
# KEEP=1 keeps the directory and says where.
. "$(dirname "$0")/lib/common.sh"
. "$(dirname "$0")/lib/serve.sh"
. "$(dirname "$0")/lib/torch.sh"
cd "$T"
cleanup() {
    serve_stop
    kill_attempts run/run
    rm -rf "$T"
}
trap cleanup EXIT
[ -n "${KEEP:-}" ] && trap 'serve_stop' EXIT && echo "keeping $T"

SERVE_CURVES="$EFPLAN_ROOT/tests/data/loop_curves"
new_token ops.tok ops --operator
new_token ann.tok ann
SCALE=10
N=1200
serve_start n1g4 --backend local --single-user --run-dir run --time-scale $SCALE --quiet

api() { # method path: the body on stdout
    curl -sS --max-time 10 -X "$1" -H "Authorization: Bearer $(cat ops.tok)" \
        "$URL$2"
}
now() { api GET /healthz | jq -r .time; }
submit() { # id iterations deadline-offset [model]
    body=$(jq -cn --arg id "$1" --argjson it "$2" --argjson dl $(( $(now) + $3 )) \
        --arg model "${4:-sublinear}" \
        --arg tr "$TORCHRUN" --arg py "$PY" --arg train "$TRAIN" \
        --arg logs "$T/torchrun-logs" \
        '{id: $id, model: $model, batch_size: 64, iterations: $it,
          deadline: $dl, grace_seconds: 60, env: {OMP_NUM_THREADS: "1"},
          command: ((if $tr != "" then [$tr] else [$py, "-m",
                     "torch.distributed.run"] end) +
                    ["--redirects", "2", "--tee", "2", "--log_dir", $logs,
                     $train, "--step-seconds", "0.02",
                     "--checkpoint-every", "100"])}')
    "$EFPLAN" submit --server "$URL" --token-file ann.tok --job "$body" \
        >>submits.out 2>&1 || { cat submits.out; fail "submit $1 failed"; }
}
done_of() { api GET "/v1/jobs/$1" | jq -r .iterations_done; }
state() { api GET "/v1/jobs/$1" | jq -r .state; }
wait_for() { # description, shell condition
    i=0
    while ! eval "$2"; do
        i=$((i + 1))
        [ $i -le 600 ] || fail "timed out waiting: $1"
        sleep 0.2
    done
}

submit mlp $N 6000
wait_for "mlp trains" '[ "$(done_of mlp)" -gt 20 ]'
# mlp2 of another model (flat: little gain past one GPU), with no measured
# history: planned at its curve, it needs a GPU or two at once, and mlp,
# which scales better, keeps the rest: a resize. (Of mlp's own model it
# would be planned at mlp's measured speed and could need every GPU: a
# preemption, not the resize this test shows.)
submit mlp2 100 240 flat
wait_for "both done" '[ "$(state mlp)" = done ] && [ "$(state mlp2)" = done ]'
cat submits.out
"$EFPLAN" show mlp --server "$URL" --token-file ops.tok >show.out 2>&1 ||
    { cat show.out; fail "efplan show mlp failed"; }
api GET /v1/jobs/mlp >mlp.json
# efplan show lists the attempts: number, when, where, how each ended
[ "$(sed -n '/^  attempts$/,$p' show.out | grep -c '^    [0-9]')" = \
  "$(jq '.attempts | length' mlp.json)" ] || { cat show.out; fail "show: attempts not listed"; }
grep -q '^    1 .* node 0: 0,1,2,3  stopped (exit 1), [0-9]* of 1200 iterations$' show.out ||
    { cat show.out; fail "show: attempt 1 not as expected"; }

# no failure, no warning
jq -e '[.attempts[] | select(.result == "failed" or .result == "lost")] |
    length == 0' mlp.json >/dev/null || { jq .attempts mlp.json; fail "mlp: a failed attempt"; }
jq -e '[.history[] | select(.kind == "world_size")] | length == 0' mlp.json \
    >/dev/null || fail "mlp: efplan warned about its world size"
# its attempts that trained, in order, with their GPU counts
jq -r '.attempts[] | select(.result != "port_in_use") |
    "\(.attempt) \([.placement[].gpus | length] | add)"' mlp.json >attempts
worlds=$(awk '{print $2}' attempts | sort -u | wc -l)
[ "$worlds" -ge 2 ] || { cat attempts; fail "mlp was never resized"; }
prev=0; : >steps
while read -r a g; do
    log=run/jobs/mlp/$a.log
    [ -f "$log" ] || fail "mlp attempt $a: no log"
    r=$(grep '^resume ' "$log") || { cat "$log"; fail "mlp attempt $a never trained"; }
    echo "$r" | awk -v w="$g" -v p="$prev" '$3 != p || $5 != w || $7 != p { exit 1 }' ||
        fail "mlp attempt $a: '$r'; expected resume step $prev world $g opt_steps $prev"
    awk -v w="$g" -v a="$a" '$1 == "step" {
            if ($4 != w || $8 != $2) { print "attempt " a ": " $0; bad = 1 }
            print $2 >> "steps" }
        END { exit bad }' "$log" || fail "mlp: a step at the wrong world or without its optimizer state"
    prev=$(awk '$1 == "step" { s = $2 } END { print s + 0 }' "$log")
done <attempts
seq 1 $N | cmp -s - steps ||
    { sort -n steps | uniq -d | head -5 | sed 's/^/repeated: /'
      seq 1 $N | grep -vxFf steps | head -5 | sed 's/^/lost: /'
      fail "mlp: the steps logged are not 1..$N, each once, in order"; }
grep -q "^done step $N\$" "run/jobs/mlp/$(tail -1 attempts | cut -d' ' -f1).log" ||
    fail "mlp: its last attempt did not finish"
echo "torch_serve: mlp ran $(wc -l <attempts) attempts on $(awk '{printf "%s%s", s, $2; s=" -> "}' attempts) GPUs, $N steps once each; mlp2 done"
