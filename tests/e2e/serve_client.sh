#!/bin/sh
# End-to-end: the CLI as the client of efplan serve (service/client.h),
# against the real daemon on a loopback port:
# - submit (a file, standard input, --job inline; --json parses) is
#   admitted (exit 0), an impossible deadline rejected (exit 4) with the
#   earliest deadline, a retry with the same body answered the same;
# - jobs, show, cancel for two users: alice sees and cancels only her own
#   jobs (bob's: exit 8 and the server's message), the operator's jobs
#   --all sees both; a job id with spaces, '/', '%' and '?' goes through
#   show and cancel (percent-encoded in the URL);
# - explain: an admitted job's reserved + surplus, a rejected job, an
#   odd id, --json, another user's job (exit 8), a job not there (exit 3);
# - errors: a job not there (exit 3), a second cancel (exit 3), a token
#   the server does not know (exit 8), a token file open to others
#   (exit 3), a server that is gone (exit 5).
# No timing assertions: the only waits are bounded loops for the port file.
. "$(dirname "$0")/lib/common.sh"
. "$(dirname "$0")/lib/serve.sh"

cd "$T"

cleanup() {
    if [ -n "$SRV" ]; then
        kill "$SRV" 2>/dev/null || true
        wait "$SRV" 2>/dev/null || true
    fi
    rm -rf "$T"
}
trap cleanup EXIT

new_token alice.tok alice
new_token bob.tok bob
new_token ops.tok ops --operator

serve_start n4g8

have_py=
command -v python3 >/dev/null 2>&1 && have_py=1
json_ok() { # file, python expression over d (the parsed file)
    if [ -n "$have_py" ]; then
        python3 -c "import json,sys; d=json.load(open(sys.argv[1])); \
assert $2, d" "$1" || fail "$1: not JSON with $2"
    else
        grep -q '"id"' "$1" || fail "$1: no \"id\" in the JSON"
    fi
}
run() { # expected exit code, output file, efplan arguments...
    want=$1 out=$2; shift 2
    rc=0
    $V "$EFPLAN" "$@" >"$out" 2>&1 || rc=$?
    [ "$rc" -eq "$want" ] ||
        { cat "$out"; fail "efplan $* exited $rc, expected $want"; }
}
A="--server $URL --token-file alice.tok"
B="--server $URL --token-file bob.tok"
O="--server $URL --token-file ops.tok"

NOW=$(date +%s)
DL=$((NOW + 7200))
cat >a1.json <<JSON
{"id": "a1", "model": "resnet50", "batch_size": 256, "iterations": 2000,
 "deadline": $DL}
JSON

# submit: a file, a retry of it, standard input, --job inline, --json
run 0 sub_a1.out submit $A a1.json
grep -q '^admitted: a1, planned end ' sub_a1.out || fail "a1 not admitted"
grep -q ", deadline " sub_a1.out || fail "no deadline in the admitted line"
run 0 sub_a1b.out submit $A a1.json
grep -q '^admitted: a1' sub_a1b.out || fail "the retry is not the same answer"
job() { # id model batch iterations deadline: one job object
    printf '{"id": "%s", "model": "%s", "batch_size": %s, ' "$1" "$2" "$3"
    printf '"iterations": %s, "deadline": %s}' "$4" "$5"
}
job a2 resnet50 256 500 null | run 0 sub_a2.out submit $A -
grep -q '^best_effort: a2' sub_a2.out || fail "a2 is not best-effort"
run 0 sub_b1.json submit $B --json --job "$(job b1 vgg16 128 1000 "$DL")"
json_ok sub_b1.json 'd["id"] == "b1" and d["decision"] == "admitted"'
run 4 sub_late.out submit $A --job \
    "$(job late gpt2 256 100000000 $((NOW + 60)))"
grep -q '^rejected: late' sub_late.out || fail "late is not rejected"
grep -q -e '^earliest deadline that can be guaranteed: ' \
    -e '^no deadline can be guaranteed' sub_late.out ||
    fail "the rejection gives no earliest deadline"
ODD='odd id/100%?#x'
run 0 sub_odd.out submit $A --job "$(job "$ODD" resnet50 256 100 null)"
# a relative deadline is made absolute by the client as it submits
T0=$(date +%s)
run 0 sub_rel.json submit $A --json --job "$(job rel resnet50 256 100 '"now+8h"')"
T1=$(date +%s)
json_ok sub_rel.json "d['id'] == 'rel' and d['decision'] == 'admitted'"
run 0 show_rel.json show rel $A --json
json_ok show_rel.json "$((T0 + 28800)) <= d['deadline'] <= $((T1 + 28800))"
run 3 sub_rel_bad.out submit $A --job "$(job relbad resnet50 256 100 '"now+8y"')"
grep -q 'deadline: "now+8y": unknown unit' sub_rel_bad.out ||
    fail "a bad relative deadline: $(cat sub_rel_bad.out)"

