#!/bin/sh
# End-to-end: efplan serve --backend local runs its plan and re-plans from
# reality, so promises survive slow jobs, a crash, a drained node, a late
# submission and a kill -9 of the service.
#
# The cluster n2g4 (8 GPUs; the local backend runs every attempt on this
# host), the curve "dummy" of tests/data/loop_curves (1 iteration per
# second per GPU), slots of 60 s, the service's clock at --time-scale 100
# (a slot is 0.6 s of wall time). The jobs are tests/data/loop_job.py:
# they run at 0.6 to 0.8 of their curve's speed, checkpoint on SIGTERM,
# resume from their progress file, and log every start and end; one
# crashes once. The scenario:
#   - a, b, c (deadlines), d and f (best-effort) submitted at the start;
#     b crashes once at 30% of its work, f at 10% of it every time;
#   - e submitted once a has made progress;
#   - node 1 drained once e is admitted;
#   - the service killed with SIGKILL once the drain is re-planned, then
#     started again on the same store and run directory;
#   - the test waits (bounded) until every job has ended; then g
#     (best-effort) is submitted and cancelled once it runs: it is
#     stopped (checkpointed) and not run again.
# What must hold:
#   - no attempt ever ran while another of the same job did (the jobs'
#     lock: no "double" line), and none was launched twice for one
#     attempt number;
#   - every admitted job is done by its deadline, or was flagged at risk
#     (an "at_risk" event) before its deadline: never a silent miss;
#   - b was relaunched after its crash ("restart" event) and is done; f
#     was relaunched once (its max_restarts) and is then failed, its log
#     named;
#   - after the drain, no attempt started on node 1, and the plan runs on
#     node 0 only (its node_map);
#   - after the restart the service adopted the running attempts (its
#     log says so) instead of launching them again;
#   - efplan show lists each job's attempts; /metrics counts the loop.
# Bounded: 6 jobs, every wait a loop of at most 900 x 0.2 s (4500 under
# valgrind, whose service runs its clock 5 times slower). No timing
# assertion: what the test checks are orders of events on the service's
# own clock.
. "$(dirname "$0")/lib/common.sh"
. "$(dirname "$0")/lib/serve.sh"

cd "$T"
cleanup() {
    serve_stop
    # LOOP_LOG=FILE keeps the service's log (for benchmarks and reading)
    [ -z "${LOOP_LOG:-}" ] || cp serve.log "$LOOP_LOG" 2>/dev/null || true
    # the attempts' process groups: whatever still runs of the jobs
    kill_attempts run/run
    rm -rf "$T"
}
trap cleanup EXIT

SERVE_CURVES="$EFPLAN_ROOT/tests/data/loop_curves"
JOB="$EFPLAN_ROOT/tests/data/loop_job.py"
new_token ops.tok ops --operator
new_token ann.tok ann
# the service's clock: 100 plan seconds per wall second, 20 under
# valgrind (a slower service reacts later on the plan's clock)
SCALE=100
[ -z "$V" ] || SCALE=20
TRIES=$((900 * 100 / SCALE))
OPTS="--backend local --single-user --run-dir run --time-scale $SCALE --quiet"
serve_start n2g4 $OPTS

api() { # method path [curl args]: the body on stdout
    m=$1; p=$2; shift 2
    curl -sS --max-time 10 -X "$m" -H "Authorization: Bearer $(cat ops.tok)" \
        "$@" "$URL$p"
}
now() { api GET /healthz | jq -r .time; }
submit() { # id iterations deadline-offset|null speed [crash-at [fail-at]]
    id=$1; it=$2; dl=$3; sp=$4; cr=${5:--1}; fa=${6:--1}
    if [ "$dl" = null ]; then dls=null; else dls=$(( $(now) + dl )); fi
    body=$(jq -cn --arg id "$id" --argjson it "$it" --argjson dl "$dls" \
        --arg job "$JOB" --arg ev "$T/events" --arg sp "$sp" --arg cr "$cr" \
        --arg fa "$fa" --arg sc "$SCALE" \
        '{id: $id, model: "dummy", batch_size: 64, iterations: $it,
          deadline: $dl, grace_seconds: 5,
          command: ["python3", $job, $ev, "--speed", $sp, "--scale", $sc,
                    "--crash-at", $cr, "--fail-at", $fa]}')
    # f: a restart budget of its own
    [ "$id" != f ] || body=$(echo "$body" | jq -c '. + {max_restarts: 1}')
    # c: its first start cannot bind its rendezvous port; d reports a
    # world size one above its allocation
    [ "$id" != c ] || body=$(echo "$body" | jq -c '.command += ["--bind-fail", "1"]')
    [ "$id" != d ] || body=$(echo "$body" | jq -c '.command += ["--world-off", "1"]')
    "$EFPLAN" submit --server "$URL" --token-file ann.tok --job "$body" \
        >>submits.out 2>&1 || true
}
state() { api GET "/v1/jobs/$1" | jq -r .state; }
wait_for() { # description, shell condition
    i=0
    while ! eval "$2"; do
        i=$((i + 1))
        [ $i -le $TRIES ] || { cat serve.log; fail "timed out waiting: $1"; }
        sleep 0.2
    done
}

