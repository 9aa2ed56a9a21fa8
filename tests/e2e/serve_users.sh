#!/bin/sh
# End-to-end: efplan serve --backend local runs every job as its owner,
# never as the service (docs/security.md).
#
# As root (CI): two Unix accounts made here (useradd, removed at exit),
# tokens alice --unix-user A, bob --unix-user B, carol (no account) and
# ops (operator). Each job records who it runs as and what it can reach:
# - alice's job runs as A, bob's as B, carol's as the job user (nobody);
# - none can read or write the store, list the run directory, read
#   another user's job directory or log, or find alice's secret (in her
#   job's env) in its environment, the run directory, the store or
#   /proc/*/environ;
# - bob's job runs the escalation sqlite3 STORE "update tokens set op=1
#   where name='bob'": it fails, bob stays a user (token list, and his
#   GET /v1/jobs?all=1 stays 403);
# - the store is 0600, run/ 0700, each job's directory 0700 and its
#   user's; a store made 0644 is refused with "chmod 600".
# Outside root (and, as root, as account A through setpriv): a service
# that cannot switch users refuses --backend local with two users'
# tokens, and starts with --single-user.
# No timing assertion: bounded waits for the jobs' ends only.
. "$(dirname "$0")/lib/common.sh"
. "$(dirname "$0")/lib/serve.sh"
. "$(dirname "$0")/lib/users.sh"
cd "$T"
chmod 711 "$T" # the jobs pass through to their own directories

# ---- outside root: the refusal and --single-user ---------------------------
refusal() { # dir: as the current, unprivileged user
    d=$1
    "$EFPLAN" token add u1 --db "$d/s.db" >"$d/u1.tok" 2>/dev/null ||
        fail "token add u1 (unprivileged)"
    "$EFPLAN" token add u2 --db "$d/s.db" >"$d/u2.tok" 2>/dev/null ||
        fail "token add u2 (unprivileged)"
    rc=0
    "$EFPLAN" serve --db "$d/s.db" --cluster n1g8 --curves A100 \
        --listen 127.0.0.1:0 --backend local --run-dir "$d/run" \
        >"$d/refused.out" 2>&1 || rc=$?
    [ "$rc" = 2 ] || { cat "$d/refused.out"; fail "serve as uid $(id -u) with two users: exit $rc, expected 2"; }
    grep -q "2 users hold tokens" "$d/refused.out" &&
        grep -q -- "--single-user" "$d/refused.out" ||
        { cat "$d/refused.out"; fail "the refusal does not say why and what to do"; }
    "$EFPLAN" serve --db "$d/s.db" --cluster n1g8 --curves A100 \
        --listen 127.0.0.1:0 --port-file "$d/port" --backend local \
        --single-user --run-dir "$d/run" >"$d/single.out" 2>&1 &
    pid=$!
    i=0
    while [ ! -s "$d/port" ]; do
        kill -0 $pid 2>/dev/null || { cat "$d/single.out"; fail "--single-user did not start"; }
        i=$((i + 1)); [ $i -le 600 ] || fail "--single-user: no port file"
        sleep 0.05
    done
    kill $pid; wait $pid || true
    echo "unprivileged: refused with two users (exit 2); --single-user starts"
}

if [ "$(id -u)" != 0 ]; then
    mkdir u && refusal "$T/u"
    echo "skipped: the jobs-as-their-owners part needs root (useradd, setuid)"
    exit 0
fi

A=efa$$; B=efb$$
cleanup() {
    [ -z "${SRV:-}" ] || kill "$SRV" 2>/dev/null || true
    kill_attempts "$T/run/run" 2>/dev/null || true
    userdel "$A" 2>/dev/null || true
    userdel "$B" 2>/dev/null || true
    rm -rf "$T"
}
trap cleanup EXIT
useradd -M -N -s /bin/sh "$A" || fail "useradd $A"
useradd -M -N -s /bin/sh "$B" || fail "useradd $B"
UA=$(id -u "$A"); UB=$(id -u "$B"); UN=$(id -u nobody)

# the unprivileged part, as A (its own directory), with its own copy of
# the binary and the curves: A may not reach the checkout (one made by
# mktemp -d is 0700 root's)
mkdir u u/bin u/data
cp "$EFPLAN" u/bin/efplan
cp -R "$EFPLAN_DATA/curves" u/data/
chown -R "$A" u && chmod 700 u
{ echo 'fail() { echo "FAIL: $*"; exit 1; }'
  sed -n '/^refusal() {/,/^}/p' "$0"
  echo 'refusal "$1"'; } >refusal.sh