# jobs: each user their own, the operator everyone's
run 0 jobs_a.out jobs $A
grep -q '^ID  *OWNER  *STATE' jobs_a.out || fail "no table header"
grep -q '^a1 ' jobs_a.out || fail "alice does not see a1"
grep -q '^b1 ' jobs_a.out && fail "alice sees bob's b1"
run 0 jobs_o.out jobs $O --all
grep -q '^a1 ' jobs_o.out || fail "the operator does not see a1"
grep -q '^b1 ' jobs_o.out || fail "the operator does not see b1"
run 0 jobs_o.json jobs $O --all --json
json_ok jobs_o.json 'set(j["id"] for j in d["jobs"]) >= {"a1", "b1"}'
# --time-zone: the table's times as Unix seconds, or ISO-8601 in UTC
run 0 jobs_ep.out jobs $A --time-zone epoch
grep -q "^a1 .* $DL " jobs_ep.out || { cat jobs_ep.out; fail "jobs --time-zone epoch"; }
run 0 jobs_utc.out jobs $A --time-zone utc
grep -q "^a1 .* [0-9-]*T[0-9:]*Z " jobs_utc.out || { cat jobs_utc.out; fail "jobs --time-zone utc"; }
(
    EFPLAN_SERVER=$URL EFPLAN_TOKEN=$(cat bob.tok)
    export EFPLAN_SERVER EFPLAN_TOKEN
    run 0 jobs_env.out jobs
)
grep -q '^b1 ' jobs_env.out || fail "EFPLAN_SERVER and EFPLAN_TOKEN unused"

# show
run 0 show_a1.out show a1 $A
grep -q '/2000 iterations' show_a1.out || fail "show: no progress line"
grep -q '^  decision     admitted' show_a1.out || fail "show: no decision"
run 0 show_a1.json show a1 $A --json
json_ok show_a1.json 'd["id"] == "a1" and isinstance(d["history"], list)'
run 0 show_odd.out show "$ODD" $A
grep -q "^job $ODD (owner alice)" show_odd.out || fail "show of an odd id"

# explain (GET /v1/jobs/{id}/explain): the text from the server's JSON,
# times in UTC; a rejected job (kept out of the plan) too; an odd id
run 0 explain_a1.out explain a1 $A
grep -q '^a1 is admitted: its deadline 20[0-9-]*T[0-9:]*Z is guaranteed' \
    explain_a1.out || { cat explain_a1.out; fail "explain: admitted line"; }
grep -q ' reserved + [0-9]* surplus; other jobs: ' explain_a1.out ||
    fail "explain: no reserved + surplus interval"
run 0 explain_a1.json explain a1 $A --json
json_ok explain_a1.json 'd["format"] == "efplan-explain" and d["id"] == "a1" and len(d["intervals"]) > 0'
run 0 explain_a1e.out explain a1 $A --time-zone epoch
grep -q '^a1 is admitted: its deadline t=[0-9]* s is guaranteed' \
    explain_a1e.out || fail "explain --time-zone epoch"
run 0 explain_late.out explain late $A
grep -q '^late is rejected: ' explain_late.out ||
    { cat explain_late.out; fail "explain: rejected line"; }
run 0 explain_odd.out explain "$ODD" $A
grep -q "^$ODD is best-effort" explain_odd.out || fail "explain of an odd id"
run 8 explain_b1.out explain b1 $A
grep -q "^efplan: error: $URL: HTTP 403: " explain_b1.out ||
    fail "explain of bob's job: not the 403 message"
run 3 explain_none.out explain no-such-job $A
grep -q "HTTP 404: " explain_none.out || fail "explain: a missing job is not a 404"

# another user's job: exit 8 and the server's message
run 8 show_b1.out show b1 $A
grep -q "^efplan: error: $URL: HTTP 403: " show_b1.out ||
    fail "show of bob's job: not the 403 message"
run 8 cancel_b1.out cancel b1 $A
grep -q "^efplan: error: $URL: HTTP 403: " cancel_b1.out ||
    fail "cancel of bob's job: not the 403 message"

# errors
run 3 show_none.out show no-such-job $A
grep -q "HTTP 404: " show_none.out || fail "a missing job is not a 404"
printf 'efp_aaaaaaaaaa_%s\n' "$(printf 'x%.0s' $(seq 43))" >bad.tok
chmod 600 bad.tok
run 8 jobs_bad.out jobs --server "$URL" --token-file bad.tok
grep -q "HTTP 401: " jobs_bad.out || fail "an unknown token is not a 401"
cp alice.tok open.tok
chmod 644 open.tok
run 3 jobs_open.out jobs --server "$URL" --token-file open.tok
grep -q 'mode 0644 is too open' jobs_open.out || fail "a 0644 token file used"

# cancel: alice's own, the odd id, then again (409)
run 0 cancel_a1.out cancel a1 $A
grep -q '^cancelled: job a1' cancel_a1.out || fail "a1 not cancelled"
run 0 cancel_odd.json cancel "$ODD" $A --json
json_ok cancel_odd.json 'd["state"] == "cancelled"'
run 3 cancel_a1b.out cancel a1 $A
grep -q "HTTP 409: " cancel_a1b.out || fail "a second cancel is not a 409"
run 0 jobs_c.out jobs $A --state cancelled
grep -q '^a1 ' jobs_c.out || fail "a1 is not listed as cancelled"
grep -q '^a2 ' jobs_c.out && fail "a2 listed as cancelled"

# the server gone
kill "$SRV"
wait "$SRV" 2>/dev/null || true
SRV=
run 5 gone.out jobs $A
grep -q "the server is not reachable at $URL" gone.out ||
    fail "no 'not reachable' message"
echo "serve_client: ok"
