#!/bin/sh
# End-to-end: efplan serve's HTTP protocol and bad input, with curl:
# - 400: malformed JSON (line:col), an unknown key (named), each member
#   only the server sets (user, submit_time, iterations_done,
#   samples_done, placement: path names it), an id with a control
#   character, a bad query parameter, a drain's body (its path names the
#   member at fault); 413: a body over SVC_BODY_MAX
#   (256 KiB; exactly 256 KiB is read), also with an explicit
#   Content-Length; 404 (unknown route), 405 (with Allow), 415, 401 (no
#   token, not Bearer, unknown, revoked: at once), 403 (another user's
#   job, not listed for them), 409 (an id another user holds; the same id
#   with another body); a retry answers 200 with the first answer;
# - every error body is JSON whose error.status is the HTTP status;
# - a slow client (one byte a second, --request-timeout 3) gets 408 (JSON)
#   closed connection, and requests made meanwhile are answered first
#   (order of completion only, no durations);
# - service/api.json is the daemon's API: each route's method and path
#   does not answer 404/405, and every other method on its path is 405
#   with the route's methods in Allow;
# - /metrics has the documented families; GET /v1/queue is a queue
#   efplan validate and efplan plan read, and planning it offline gives
#   the service's plan (GET /v1/plan, whose X-Efplan-Plan-Version is the
#   plan version); efplan apply --backend dry-run reads that plan;
# - SIGTERM stops the daemon with exit 0; the store reopens with the same
#   plan version and plan; a non-loopback --listen without TLS is exit 2
#   (the message says TLS), --insecure-listen lets it listen (stopped at
#   once).
# No timing assertions: waits are bounded loops for a condition.
. "$(dirname "$0")/lib/common.sh"
. "$(dirname "$0")/lib/serve.sh"

cd "$T"
SLOW=
cleanup() {
    [ -n "$SLOW" ] && kill "$SLOW" 2>/dev/null
    if [ -n "$SRV" ]; then
        kill "$SRV" 2>/dev/null || true
        wait "$SRV" 2>/dev/null || true
    fi
    rm -rf "$T"
}
trap cleanup EXIT

have_py=
command -v python3 >/dev/null 2>&1 && have_py=1

new_token alice.tok alice
new_token bob.tok bob
new_token carol.tok carol
new_token ops.tok ops --operator

start() { serve_start n8g8 "$@"; }
start --request-timeout 3

JSON='Content-Type: application/json'
HA="Authorization: Bearer $(cat alice.tok)"
HB="Authorization: Bearer $(cat bob.tok)"
HC="Authorization: Bearer $(cat carol.tok)"
HO="Authorization: Bearer $(cat ops.tok)"

# req NAME STATUS curl-arguments...: NAME.body, NAME.hdr; the status must
# be STATUS, and an error's body JSON with error.status = STATUS
req() {
    name=$1 want=$2; shift 2
    code=$(curl -s -o "$name.body" -D "$name.hdr" -w '%{http_code}' \
        --max-time 20 "$@" || true)
    [ "$code" = "$want" ] ||
        { cat "$name.body" 2>/dev/null; fail "$name: HTTP $code, expected $want"; }
    [ "$want" -lt 400 ] || err_ok "$name.body" "$want"
}
err_ok() { # file, status: an error body (parsed as JSON at the end)
    grep -q "^{\"error\":{.*\"status\":$2}}$" "$1" ||
        fail "$1: not an error body with status $2: $(cat "$1")"
    echo "$1 $2" >>errors.list
}
errors_parse() { # every error body is JSON, error.status its status
    [ -n "$have_py" ] || return 0
    python3 -c 'import json, sys
n = 0
for line in open("errors.list"):
    f, st = line.split()
    d = json.load(open(f))
    e = d["error"]
    assert set(d) == {"error"}, (f, d)
    assert e["status"] == int(st), (f, d)
    assert isinstance(e["message"], str) and e["message"], (f, d)
    assert set(e) <= {"status", "message", "path"}, (f, d)
    n += 1
print("serve_http: %d error bodies parsed" % n)' ||
        fail "an error body is not the documented JSON"
}
json_ok() { # file, python expression over d
    if [ -n "$have_py" ]; then
        python3 -c "import json,sys; d=json.load(open(sys.argv[1])); \
assert $2, d" "$1" || fail "$1: not JSON with $2"
    fi
}
has() { # file, fixed text
    grep -qF -- "$2" "$1" || fail "$1: no \"$2\" in: $(cat "$1")"
}
post() { # name status auth-header body
    req "$1" "$2" -H "$JSON" -H "$3" --data-binary "$4" "$URL/v1/jobs"
}

