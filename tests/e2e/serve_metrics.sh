#!/bin/sh
# End-to-end: what efplan serve shows at scale without a backend:
# - /metrics is accepted by Prometheus's own checker (promtool check
#   metrics, Debian's prometheus package): base units (seconds), the
#   latencies of submissions, full re-plans and points as histograms, no
#   quantile label on a gauge; the submission histogram counts them;
# - a service that only plans shows what the plan says happens now:
#   a job the plan runs now is "planned-running", one it has ended by
#   now "planned-done" (GET /v1/jobs?all=1 at a later --time-scale
#   clock), a rejected job stays "rejected" and out of the plan;
# - /healthz answers with the planning state's figures.
# Exit 77 (SKIP) when promtool is not installed: `make deps` installs it.
. "$(dirname "$0")/lib/common.sh"
. "$(dirname "$0")/lib/serve.sh"

command -v promtool >/dev/null 2>&1 || {
    echo "promtool not installed (Debian package prometheus; make deps)"
    exit 77
}
cd "$T"
cleanup() {
    if [ -n "$SRV" ]; then
        kill "$SRV" 2>/dev/null || true
        wait "$SRV" 2>/dev/null || true
    fi
    rm -rf "$T"
}
trap cleanup EXIT

new_token ops.tok ops --operator
# a clock 600 times the wall's: the plan's hours pass in seconds
serve_start n2g8 --time-scale 600
H="Authorization: Bearer $(cat ops.tok)"
J='Content-Type: application/json'

now=$(curl -s "$URL/healthz" | jq -r .time)
sub() { # id iterations deadline-offset (none: best-effort)
    if [ -n "${3:-}" ]; then dl=$((now + $3)); else dl=null; fi
    curl -s -o "$1.ans" -w '%{http_code}' -H "$H" -H "$J" \
        -d "{\"id\": \"$1\", \"model\": \"resnet50\", \"batch_size\": 64, \
\"iterations\": $2, \"deadline\": $dl}" "$URL/v1/jobs" >"$1.code"
    [ "$(cat "$1.code")" = 201 ] || { cat "$1.ans"; fail "submit $1"; }
}
sub short 2000 36000
sub long 400000 864000
sub be 3000
sub big 4000000 600
[ "$(jq -r .decision short.ans)" = admitted ] || fail "short not admitted"
[ "$(jq -r .decision be.ans)" = best_effort ] || fail "be not best-effort"
[ "$(jq -r .decision big.ans)" = rejected ] || fail "big not rejected"
jq -e '.planned_end | type == "number"' short.ans >/dev/null ||
    fail "an admitted answer has no planned_end"

# a job is released at the slot boundary at or after its submission:
# until the plan's clock reaches it, "queued" is what the plan says
i=0
while :; do
    curl -s -H "$H" "$URL/v1/jobs?all=1" >list1
    jq -r '.jobs[] | "\(.id) \(.state)"' list1 | sort >states1
    grep -q '^long planned-running$' states1 && break
    i=$((i + 1))
    [ $i -le 600 ] || { cat states1; fail "long is never planned-running"; }
    sleep 0.1
done
grep -q '^big rejected$' states1 || { cat states1; fail "big not rejected"; }

# the plan's clock runs on: short (minutes of work) ends by the plan
i=0
while :; do
    curl -s -H "$H" "$URL/v1/jobs/short" >short.view
    [ "$(jq -r .state short.view)" = planned-done ] && break
    i=$((i + 1))
    [ $i -le 600 ] || { cat short.view; fail "short never planned-done"; }
    sleep 0.1
done
[ "$(jq -r .gpus short.view)" = 0 ] || fail "a job done by the plan holds GPUs"

curl -s "$URL/healthz" >health
jq -e '.status == "ok" and (.plan_version | type == "number")' health \
    >/dev/null || { cat health; fail "/healthz"; }

curl -s "$URL/metrics" >metrics.body
promtool check metrics <metrics.body >promtool.out 2>&1 ||
    { cat promtool.out; fail "promtool rejects /metrics"; }
[ ! -s promtool.out ] || { cat promtool.out; fail "promtool lints /metrics"; }
grep -q '^# TYPE efplan_submit_latency_seconds histogram$' metrics.body ||
    fail "no submission histogram"
grep -q '^efplan_submit_latency_seconds_count 4$' metrics.body ||
    { grep submit_latency metrics.body; fail "4 submissions not counted"; }
for h in efplan_replan_seconds efplan_point_seconds; do
    grep -q "^# TYPE $h histogram\$" metrics.body || fail "no histogram $h"
done
grep -q '^efplan_promised_gpu_seconds [0-9]' metrics.body ||
    fail "no efplan_promised_gpu_seconds"
if grep -q 'quantile=' metrics.body; then fail "a quantile label"; fi
echo "ok"
