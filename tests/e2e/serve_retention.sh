#!/bin/sh
# End-to-end: efplan serve's per-user limits and retention
# (docs/service-scale.md, "Limits" and "Retention"):
# - limits, on a clock slowed down (--time-scale 0.001: a minute of the
#   service is 1,000 minutes of the wall, so no count depends on how fast
#   this machine is): the service's --max-queued 3 refuses alice's 4th
#   job with 429, a Retry-After header and a JSON body naming the limit
#   and its value; efplan submit prints the message and exits 10; a
#   retry of an accepted job is still answered (200); a cancel frees a
#   place; then the service's --max-submit-rate 4 refuses her 5th
#   submission of the minute (429, limit max_submit_rate);
# - per token: bob's own --max-queued 10 and no rate limit
#   (efplan token add) let him submit 6; efplan token limits bob
#   --max-queued 2 on the running server refuses his next one, saying it
#   is his token's limit; GET /v1/me shows both limits and where they come
#   from; token list shows them;
# - retention, on a fast clock (--time-scale 600: ten minutes a second)
#   with --keep 10m --keep-plans 2: a rejected and a cancelled job are
#   pruned with their events (show: exit 3, "pruned"), a job in play is
#   kept; four operator re-plans leave at most 2 snapshot files and 2
#   plan history rows; the log says what was pruned in words;
# - bad --keep, --max-queued, token limits without a limit: usage errors.
# Waits are bounded polls; no timing assertion.
. "$(dirname "$0")/lib/common.sh"
. "$(dirname "$0")/lib/serve.sh"
cd "$T"
trap '[ -z "$SRV" ] || kill "$SRV" 2>/dev/null; rm -rf "$T"' EXIT

json_ok() { # file, python expression over d
    python3 -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if ($2) else 1)" "$1" ||
        { cat "$1"; fail "$1: not ($2)"; }
}
job() { # id, iterations, deadline (JSON)
    printf '{"id": "%s", "model": "resnet50", "batch_size": 64, "iterations": %s, "deadline": %s}' "$1" "$2" "$3"
}
post() { # token file, body, out prefix: headers in P.h, body in P.json
    curl -s -D "$3.h" -o "$3.json" -w '%{http_code}' \
        -H "Authorization: Bearer $(cat "$1")" \
        -H 'Content-Type: application/json' -d "$2" "$URL/v1/jobs"
}

# ---- usage errors ------------------------------------------------------------
for bad in "--keep 3x" "--keep -1d" "--keep-plans -1" "--max-queued 0" \
    "--max-submit-rate 5/h" "--max-queued default"; do
    rc=0
    # shellcheck disable=SC2086
    "$EFPLAN" serve --db u.db --cluster n1g8 --curves A100 $bad \
        >bad.out 2>&1 || rc=$?
    [ $rc -eq 2 ] || { cat bad.out; fail "serve $bad: exit $rc, expected 2"; }
done
[ ! -e u.db ] || fail "a usage error created the store"

# ---- limits --------------------------------------------------------------------
new_token alice.tok alice
new_token bob.tok bob --max-queued 10 --max-submit-rate none
new_token ops.tok ops --operator
"$EFPLAN" token list --db db.sqlite >list.txt
grep -q '^[a-z0-9]*  bob  *user  *-  *10  *none ' list.txt ||
    { cat list.txt; fail "token list: bob's limits"; }
"$EFPLAN" token list --db db.sqlite --json >list.json
json_ok list.json '[(t["max_queued"], t["max_submit_rate"]) for t in d["tokens"] if t["name"] == "alice"] == [(None, None)]'
json_ok list.json '[(t["max_queued"], t["max_submit_rate"]) for t in d["tokens"] if t["name"] == "bob"] == [(10, "none")]'

serve_start n1g8 --max-queued 3 --max-submit-rate 4/min --time-scale 0.001
export EFPLAN_SERVER="$URL"

for i in 1 2 3; do
    c=$(post alice.tok "$(job a$i 100 null)" a$i)
    [ "$c" = 201 ] || { cat a$i.json; fail "a$i: HTTP $c"; }