NOW=$(date +%s)
DL=$((NOW + 7200))
job() { # id [extra members]
    printf '{"id": "%s", "model": "resnet50", "batch_size": 64, ' "$1"
    printf '"iterations": 2000, "deadline": %s%s}' "$DL" "${2:-}"
}

# ---- submissions that work, and retries --------------------------------------
post a1 201 "$HA" "$(job a1)"
json_ok a1.body 'd["id"] == "a1" and d["decision"] == "admitted"'
post a1r 200 "$HA" "$(job a1)"
cmp -s a1.body a1r.body || fail "the retry's answer is not the first answer"
post b1 201 "$HB" "$(job b1)"
post c1 201 "$HC" "$(job c1)"
post del1 201 "$HO" "$(job del1)"
# 409: an id another user holds; the same id with another body
post a1_by_bob 409 "$HB" "$(job a1)"
post a1_other 409 "$HA" "$(job a1 | sed 's/2000/2001/')"

# ---- 400 ------------------------------------------------------------------------
post bad_json 400 "$HA" '{"id": "x", '
grep -q '"message":"[^"]*:[0-9][0-9]*:[0-9][0-9]*: ' bad_json.body ||
    fail "malformed JSON: no line:col in $(cat bad_json.body)"
post bad_key 400 "$HA" "$(job x ', "modle": "vgg16"')"
has bad_key.body 'unknown key \"modle\"'
for k in user submit_time iterations_done samples_done placement; do
    case $k in
    user) v='"bob"' ;; placement) v='[]' ;; *) v=0 ;;
    esac
    post "srv_$k" 400 "$HA" "$(job x ", \"$k\": $v")"
    has "srv_$k.body" "\"path\":\"$k\""
done
post ctl_id 400 "$HA" "$(job 'x\u0001y')"
has ctl_id.body '"path":"id"'
has ctl_id.body 'control character'
post not_obj 400 "$HA" '[1, 2]'
post empty 400 "$HA" ''
req bad_query 400 -H "$HA" "$URL/v1/jobs?bogus=1"
has bad_query.body '"path":"bogus"'
# a drain's body: the path names the member at fault (none for bad
# JSON)
req drain_key 400 -X POST -H "$JSON" -H "$HO" --data-binary '{"why": "x"}' \
    "$URL/v1/nodes/1/drain"
has drain_key.body '"path":"why"'
has drain_key.body 'unknown key \"why\"'
req drain_reason 400 -X POST -H "$JSON" -H "$HO" --data-binary '{"reason": 1}' \
    "$URL/v1/nodes/1/drain"
has drain_reason.body '"path":"reason"'
req drain_json 400 -X POST -H "$JSON" -H "$HO" --data-binary '{"reason"' \
    "$URL/v1/nodes/1/drain"
grep -q '"path"' drain_json.body && fail "bad JSON in a drain: a path in $(cat drain_json.body)"
req bad_state 400 -H "$HA" "$URL/v1/jobs?state=weird"

# ---- 413: the body limit, SVC_BODY_MAX = 262144 bytes ------------------------
pad() { # file size: a job padded with spaces to exactly size bytes
    job "$1" >"$1.json"
    n=$(($2 - $(wc -c <"$1.json")))
    head -c "$n" /dev/zero | tr '\0' ' ' >>"$1.json"
    [ "$(wc -c <"$1.json")" -eq "$2" ] || fail "pad $1 $2"
}
pad at_max 262144
req at_max 201 -H "$JSON" -H "$HA" --data-binary @at_max.json "$URL/v1/jobs"
pad over_max 262145
req over_max 413 -H "$JSON" -H "$HA" --data-binary @over_max.json \
    "$URL/v1/jobs"
