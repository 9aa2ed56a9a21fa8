#!/bin/sh
# End-to-end: efplan serve --backend local against jobs that do not play
# by the executor's contract (docs/loop.md; docs/security.md, "What a job
# can and cannot reach"). On n1g4, curves tests/data/loop_curves (model
# flat, so the three share the GPUs), --time-scale 100, --single-user:
#   - bg writes its last iteration and exits 0 at once, leaving a child
#     in its process group and a daemon (setsid) running: it is done, and
#     neither is left running once it is (the monitor kills what an
#     attempt left before it records its status);
#   - ign ignores SIGTERM (its children too) and leaves the same two; it
#     is cancelled once it makes progress: killed once its grace (1 s)
#     is over, its attempt "stopped (signal 9)", never run again, and
#     nothing of it left running;
#   - junk writes garbage to its progress file: 5, then text, a negative
#     number, nan, 1e30 (read as 1: the leading digits), a number past
#     int64, a symbolic link to a file saying 900000, a directory, a
#     1 MiB number, 3 (backwards), then exits 3 (max_restarts 0): it is
#     failed at 5 iterations (no link followed, nothing past int64, no
#     step back), and the service answers throughout.
# Bounded: 3 jobs, every wait a loop of at most 300 x 0.2 s (1500 under
# valgrind), each job's own loops bounded. No timing assertion.
. "$(dirname "$0")/lib/common.sh"
. "$(dirname "$0")/lib/serve.sh"