done
c=$(post alice.tok "$(job a4 100 null)" a4)
[ "$c" = 429 ] || { cat a4.json; fail "a4: HTTP $c, expected 429"; }
grep -qi '^Retry-After: [1-9][0-9]*' a4.h || { cat a4.h; fail "a4: no Retry-After"; }
json_ok a4.json 'd["error"]["status"] == 429 and d["error"]["limit"] == "max_queued" and d["error"]["value"] == 3'
json_ok a4.json '"max_queued" in d["error"]["message"] and "the limit is 3" in d["error"]["message"] and "the service" in d["error"]["message"]'
ra=$(tr -d '\r' <a4.h | sed -n 's/^[Rr]etry-[Aa]fter: //p')
json_ok a4.json "d['error']['retry_after'] == $ra"
# the client: the message, exit 10
rc=0
"$EFPLAN" submit --token-file alice.tok --job "$(job a4 100 null)" \
    >sub.out 2>sub.err || rc=$?
[ $rc -eq 10 ] || { cat sub.err; fail "submit over the limit: exit $rc, expected 10"; }
grep -q 'HTTP 429: user alice has 3 jobs queued or running: the limit is 3' sub.err ||
    { cat sub.err; fail "submit: no limit message"; }
# a retry of an accepted job is answered as before, limit or not
c=$(post alice.tok "$(job a1 100 null)" a1r)
[ "$c" = 200 ] || { cat a1r.json; fail "retry of a1: HTTP $c, expected 200"; }
# a cancel frees a place; the 4th submission of the minute is taken
"$EFPLAN" cancel a1 --token-file alice.tok >/dev/null
c=$(post alice.tok "$(job a4 100 null)" a4b)
[ "$c" = 201 ] || { cat a4b.json; fail "a4 after a cancel: HTTP $c"; }
"$EFPLAN" cancel a2 --token-file alice.tok >/dev/null
c=$(post alice.tok "$(job a5 100 null)" a5)
[ "$c" = 429 ] || { cat a5.json; fail "a5: HTTP $c, expected 429 (rate)"; }
grep -qi '^Retry-After: [1-9]' a5.h || { cat a5.h; fail "a5: no Retry-After"; }
json_ok a5.json 'd["error"]["limit"] == "max_submit_rate" and d["error"]["value"] == 4 and "4 a minute" in d["error"]["message"]'

# per token: bob's own limits
for i in 1 2 3 4 5 6; do
    c=$(post bob.tok "$(job b$i 100 null)" b$i)
    [ "$c" = 201 ] || { cat b$i.json; fail "b$i: HTTP $c (bob's own limits)"; }
done
curl -s -H "Authorization: Bearer $(cat bob.tok)" "$URL/v1/me" >me.json
json_ok me.json 'd["limits"] == {"max_queued": 10, "max_queued_from": "token", "max_submit_rate": None, "max_submit_rate_from": "token"}'
curl -s -H "Authorization: Bearer $(cat alice.tok)" "$URL/v1/me" >me2.json
json_ok me2.json 'd["limits"] == {"max_queued": 3, "max_queued_from": "service", "max_submit_rate": 4, "max_submit_rate_from": "service"}'
"$EFPLAN" token limits bob --max-queued 2 --db db.sqlite >lim.out
grep -q 'limits of 1 token changed: "bob"' lim.out || { cat lim.out; fail "token limits"; }
c=$(post bob.tok "$(job b7 100 null)" b7)
[ "$c" = 429 ] || { cat b7.json; fail "b7: HTTP $c, expected 429"; }
json_ok b7.json 'd["error"]["limit"] == "max_queued" and d["error"]["value"] == 2 and "this token" in d["error"]["message"]'
# every 429 counted: a4, a5 and b7 at least
curl -s "$URL/metrics" >metrics.txt
n=$(sed -n 's/^efplan_submissions_limited_total \([0-9]*\)$/\1/p' metrics.txt)
[ -n "$n" ] && [ "$n" -ge 3 ] || { grep limited metrics.txt; fail "metrics: limited $n, expected >= 3"; }
rc=0
"$EFPLAN" token limits bob --db db.sqlite >lim.out 2>&1 || rc=$?
[ $rc -eq 2 ] || { cat lim.out; fail "token limits without a limit: exit $rc"; }
rc=0
"$EFPLAN" token limits carol --max-queued 5 --db db.sqlite >lim.out 2>&1 || rc=$?
[ $rc -eq 3 ] || { cat lim.out; fail "token limits of no token: exit $rc"; }
serve_stop

