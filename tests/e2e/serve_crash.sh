#!/bin/sh
# End-to-end: nothing efplan serve acknowledged is ever lost, though the
# daemon is killed with SIGKILL again and again while it takes jobs.
# - one daemon on a fresh store (cluster n8g8, curves A100), restarted on
#   the same store after every kill -9 (its port may change: clients read
#   the port file before every request);
# - 8 client loops (curl) submit 25 jobs each, ids c<client>-<n>, a mix of
#   feasible deadlines, impossible ones and best-effort jobs; an answer
#   without a 2xx (no connection, reset, 5xx) is unacknowledged: the same
#   body is sent again later; every attempt and its answer is kept;
# - at least 20 kills, each once a few more answers were acknowledged
#   since the last (a bounded wait), at a jittered moment;
# - then a last kill and restart, and GET /v1/jobs?all=1 (operator):
#   every acknowledged job is there exactly once with the decision its
#   answer gave; no id twice and none that was not submitted; no 4xx (a
#   409 would mean a retry of the same body was refused); a 200 (a
#   retry's answer) only after an unacknowledged attempt of that job;
#   every job an answer admitted is still admitted, planned to end by its
#   deadline (no promise changed).
# Bounded: 200 jobs, at most 40 kills, at most 300 attempts per client,
# every request --max-time 10. No timing assertions: waits are bounded
# loops for a condition; the short sleeps only spread the kills.
. "$(dirname "$0")/lib/common.sh"

cd "$T"
NCLIENT=8
NJOB=25
MAXATT=300
MINKILL=20
MAXKILL=40
STEP=3

SRV=
CLIENTS=
cleanup() {
    for p in $CLIENTS; do
        kill "$p" 2>/dev/null || true
    done
    if [ -n "$SRV" ]; then
        kill -9 "$SRV" 2>/dev/null || true
        wait "$SRV" 2>/dev/null || true
    fi
    for p in $CLIENTS; do
        wait "$p" 2>/dev/null || true
    done
    rm -rf "$T"
}
trap cleanup EXIT

tok_re='efp_[a-z0-9]\{10\}_[A-Za-z0-9_-]\{43\}'
"$EFPLAN" token add ops --operator --db db.sqlite >ops.out 2>&1 ||
    { cat ops.out; fail "token add failed"; }
grep -o "$tok_re" ops.out | head -1 >ops.tok
[ -s ops.tok ] || fail "token add printed no token"
TOK=$(cat ops.tok)

start() { # start the daemon on db.sqlite; wait for its port file
    rm -f port
    "$EFPLAN" serve --db db.sqlite --cluster n8g8 --curves A100 --quiet \
        --listen 127.0.0.1:0 --port-file port >>serve.log 2>&1 &
    SRV=$!
    i=0
    while [ ! -s port ]; do
        kill -0 "$SRV" 2>/dev/null ||
            { tail -20 serve.log; fail "serve exited at start"; }
        i=$((i + 1))
        [ $i -le 600 ] ||
            { tail -20 serve.log; fail "no port file after 600 tries"; }
        sleep 0.05
    done
}
crash() { # kill -9 the daemon
    kill -9 "$SRV" 2>/dev/null || true
    wait "$SRV" 2>/dev/null || true
    SRV=
}

mkdir b r log
NOW=$(date +%s)
# the bodies, fixed before any is sent: a retry sends the same bytes
c=1
while [ $c -le $NCLIENT ]; do
    n=1
    while [ $n -le $NJOB ]; do
        k=$(((c * 7 + n * 3) % 10))
        if [ $k -lt 2 ]; then         # impossible: rejected
            it=100000000 dl=$((NOW + 120))
        elif [ $k -eq 2 ]; then       # best-effort
            it=1000 dl=null
        else                          # feasible on an empty cluster
            it=$((500 + 100 * k)) dl=$((NOW + 3600 * (1 + n % 4)))
        fi
        printf '{"id": "c%s-%s", "model": "resnet50", "batch_size": 64, ' \
            "$c" "$n" >"b/c$c-$n.json"
        printf '"iterations": %s, "deadline": %s}\n' "$it" "$dl" \
            >>"b/c$c-$n.json"
        n=$((n + 1))
    done
    c=$((c + 1))
done

client() { # client number: submit its jobs in order, retrying each
    c=$1 n=1 att=0
    while [ $n -le $NJOB ]; do
        id=c$c-$n
        while :; do
            att=$((att + 1))
            if [ $att -gt $MAXATT ]; then
                echo "$id $att gaveup" >>"log/c$c"
                return 0
            fi
            port=$(cat port 2>/dev/null || true)
            if [ -z "$port" ]; then
                sleep 0.05
                continue
            fi
            code=$(curl -s -o "r/$id.$att" -w '%{http_code}' --max-time 10 \
                -H 'Content-Type: application/json' \
                -H "Authorization: Bearer $TOK" \
                --data-binary "@b/$id.json" \
                "http://127.0.0.1:$port/v1/jobs" 2>/dev/null || true)
            echo "$id $att ${code:-000}" >>"log/c$c"
            case $code in
            [24]??) break ;;
            esac
            sleep 0.05
        done
        n=$((n + 1))
        sleep 0.1 # spreads the submissions over the kills
    done
}
acks() {
    cat log/c* 2>/dev/null | grep -c ' 2[0-9][0-9]$' || true
}
alive() { # 0 while a client runs
    for p in $CLIENTS; do
        kill -0 "$p" 2>/dev/null && return 0
    done
    return 1
}