req over_max_cl 413 -H "$JSON" -H "$HA" -H 'Content-Length: 262145' \
    -H 'Expect:' --data-binary @over_max.json "$URL/v1/jobs"
pad big 1048576
code=$(curl -s -o big.body -w '%{http_code} %{size_upload}' --max-time 20 \
    -H "$JSON" -H "$HA" -H 'Expect: 100-continue' --data-binary @big.json \
    "$URL/v1/jobs" || true)
[ "${code% *}" = 413 ] || fail "1 MiB body: HTTP $code, expected 413"
err_ok big.body 413
# the daemon says it refuses a declared length over the limit before
# reading (http.c): then no 100 Continue and the body is not sent
[ "${code#* }" -eq 0 ] ||
    fail "Content-Length 1048576 with Expect: 100-continue: 413 only after" \
        "reading the body (curl sent ${code#* } bytes)"

# ---- 404, 405, 415 ------------------------------------------------------------
req no_route 404 "$URL/nope"
req no_route2 404 -H "$HA" "$URL/v1/jobsx"
req no_id 404 -H "$HA" "$URL/v1/jobs/"
req put_jobs 405 -X PUT -H "$HA" "$URL/v1/jobs"
grep -qi '^Allow: POST, GET' put_jobs.hdr || fail "405 without Allow: POST, GET"
req post_health 405 -X POST "$URL/healthz"
grep -qi '^Allow: GET' post_health.hdr || fail "405 without Allow: GET"
req text_plain 415 -H 'Content-Type: text/plain' -H "$HA" \
    --data-binary "$(job t1)" "$URL/v1/jobs"
req form 415 -H "$HA" -d "$(job t1)" "$URL/v1/jobs"

# ---- 401: no token, not Bearer, unknown, revoked --------------------------------
req no_tok 401 -H "$JSON" --data-binary "$(job t1)" "$URL/v1/jobs"
grep -qi '^WWW-Authenticate: Bearer' no_tok.hdr || fail "401 without WWW-Authenticate"
req basic 401 -H 'Authorization: Basic eDp5' "$URL/v1/jobs"
req unknown_tok 401 -H "Authorization: Bearer efp_aaaaaaaaaa_$(printf 'x%.0s' $(seq 43))" \
    "$URL/v1/jobs"
req carol_ok 200 -H "$HC" "$URL/v1/jobs"
"$EFPLAN" token revoke carol --db db.sqlite >revoke.out 2>&1 ||
    { cat revoke.out; fail "token revoke carol failed"; }
req carol_revoked 401 -H "$HC" "$URL/v1/jobs"
req carol_revoked_show 401 -H "$HC" "$URL/v1/jobs/c1"

# ---- 403: another user's job ------------------------------------------------------
req a_shows_b1 403 -H "$HA" "$URL/v1/jobs/b1"
req a_cancels_b1 403 -X DELETE -H "$HA" "$URL/v1/jobs/b1"
req a_all 403 -H "$HA" "$URL/v1/jobs?all=1"
req a_list 200 -H "$HA" "$URL/v1/jobs"
has a_list.body '"id":"a1"'
grep -q '"id":"b1"' a_list.body && fail "alice's GET /v1/jobs lists bob's b1"
grep -q '"id":"c1"' a_list.body && fail "alice's GET /v1/jobs lists carol's c1"
req b1_still 200 -H "$HB" "$URL/v1/jobs/b1"
# (not cancelled by alice's DELETE: queued until the slot boundary after
# its submission, planned-running from there on this plan-only service,
# whose clock is the wall clock; which of the two depends on the second
# the test runs at, not on the service)
json_ok b1_still.body 'd["state"] in ("queued", "planned-running") and d["owner"] == "bob"'