setpriv --reuid="$A" --regid="$(id -g "$A")" --clear-groups \
    env HOME="$T/u" EFPLAN="$T/u/bin/efplan" EFPLAN_DATA="$T/u/data" \
    sh refusal.sh "$T/u" || fail "the unprivileged part failed"

# ---- as root: jobs run as their owners --------------------------------------
new_token ops.tok ops --operator
new_token alice.tok alice --unix-user "$A"
new_token bob.tok bob --unix-user "$B"
new_token carol.tok carol
"$EFPLAN" token add eve --unix-user root --db db.sqlite >eve.out 2>&1 &&
    fail "token add --unix-user root was accepted"
grep -q "uid 0" eve.out || { cat eve.out; fail "--unix-user root: no reason"; }
"$EFPLAN" token list --db db.sqlite >tokens.out
grep -Eq " alice +user +$A " tokens.out || { cat tokens.out; fail "token list: alice's account"; }
grep -Eq " carol +user +- " tokens.out || { cat tokens.out; fail "token list: carol's"; }

STORE=$T/db.sqlite
RUN=$T/run
# the service's own environment: nothing of it may reach a job
SERVICE_MARK=svc-mark-$$ serve_start n1g8 --backend local --run-dir run \
    --time-scale 50 --quiet
export SERVICE_MARK= # (only the service had it)
curl -s -H "Authorization: Bearer $(cat alice.tok)" "$URL/v1/me" >me.json
jq -e --arg a "$A" '.name == "alice" and .role == "user" and .unix_user == $a' \
    me.json >/dev/null || { cat me.json; fail "GET /v1/me: $(cat me.json)"; }

# a1 runs until b1 and c1, which look for alice's secret, are done: it is
# long (best-effort, 100000 iterations: its allocation does not end), b1
# and c1 are short with a deadline soon (planned at once, beside a1)
now=$(curl -s "$URL/healthz" | jq .time)
submit() { # token id env [deadline iterations]
    body=$(users_body "$2" "$3" "$STORE" "$RUN" "" "${4:-null}" "${5:-10}")
    "$EFPLAN" submit --server "$URL" --token-file "$1" --job "$body" \
        >>submits.out 2>&1 || { cat submits.out; fail "submit $2"; }
}
state() {
    curl -s -H "Authorization: Bearer $(cat ops.tok)" "$URL/v1/jobs/$1" |
        jq -r .state
}
wait_done() { # job
    i=0
    while :; do
        s=$(state "$1")
        [ "$s" = done ] && break
        [ "$s" = failed ] && { cat serve.log; cat "$RUN/jobs/$1/"*.log; fail "$1 failed"; }
        i=$((i + 1)); [ $i -le 600 ] || { cat serve.log; fail "$1: not done ($s)"; }
        sleep 0.1
    done
}
: >hold
submit alice.tok a1 "{\"ALICE_KEY\": \"alice-s3cr3t\", \"USERS_HOLD\": \"$T/hold\"}" \
    null 100000
submit bob.tok b1 '{}' $((now + 900))
submit carol.tok c1 '{}' $((now + 900))
wait_done b1
wait_done c1
rm hold # a1 ran until b1 and c1 were done
wait_done a1

users_check a1 "$UA" "b1 c1" "$RUN"
users_check b1 "$UB" "a1 c1" "$RUN"
users_check c1 "$UN" "a1 b1" "$RUN"
users_escalated b1.logs
users_checkpointed a1.logs # (resized as b1 and c1 came)
"$EFPLAN" token list --db db.sqlite --json >t.json
jq -e '.tokens[] | select(.name == "bob") | .role == "user"' t.json >/dev/null ||
    fail "bob became an operator"
code=$(curl -s -o /dev/null -w '%{http_code}' \
    -H "Authorization: Bearer $(cat bob.tok)" "$URL/v1/jobs?all=1")
[ "$code" = 403 ] || fail "bob's GET /v1/jobs?all=1: $code, expected 403"

# the service's files
[ "$(stat -c '%u %a' db.sqlite)" = "0 600" ] || fail "store: $(stat -c '%u %a' db.sqlite)"
[ "$(stat -c '%a' run/run)" = 700 ] || fail "run/run: $(stat -c '%a' run/run)"
[ "$(stat -c '%a' run/jobs)" = 711 ] || fail "run/jobs: $(stat -c '%a' run/jobs)"
kill "$SRV"; wait "$SRV" || true; SRV=
chmod 644 db.sqlite
rc=0
"$EFPLAN" token list --db db.sqlite >open.out 2>&1 || rc=$?
[ "$rc" = 3 ] && grep -q "chmod 600" open.out ||
    { cat open.out; fail "a 0644 store was opened (exit $rc)"; }
echo "serve_users: jobs ran as $A, $B and nobody; none reached the store, another's directory or secret; bob stayed a user"