submit a 4000 3000 0.7
submit b 2000 2400 0.6 0.3
submit c 1500 1500 0.8
submit d 3000 null 0.7
submit f 400 null 0.7 -1 0.1
cat submits.out
grep -q "admitted: a" submits.out || fail "a not admitted"
grep -q "admitted: c" submits.out || fail "c not admitted"

# e, once a has made progress
wait_for "a runs" '[ "$(api GET /v1/jobs/a | jq .iterations_done)" -gt 300 ]'
submit e 1000 1200 0.7
tail -1 submits.out

# drain node 1 once e is decided
api POST /v1/nodes/1/drain >drain.json
jq -e '.state == "drained"' drain.json >/dev/null || fail "drain: $(cat drain.json)"
DRAIN_AT=$(now)
wait_for "the drain re-planned" \
    'api GET /v1/plan | jq -e ".node_map == [0]" >/dev/null'
# ... and the moved jobs run again
running() {
    api GET "/v1/jobs?all=1" | jq '[.jobs[] | select(.state == "running")] | length'
}
wait_for "jobs run after the drain" '[ "$(running)" -ge 2 ]'

# kill -9 the service while jobs run; start it again
kill -9 "$SRV"
wait "$SRV" 2>/dev/null || true
SRV=
running=$(grep -c '^start' events)
serve_start n2g4 $OPTS
grep -q "adopted" serve.log || { cat serve.log; fail "nothing adopted after the restart"; }

ended() { # every submitted job has ended
    for j in a b c d e f; do
        s=$(state $j)
        case $s in done|failed|rejected|cancelled) ;; *) return 1 ;; esac
    done
    return 0
}
wait_for "every job ends" ended

# g: a best-effort job cancelled while it runs is stopped (checkpointed)
submit g 100000 null 0.7
wait_for "g runs" 'grep -q "^start g " events'
"$EFPLAN" cancel g --server "$URL" --token-file ann.tok >cancel.out ||
    fail "cancel g: $(cat cancel.out)"
wait_for "g stopped" 'grep -q "^end g .* checkpoint" events'

# --- what must hold -------------------------------------------------------
! grep '^double' events || fail "two attempts of one job ran at once"
# one start per (job, attempt): no attempt launched twice
dup=$(grep '^start' events | awk '{print $2, $3}' | sort | uniq -d)
[ -z "$dup" ] || fail "attempts started twice: $dup"
for j in a b c d e f; do
    api GET "/v1/jobs/$j" >"$j.json"
done
for j in a b c e; do
    dec=$(jq -r .decision $j.json)
    [ "$dec" = admitted ] || continue
    dl=$(jq .deadline $j.json)
    st=$(jq -r .state $j.json)
    fin=$(jq '[.history[] | select(.kind == "done") | .at] | first // -1' $j.json)
    risk=$(jq '[.history[] | select(.kind == "at_risk") | .at] | first // -1' $j.json)
    if [ "$st" = done ] && [ "$fin" -le "$dl" ]; then
        echo "$j: done at $fin, deadline $dl"
    elif [ "$risk" -ge 0 ] && [ "$risk" -lt "$dl" ]; then
        echo "$j: flagged at risk at $risk before its deadline $dl ($st at $fin):" \
            "$(jq -r '[.history[] | select(.kind == "at_risk")][0].detail.reason' $j.json)"
    else
        cat serve.log
        jq . $j.json
        fail "$j: admitted, missed its deadline $dl ($st at $fin) without an at-risk flag before it"
    fi