# ---- a slow client: one byte a second, --request-timeout 3 ---------------------
rm -f slow.done
(
    (for c in '{' '"' 'i' 'd' '"' ':' ' ' '"'; do
        printf '%s' "$c"; sleep 1
    done) | curl -s -o slow.body -w '%{http_code}' --max-time 15 \
        -H "$JSON" -H "$HA" -H 'Expect:' -X POST -T - "$URL/v1/jobs" \
        >slow.code 2>/dev/null || true
    touch slow.done
) &
SLOW=$!
# once the daemon has the slow request's headers (its connection is
# open), others are answered meanwhile
sleep 1
req during_health 200 "$URL/healthz"
[ -e slow.done ] && fail "the slow client finished before /healthz was answered"
post during_post 201 "$HB" "$(job b2)"
[ -e slow.done ] && fail "the slow client finished before a POST was answered"
wait "$SLOW" || true
SLOW=
code=$(cat slow.code)
[ "$code" = 408 ] ||
    fail "the slow client got HTTP $code (expected 408, with its JSON body)"
err_ok slow.body 408
grep -q 'POST /v1/jobs 408 alice .*(slow client)' serve.log ||
    fail "the 408 is not in the log"

# ---- service/api.json lists the daemon's routes ----------------------------------
grep -o '"method": "[A-Z]*", "path": "[^"]*"' "$EFPLAN_ROOT/service/api.json" |
    sed 's/"method": "\([A-Z]*\)", "path": "\([^"]*\)"/\1 \2/' >routes
nr=$(grep -c '"method"' "$EFPLAN_ROOT/service/api.json")
[ "$nr" -gt 0 ] && [ "$(wc -l <routes)" -eq "$nr" ] ||
    fail "service/api.json: $nr routes, $(wc -l <routes) read"
k=0
while read -r m p; do
    k=$((k + 1))
    path=$(echo "$p" | sed 's/{id}/a1/; s/{node}/1/')
    [ "$m $p" = "DELETE /v1/jobs/{id}" ] && path=/v1/jobs/del1
    # draining needs the loop (--backend), which this daemon runs without
    want=2
    case $p in /v1/nodes/*) want=409 ;; esac
    set -- -X "$m" -H "$HO"
    [ "$m" = POST ] && [ "$p" = /v1/jobs ] &&
        set -- "$@" -H "$JSON" --data-binary "$(job route1)"
    code=$(curl -s -o "route$k.body" -w '%{http_code}' --max-time 20 "$@" \
        "$URL$path" || true)
    case $want:$code in
    2:2??|409:409) ;;
    *) cat "route$k.body"; fail "api.json route $m $p: HTTP $code" ;;
    esac
    allowed=$(awk -v p="$p" '$2 == p { print $1 }' routes | sort | tr '\n' ' ')
    for x in GET POST PUT DELETE PATCH; do
        case " $allowed" in *" $x "*) continue ;; esac
        req "route$k.$x" 405 -X "$x" -H "$HO" "$URL$path"
        for a in $allowed; do
            grep -i '^Allow:' "route$k.$x.hdr" | grep -q "$a" ||
                fail "$x $path: 405 whose Allow lacks $a"
        done
    done
done <routes

# ---- /metrics -------------------------------------------------------------------
req metrics 200 "$URL/metrics"
for f in efplan_submissions_total efplan_jobs efplan_promised_gpu_seconds; do
    grep -q "^# TYPE $f " metrics.body || fail "/metrics: no family $f"
    grep -q "^$f[{ ]" metrics.body || fail "/metrics: no sample of $f"
done
grep -q '^# TYPE efplan_submit_latency_seconds histogram$' metrics.body ||
    fail "/metrics: efplan_submit_latency_seconds is not a histogram"
grep -q '^efplan_submit_latency_seconds_bucket{le="+Inf"} [0-9]' metrics.body ||
    fail "/metrics: no +Inf bucket"
grep -q '^efplan_submit_latency_seconds_count [1-9]' metrics.body ||
    fail "/metrics: no submission counted"
grep -q '^efplan_submissions_total{decision="admitted"} [1-9]' metrics.body ||
    fail "/metrics: no admitted submission counted"

# ---- /v1/queue, /v1/plan: offline planning of what the service holds --------------
req queue 200 -H "$HO" "$URL/v1/queue"
cp queue.body queue.json
"$EFPLAN" validate --jobs queue.json --cluster n8g8 --curves A100 \
    >validate.out 2>&1 || { cat validate.out; fail "validate of /v1/queue"; }
req plan 200 -H "$HA" "$URL/v1/plan"
cp plan.body svc_plan.json
pv=$(sed -n 's/^X-Efplan-Plan-Version: *\([0-9]*\).*/\1/ip' plan.hdr)
[ -n "$pv" ] || fail "GET /v1/plan: no X-Efplan-Plan-Version"
req health 200 "$URL/healthz"
has health.body "\"plan_version\":$pv"
pnow=$(sed -n 's/^ *"now": *\([0-9]*\).*/\1/p' svc_plan.json | head -1)
[ -n "$pnow" ] || fail "the service's plan has no \"now\""
"$EFPLAN" plan --jobs queue.json --cluster n8g8 --curves A100 --now "$pnow" \
    --out off_plan.json >offline.out 2>&1 ||
    { cat offline.out; fail "efplan plan of /v1/queue failed"; }