# ---- retention ------------------------------------------------------------------
rm -f db.sqlite*
rm -rf db.sqlite.plans
new_token alice.tok alice
new_token ops.tok ops --operator
serve_start n1g8 --keep 10m --keep-plans 2 --time-scale 600
export EFPLAN_SERVER="$URL"
rc=0
"$EFPLAN" submit --token-file alice.tok --job "$(job rej 100000000 '"now+1h"')" \
    >rej.out 2>&1 || rc=$?
[ $rc -eq 4 ] || { cat rej.out; fail "rej: exit $rc, expected 4 (rejected)"; }
"$EFPLAN" submit --token-file alice.tok --job "$(job gone 100000 null)" >/dev/null
"$EFPLAN" cancel gone --token-file alice.tok >/dev/null
"$EFPLAN" submit --token-file alice.tok --job "$(job long 1000000000 null)" >/dev/null
for i in 1 2 3 4; do
    "$EFPLAN" replan --token-file ops.tok >/dev/null
done
i=0
while :; do
    rc=0
    "$EFPLAN" show rej --token-file alice.tok >show.out 2>&1 || rc=$?
    rc2=0
    "$EFPLAN" show gone --token-file alice.tok >show2.out 2>&1 || rc2=$?
    nf=$(ls db.sqlite.plans 2>/dev/null | wc -l)
    [ $rc -eq 0 ] || [ $rc2 -eq 0 ] || [ "$nf" -gt 2 ] || break
    i=$((i + 1))
    [ $i -le 600 ] || { cat serve.log; fail "not pruned after 600 polls (rej: exit $rc, gone: exit $rc2, $nf snapshot files)"; }
    sleep 0.1
done
[ $rc -eq 3 ] || { cat show.out; fail "show of a pruned job: exit $rc, expected 3"; }
grep -q 'no job "rej": unknown, or it ended more than 10m ago and was pruned (efplan serve --keep 10m)' show.out ||
    { cat show.out; fail "show of a pruned job: no word of the pruning"; }
"$EFPLAN" show long --token-file alice.tok >long.out ||
    { cat long.out; fail "the job in play was pruned"; }
"$EFPLAN" jobs --all --token-file ops.tok >all.txt
grep -q '^long ' all.txt || { cat all.txt; fail "jobs --all: long missing"; }
! grep -q '^rej \|^gone ' all.txt || { cat all.txt; fail "jobs --all: pruned jobs listed"; }
serve_stop
grep -q 'retention: pruned [0-9]* jobs\{0,1\} that ended before .* (kept 10m), with [0-9]* events\{0,1\}' serve.log ||
    { cat serve.log; fail "no retention line in the log"; }
grep -q 'snapshot files\{0,1\} beyond the newest 2' serve.log ||
    { cat serve.log; fail "no snapshot pruning in the log"; }
sql() { # the store's answer to one query (python3's sqlite3, read-only)
    python3 -c "import sqlite3,sys; c=sqlite3.connect('file:db.sqlite?mode=ro', uri=True); print(c.execute(sys.argv[1]).fetchone()[0])" "$1"
}
np=$(sql 'SELECT count(*) FROM plans')
[ "$np" -le 2 ] || fail "$np plan history rows, expected at most 2"
ne=$(sql "SELECT count(*) FROM events WHERE job IN ('rej', 'gone')")
[ "$ne" -eq 0 ] || fail "$ne events of pruned jobs left"
nl=$(sql "SELECT count(*) FROM events WHERE job = 'long'")
[ "$nl" -ge 1 ] || fail "the kept job lost its events"
echo "serve_retention: ok"
