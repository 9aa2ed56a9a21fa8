#!/bin/sh
# End-to-end: no raw Unix time where a person reads (issue 36). A scripted
# session of efplan serve --backend local on the wall clock: admitted,
# rejected and lagging jobs (one slow enough to be flagged at risk), a
# cancel, refused submissions (HTTP 400: a deadline before the submit
# time, before the epoch), a drain and an undrain; then
# - every `efplan show`, `jobs` and `node list` text, the serve log and
#   every HTTP error message (as `efplan` prints it and as the JSON body
#   carries it) holds no number of 9 or 10 digits (a Unix time of
#   2001..2286), while the JSON answers still carry Unix seconds;
# - times in those texts are ISO-8601 (UTC by default), and
#   --time-zone epoch gives the client's Unix seconds back on request.
# Bounded waits (at most 900 x 0.2 s); no timing assertion.
. "$(dirname "$0")/lib/common.sh"
. "$(dirname "$0")/lib/serve.sh"
cd "$T"
cleanup() {
    serve_stop
    kill_attempts run/run
    rm -rf "$T" 2>/dev/null || { sleep 1; rm -rf "$T"; }
}
trap cleanup EXIT

SERVE_CURVES="$EFPLAN_ROOT/tests/data/loop_curves"
JOB="$EFPLAN_ROOT/tests/data/loop_job.py"
new_token ops.tok ops --operator
new_token ann.tok ann
SCALE=100
# --single-user: the stand-in jobs write into this test's private
# directory, as the service (docs/security.md)
serve_start n2g4 --backend local --single-user --run-dir run --time-scale $SCALE
export EFPLAN_SERVER="$URL"
api() { # method path [curl args]
    m=$1; p=$2; shift 2
    curl -sS --max-time 10 -X "$m" -H "Authorization: Bearer $(cat ops.tok)" \
        -H 'Content-Type: application/json' "$@" "$URL$p"
}
now() { api GET /healthz | jq -r .time; }
job() { # id iterations deadline-offset speed
    jq -cn --arg id "$1" --argjson it "$2" --argjson dl "$(( $(now) + $3 ))" \
        --arg job "$JOB" --arg ev "$T/events" --arg sp "$4" --arg sc "$SCALE" \
        '{id: $id, model: "dummy", batch_size: 64, iterations: $it,
          deadline: $dl, command: ["python3", $job, $ev, "--speed", $sp,
                                    "--scale", $sc]}'
}
sub() { "$EFPLAN" submit --token-file ann.tok --job "$1" >>human.txt 2>&1 || true; }
sub "$(job a 3000 3000 1)"
sub "$(job slow 3000 1500 0.3)"        # admitted, then lags: at risk
sub "$(job big 900000 600 1)"          # rejected: fastest finish too late
# refused (HTTP 400): a deadline before the submit time, a date before
# the epoch of the wall clock
sub "$(job past 100 -7200 1)"
sub '{"id": "x", "model": "dummy", "batch_size": 64, "iterations": 10, "deadline": 1000}'
api POST /v1/jobs -d "$(job past2 100 -7200 1)" >err400.json
jq -e '.error.status == 400' err400.json >/dev/null || fail "no 400: $(cat err400.json)"
jq -r .error.message err400.json >>human.txt
"$EFPLAN" node drain 1 --token-file ops.tok >>human.txt 2>&1 || fail "drain"
i=0
until api GET /v1/jobs/slow | jq -e .at_risk >/dev/null; do
    i=$((i + 1)); [ $i -le 900 ] || fail "slow never flagged at risk"
    sleep 0.2
done
# while it is at risk (the undrain and the cancel below give it GPUs, and
# a re-plan may then find it on time again)
"$EFPLAN" show slow --token-file ann.tok >show-slow.txt 2>&1 || fail "show slow"
cat show-slow.txt >>human.txt
api GET /v1/jobs/slow >slow.json
"$EFPLAN" node undrain 1 --token-file ops.tok >>human.txt 2>&1 || fail "undrain"
"$EFPLAN" cancel a --token-file ann.tok >>human.txt 2>&1 || fail "cancel"
for j in a big; do
    "$EFPLAN" show $j --token-file ann.tok >show-$j.txt 2>&1 || fail "show $j"
    cat show-$j.txt >>human.txt
    api GET /v1/jobs/$j >$j.json
done
"$EFPLAN" jobs --token-file ann.tok >>human.txt 2>&1 || fail "jobs"
"$EFPLAN" node list --token-file ops.tok >>human.txt 2>&1 || fail "node list"
"$EFPLAN" show nosuch --token-file ann.tok >>human.txt 2>&1 && fail "show nosuch"
serve_stop
kill_attempts run/run
cat serve.log >>human.txt

# what a person read: no 9- or 10-digit number
if grep -nE '(^|[^0-9])[0-9]{9,10}([^0-9]|$)' human.txt; then
    fail "a raw Unix time where a person reads (above)"
fi
# ... and what was read is there: the risk, the rejection, the 400s, the log
grep -q "at risk      yes: cannot end by its deadline 20[0-9-]*T[0-9:]*Z" show-slow.txt ||
    { cat show-slow.txt; fail "show slow: the risk with its deadline"; }
grep -q "fastest finish 20[0-9-]*T[0-9:]*Z" show-big.txt ||
    { cat show-big.txt; fail "show big: the reason with its time"; }
grep -q "HTTP 400: .*deadline 20[0-9-]*T[0-9:]*Z is before submit time 20[0-9-]*T[0-9:]*Z" human.txt ||
    fail "the 400 of a past deadline"
grep -q "efplan serve: re-planned at 20[0-9-]*T[0-9:]*Z (plan v" serve.log ||
    fail "the log's re-plan time"
grep -q "^    20[0-9-]*T[0-9:]*Z  submitted  decision=admitted .*planned_end=20" show-a.txt ||
    { cat show-a.txt; fail "show a: the history's detail"; }
# machines still get Unix seconds
jq -e '(.deadline | type) == "number" and .deadline > 1000000000' slow.json >/dev/null ||
    fail "JSON: deadline not Unix seconds"
jq -e '[.history[] | .at | type == "number"] | all' slow.json >/dev/null ||
    fail "JSON: history times not Unix seconds"
# and a person who asks for them gets them
serve_start n2g4
"$EFPLAN" show slow --server "$URL" --token-file ann.tok --time-zone epoch >epoch.txt ||
    fail "show --time-zone epoch"
grep -qE "^  deadline     [0-9]{10}$" epoch.txt || { cat epoch.txt; fail "--time-zone epoch"; }
echo "human_times: show, jobs, node list, the serve log and HTTP errors in ISO-8601"