if [ -n "$have_py" ]; then
    python3 -c 'import json, sys
a = json.load(open("svc_plan.json"))
b = json.load(open("off_plan.json"))
diff = [k for k in set(a) | set(b) if k != "jobs_file" and a.get(k) != b.get(k)]
assert not diff, "the service plan and the offline plan differ in %s" % diff' ||
        fail "offline planning of /v1/queue is not the service's plan"
fi
"$EFPLAN" apply --backend dry-run svc_plan.json --jobs queue.json --slots 1 \
    >dry.out 2>&1 || { cat dry.out; fail "apply --backend dry-run of /v1/plan"; }
grep -q '^dry-run of svc_plan.json: ' dry.out || fail "no dry-run header"

# ---- SIGTERM: exit 0; the store reopens with the same plan ------------------------
kill -TERM "$SRV"
rc=0
wait "$SRV" || rc=$?
SRV=
[ $rc -eq 0 ] || { tail serve.log; fail "SIGTERM: exit $rc, expected 0"; }
start --quiet
req plan2 200 -H "$HA" "$URL/v1/plan"
grep -qi "^X-Efplan-Plan-Version: $pv" plan2.hdr ||
    fail "after a restart: plan version $(grep -i '^X-Efplan' plan2.hdr), was $pv"
cmp -s plan.body plan2.body || fail "after a restart: another plan"
req a1_after 200 -H "$HA" "$URL/v1/jobs/a1"
json_ok a1_after.body 'd["decision"] == "admitted"'
post a1_retry_after 200 "$HA" "$(job a1)"
cmp -s a1.body a1_retry_after.body || fail "after a restart: a1's retry answers otherwise"
kill -TERM "$SRV"
wait "$SRV" || fail "SIGTERM: not exit 0"
SRV=

# ---- listening: not loopback needs TLS ------------------------------------------
rc=0
"$EFPLAN" serve --db db.sqlite --cluster n8g8 --curves A100 \
    --listen 0.0.0.0:0 >plain.out 2>&1 || rc=$?
[ $rc -eq 2 ] || { cat plain.out; fail "0.0.0.0 without TLS: exit $rc, expected 2"; }
grep -qi 'tls' plain.out || fail "0.0.0.0 without TLS: no word of TLS: $(cat plain.out)"
rm -f port
"$EFPLAN" serve --db db.sqlite --cluster n8g8 --curves A100 --quiet \
    --listen 0.0.0.0:0 --insecure-listen --port-file port >insecure.out 2>&1 &
SRV=$!
i=0
while [ ! -s port ]; do
    kill -0 "$SRV" 2>/dev/null ||
        { cat insecure.out; fail "--insecure-listen 0.0.0.0:0 exited"; }
    i=$((i + 1))
    [ $i -le 600 ] || fail "--insecure-listen: no port file"
    sleep 0.05
done
kill -TERM "$SRV"
wait "$SRV" || fail "--insecure-listen: SIGTERM not exit 0"
SRV=
grep -q 'listening on http://0.0.0.0:' insecure.out || fail "no listening line"
errors_parse
echo "serve_http: ok"