start
c=1
while [ $c -le $NCLIENT ]; do
    client $c &
    CLIENTS="$CLIENTS $!"
    c=$((c + 1))
done

kills=0 last=0
while [ $kills -lt $MAXKILL ] && alive; do
    i=0
    while [ "$(acks)" -lt $((last + STEP)) ] && [ $i -lt 200 ] && alive; do
        i=$((i + 1))
        sleep 0.05
    done
    alive || break
    # a jittered moment: 0 to 45 ms after the condition
    sleep "$(awk -v k=$kills 'BEGIN { srand(k + 1); printf "%.3f", rand() * 0.045 }')"
    crash
    kills=$((kills + 1))
    last=$(acks)
    start
done
for p in $CLIENTS; do
    wait "$p" || fail "a client failed"
done
CLIENTS=
crash
start
URL="http://127.0.0.1:$(cat port)"
curl -s -o list.json -w '%{http_code}' --max-time 10 \
    -H "Authorization: Bearer $TOK" "$URL/v1/jobs?all=1" >list.code ||
    fail "GET /v1/jobs?all=1 failed"
[ "$(cat list.code)" = 200 ] ||
    { cat list.json; fail "GET /v1/jobs?all=1: HTTP $(cat list.code)"; }
crash

[ $kills -ge $MINKILL ] ||
    fail "only $kills kills (expected at least $MINKILL): the clients ended early"
if grep -q gaveup log/c*; then
    grep gaveup log/c*
    fail "a client gave up after $MAXATT attempts"
fi
cat log/c* >attempts

if command -v python3 >/dev/null 2>&1; then
    python3 - "$kills" <<'PY' || fail "the store lost or changed an acknowledged answer"
import json, sys
kills = int(sys.argv[1])
att = {}
for line in open("attempts"):
    i, a, code = line.split()
    att.setdefault(i, []).append((int(a), code))
jobs = json.load(open("list.json"))["jobs"]
bad = []
listed = {}
for j in jobs:
    if j["id"] in listed:
        bad.append("id %s listed twice" % j["id"])
    listed[j["id"]] = j
acked = retried = retry200 = 0
for i, tries in sorted(att.items()):
    tries.sort()
    if len(tries) > 1:
        retried += 1
    ok = [(a, c) for a, c in tries if c[0] == "2"]
    four = [(a, c) for a, c in tries if c[0] == "4"]
    if four:
        bad.append("%s: HTTP %s at attempt %d" % (i, four[0][1], four[0][0]))
    if not ok:
        continue
    if len(ok) > 1:
        bad.append("%s: more than one 2xx (client bug)" % i)
    a, code = ok[0]
    acked += 1
    ans = json.load(open("r/%s.%d" % (i, a)))
    if ans.get("id") != i:
        bad.append("%s: answer names id %r" % (i, ans.get("id")))
    if code == "200":
        retry200 += 1
        if a == tries[0][0]:
            bad.append("%s: 200 (a retry's answer) at its first attempt" % i)
    if i not in listed:
        bad.append("%s: acknowledged (HTTP %s, %s) but not in the store"
                   % (i, code, ans.get("decision")))
        continue
    j = listed[i]
    if j["decision"] != ans["decision"]:
        bad.append("%s: answered %s, listed %s" % (i, ans["decision"],
                                                  j["decision"]))
    body = json.load(open("b/%s.json" % i))
    if ans["decision"] == "admitted":
        pe, dl = j.get("planned_end"), body["deadline"]
        if j.get("deadline") != dl:
            bad.append("%s: deadline %r listed, %r sent" % (i, j.get("deadline"), dl))
        if pe is None or pe > dl:
            bad.append("%s: admitted, but planned_end %r > deadline %r"
                       % (i, pe, dl))
for i in listed:
    if i not in att:
        bad.append("%s: listed but never submitted" % i)
for b in bad[:40]:
    print("  " + b)
print("serve_crash: %d kills, %d jobs, %d acknowledged, %d retried, "
      "%d answered 200 on a retry (stored before the kill), %d listed"
      % (kills, len(att), acked, retried, retry200, len(listed)))
sys.exit(1 if bad else 0)
PY
else
    # without python3: every acknowledged id is listed once with its
    # decision (the listing is compact JSON with sorted keys)
    tr -d '\n' <list.json | sed 's/{"at_risk":/\n&/g' |
        sed -n 's/.*"decision":"\([a-z_]*\)".*"id":"\([^"]*\)".*/\2 \1/p' |
        sort >listed
    [ "$(cut -d' ' -f1 listed | sort | uniq -d | wc -l)" -eq 0 ] ||
        fail "an id is listed twice"
    [ "$(wc -l <listed)" -ge "$(acks)" ] ||
        fail "$(wc -l <listed) jobs listed, $(acks) acknowledged"
    grep ' 2[0-9][0-9]$' attempts | while read -r i a code; do
        d=$(sed -n 's/.*"decision":"\([a-z_]*\)".*/\1/p' "r/$i.$a")
        grep -qx "$i $d" listed || { echo "$i: answered $d"; exit 1; }
    done || fail "an acknowledged answer is not in the store"
    echo "serve_crash: $kills kills, $(acks) acknowledged (no python3:" \
        "planned ends not checked)"
fi
echo "serve_crash: ok"