cd "$T"
# what the jobs left, should a check fail: their pids, from their files
kill_left() {
    for f in "$T"/*.bg "$T"/*.dm; do
        [ -s "$f" ] && kill -9 "$(cat "$f")" 2>/dev/null || true
    done
    return 0
}
cleanup() {
    serve_stop
    kill_attempts run/run
    kill_left
    rm -rf "$T"
}
trap cleanup EXIT

# 1 while a process whose pid is in one of the files $@ lives (a zombie
# does not)
lives() {
    for f in "$@"; do
        [ -s "$f" ] || continue
        s=$(sed 's/.*) //' "/proc/$(cat "$f")/stat" 2>/dev/null | cut -c1)
        [ -z "$s" ] || [ "$s" = Z ] || [ "$s" = X ] || return 0
    done
    return 1
}
# kill_attempts (lib/common.sh) ends a process group whose leader's pid
# is in a pid file, under this sh too
mkdir grp
setsid sh -c 'echo "$$ 0" >grp/g.pid; exec sleep 300' &
i=0
while [ ! -s grp/g.pid ] && [ $i -lt 500 ]; do i=$((i + 1)); sleep 0.01; done
cut -d' ' -f1 grp/g.pid >grp.dm
kill_attempts grp
i=0
while lives grp.dm && [ $i -lt 100 ]; do i=$((i + 1)); sleep 0.05; done
! lives grp.dm || fail "kill_attempts left a process group running"

SERVE_CURVES="$EFPLAN_ROOT/tests/data/loop_curves"
new_token ops.tok ops --operator
new_token ann.tok ann
SCALE=100
[ -z "$V" ] || SCALE=20
TRIES=$((300 * 100 / SCALE))
serve_start n1g4 --backend local --single-user --run-dir run \
    --time-scale "$SCALE" --quiet

# job.sh: the leftovers of job NAME's attempt A, a child in its group
# ($T/NAME.A.bg) and a daemon ($T/NAME.A.dm); then it exits 0 or runs on
cat >job.sh <<'EOF'
#!/bin/sh
# job.sh DIR NAME exit|run [ignore]
d=$1; n=$2.$EFPLAN_ATTEMPT
[ "${4:-}" != ignore ] || trap '' TERM
sleep 300 &
echo $! >"$d/$n.bg"
setsid sh -c 'echo $$ >"$0"; exec sleep 300' "$d/$n.dm" &
i=0
while [ ! -s "$d/$n.dm" ] && [ $i -lt 500 ]; do i=$((i + 1)); sleep 0.01; done
pf=$EFPLAN_PROGRESS_FILE
if [ "$3" = exit ]; then
    echo "$EFPLAN_ITERATIONS" >"$pf"
    exit 0
fi
k=0
while [ $k -lt 3000 ]; do
    k=$((k + 1)); echo $((k * 10)) >"$pf.t"; mv -f "$pf.t" "$pf"; sleep 0.1
done
EOF
cat >junk.sh <<'EOF'
#!/bin/sh
# junk.sh DIR: garbage in the progress file, then exit 3
pf=$EFPLAN_PROGRESS_FILE
put() { printf '%s\n' "$1" >"$pf.t"; mv -f "$pf.t" "$pf"; sleep 0.3; }
put 5
put hello; put -500; put nan; put 1e30; put 99999999999999999999999
echo 900000 >"$1/target"; rm -f "$pf"; ln -s "$1/target" "$pf"; sleep 0.3
rm -f "$pf"; mkdir "$pf"; sleep 0.3; rmdir "$pf"
head -c 1048576 /dev/zero | tr '\0' 7 >"$pf"; sleep 0.3
put 3
: >"$1/junk.end"
exit 3
EOF

api() { # method path [curl args]: the body on stdout
    m=$1; p=$2; shift 2
    curl -sS --max-time 10 -X "$m" -H "Authorization: Bearer $(cat ops.tok)" \
        "$@" "$URL$p"
}
submit() { # id command-json [extra-json]
    body=$(jq -cn --arg id "$1" --argjson cmd "$2" \
        '{id: $id, model: "flat", batch_size: 64, iterations: 100000,
          deadline: null, grace_seconds: 1, max_restarts: 0,
          command: $cmd}')
    "$EFPLAN" submit --server "$URL" --token-file ann.tok --job "$body" \
        >>submits.out 2>&1 || { cat submits.out; fail "submit $1"; }
}
state() { api GET "/v1/jobs/$1" | jq -r .state; }
wait_for() { # description, shell condition
    i=0
    while ! eval "$2"; do
        i=$((i + 1))
        [ $i -le $TRIES ] || fail "timed out waiting: $1"
        sleep 0.2
    done
}
ended() { # every attempt of job $1 has ended
    [ "$(api GET "/v1/jobs/$1" | jq '[.attempts[] | select(.state != "ended")] | length')" = 0 ]
}

submit bg "[\"sh\", \"$T/job.sh\", \"$T\", \"bg\", \"exit\"]"
submit ign "[\"sh\", \"$T/job.sh\", \"$T\", \"ign\", \"run\", \"ignore\"]"
submit junk "[\"sh\", \"$T/junk.sh\", \"$T\"]"

# bg: done, and what it left is gone with it
wait_for "bg done" '[ "$(state bg)" = done ]'
[ -s bg.1.bg ] && [ -s bg.1.dm ] || fail "bg did not start its leftovers"
! lives bg.*.bg || fail "bg is done and its child in its group still runs"
! lives bg.*.dm || fail "bg is done and its daemon still runs"

# ign: cancelled once it runs; its checkpoint signal is ignored, so every
# stop of it (the cancel's, and a resize's before it) is a kill
wait_for "ign makes progress" \
    '[ "$(api GET /v1/jobs/ign | jq .iterations_done)" -gt 0 ]'
"$EFPLAN" cancel ign --server "$URL" --token-file ann.tok >cancel.out ||
    fail "cancel ign: $(cat cancel.out)"
CANCEL_AT=$(api GET /healthz | jq .time)
wait_for "ign stopped" 'ended ign'
ls ign.*.bg ign.*.dm >/dev/null 2>&1 || fail "ign did not start its leftovers"
api GET /v1/jobs/ign >ign.json
[ "$(jq -r .state ign.json)" = cancelled ] || fail "ign: $(jq -r .state ign.json)"
jq -e --argjson t "$CANCEL_AT" '[.attempts[] | select(.started > $t)] |
    length == 0' ign.json >/dev/null ||
    { jq .attempts ign.json; fail "ign: run again after its cancel"; }
jq -e '[.attempts[] | select(.result != "stopped" or
    (.why | test("signal 9") | not))] | length == 0' ign.json >/dev/null ||
    { jq .attempts ign.json; fail "ign: not killed once its grace was over"; }
grep -q "ign: grace of 1 s over: killed" serve.log || fail "ign: no kill logged"
! lives ign.*.bg || fail "ign was stopped and its child in its group still runs"
! lives ign.*.dm || fail "ign was stopped and its daemon still runs"

# junk: failed, at the last number it wrote that counts
wait_for "junk ends" 'ended junk && [ -e junk.end ]'
api GET /v1/jobs/junk >junk.json
[ "$(jq -r .state junk.json)" = failed ] || fail "junk: $(jq -r .state junk.json)"
[ "$(jq .iterations_done junk.json)" = 5 ] ||
    { jq . junk.json; fail "junk: garbage taken for progress"; }
api GET /healthz | jq -e '.status == "ok"' >/dev/null || fail "healthz"

serve_stop
[ "$SERVE_RC" = 0 ] || fail "serve exited $SERVE_RC"
echo "serve_hostile: ok (leftovers, SIGTERM ignored, garbage progress)"