done
jq -e '[.history[] | select(.kind == "restart")] | length >= 1' b.json \
    >/dev/null || fail "b was not relaunched after its crash"
[ "$(jq -r .state b.json)" = done ] || fail "b: $(jq -r .state b.json)"
jq -e '.attempts | length >= 2' b.json >/dev/null || fail "b: attempts not listed"
# c: relaunched on another port after "address in use", no restart spent
api GET /v1/jobs/c >c2.json
jq -e '[.history[] | select(.kind == "port_retry")] | length == 1' c2.json \
    >/dev/null || { jq .history c2.json; fail "c: no port_retry event"; }
jq -e '[.history[] | select(.kind == "restart")] | length == 0' c2.json \
    >/dev/null || fail "c: its port retry was counted as a restart"
jq -e '[.attempts[] | select(.result == "port_in_use")] | length == 1' c2.json \
    >/dev/null || { jq .attempts c2.json; fail "c: no attempt ended port_in_use"; }
# (the log of the attempt that ended port_in_use: the first that started
# the job's program, not always attempt 1 on a loaded machine)
pa=$(jq -r '[.attempts[] | select(.result == "port_in_use")][0].attempt' c2.json)
grep -q "Address already in use" "run/jobs/c/$pa.log" ||
    fail "c: the log of attempt $pa lacks the bind error"
# d: warned once per attempt about its world size
jq -e '[.history[] | select(.kind == "world_size")] | length >= 1' d.json \
    >/dev/null || { jq .history d.json; fail "d: no world_size event"; }
grep -q "efplan: job d attempt [0-9]* runs world size" run/jobs/d/*.log ||
    fail "d: no world-size line in its log"
# f fails every attempt: relaunched once (its own max_restarts 1), then
# failed with its log
api GET /v1/jobs/f >f.json
[ "$(jq -r .state f.json)" = failed ] || fail "f: $(jq -r .state f.json)"
[ "$(jq '[.attempts[] | select(.result == "failed")] | length' f.json)" = 2 ] ||
    { jq .attempts f.json; fail "f: expected 2 failed attempts"; }
jq -e '[.history[] | select(.kind == "failed")][0].detail.why | test("exit 3 .*log .*jobs/f/2[.]log")' \
    f.json >/dev/null || { jq .history f.json; fail "f: no failure with its log"; }
grep -q "failing on purpose" run/jobs/f/2.log || fail "f: its log lacks its output"
# g: stopped by its cancel, never run again
api GET /v1/jobs/g >g.json
[ "$(jq -r .state g.json)" = cancelled ] || fail "g: $(jq -r .state g.json)"
[ "$(jq '[.attempts[] | select(.state != "ended")] | length' g.json)" = 0 ] ||
    { jq .attempts g.json; fail "g: an attempt still runs after its cancel"; }
[ "$(grep -c '^start g ' events)" = "$(grep -c '^end g ' events)" ] ||
    fail "g: started more than it ended"
# after the drain nothing started on node 1
late=$(jq -s --argjson t "$DRAIN_AT" '[.[].attempts[] |
    select(.started > $t + 60) | select(.placement[] | .node == 1)] | length' \
    a.json b.json c.json d.json e.json f.json)
[ "$late" = 0 ] || fail "$late attempts started on drained node 1"
api GET /metrics | grep -q '^efplan_loop_restarts_total [1-9]' ||
    fail "metrics: no restart counted"
"$EFPLAN" show b --server "$URL" --token-file ops.tok >show_b.out ||
    fail "show b"
grep -q "^  history$" show_b.out || fail "show b: no history"
[ "$(sed -n '/^  attempts$/,$p' show_b.out | grep -c '^    [0-9]')" = \
  "$(jq '.attempts | length' b.json)" ] || { cat show_b.out; fail "show b: attempts not listed"; }
"$EFPLAN" node list --server "$URL" --token-file ops.tok | grep -q drained ||
    fail "node list does not show the drain"
serve_stop
[ "$SERVE_RC" = 0 ] || fail "serve exited $SERVE_RC"
echo "serve_loop: ok (slow jobs, a crash, a drain, a late job, a kill -9)"
