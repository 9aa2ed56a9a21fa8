#!/bin/sh
# End-to-end: efplan submit keeps its contract with the real binary.
# - 8 submits of distinct jobs run at once into one plan (PLAN.lock
#   serialises them): each prints "admitted", and the plan file and the
#   jobs file it names hold all 8 (the jobs are sized to fit);
# - plan -> submit -> apply works without hand edits: the submitted job's
#   command reaches the jobs file, and apply --backend dry-run starts it;
# - a submit_time before the plan's now is refused (exit 3, nothing
#   written); a rejection (exit 4) writes nothing either;
# - the default submit_time is the plan's current time: --now when later
#   than the plan's now (in the plan and the jobs file, and said), the
#   plan's now otherwise; on a plan in Unix time (ISO-8601 times) --now
#   takes the place of the wall clock; a bad --now is a usage error.
#   (The wall clock itself is never asserted on: tests/unit/test_submit.c
#   covers that default with a given clock.)
. "$(dirname "$0")/lib/common.sh"
cd "$T"

cat > q.json <<'JSON'
{"jobs": [{"id": "base", "model": "resnet50", "batch_size": 64,
  "iterations": 500, "submit_time": 0, "deadline": 90000,
  "command": ["true"]}]}
JSON
$V "$EFPLAN" plan --jobs q.json --cluster n1g8 --curves A100 --out p.json \
    >plan.out || fail "plan failed"
cp q.json q.before

# 8 concurrent submits
i=0
while [ $i -lt 8 ]; do
    $V "$EFPLAN" submit --plan p.json --job \
        "{\"id\":\"c$i\",\"model\":\"resnet50\",\"batch_size\":64,\"iterations\":200,\"deadline\":200000,\"command\":[\"true\"],\"env\":{\"K\":\"$i\"}}" \
        >sub$i.out 2>&1 &
    i=$((i + 1))
done
wait
i=0
while [ $i -lt 8 ]; do
    grep -q "^admitted: c$i" sub$i.out || { cat sub$i.out; fail "c$i not admitted"; }
    grep -q "\"id\": \"c$i\"" p.json || fail "the plan lost c$i"
    grep -q "\"id\": \"c$i\"" q.json || fail "the jobs file lost c$i"
    i=$((i + 1))
done
[ "$(grep -c '"decision": "admitted"' p.json)" -eq 9 ] ||
    fail "the plan does not hold 9 admitted jobs"
[ -f p.json.lock ] || fail "no lock file next to the plan"
ls p.json.tmp.* q.json.tmp.* 2>/dev/null && fail "temporary files left"

# plan -> submit -> apply: the job's command and env are where apply
# reads them
$V "$EFPLAN" submit --plan p.json --job \
    '{"id":"run","model":"bert","batch_size":64,"iterations":100,"deadline":100000,"command":["echo","hello"],"env":{"MYVAR":"x"}}' \
    >run.out || fail "submit of run failed"
grep -q '^added run to the jobs file' run.out || fail "no jobs file line"
$V "$EFPLAN" apply p.json --backend dry-run >dry.out 2>&1 ||
    { cat dry.out; fail "dry-run apply of the submitted plan failed"; }
grep -q 'start run attempt 1' dry.out || fail "the submitted job is not started"
grep -q 'MYVAR=x' dry.out || fail "the submitted job's env is lost"
grep -q 'echo hello' dry.out || fail "the submitted job's command is lost"

# refused submits write nothing
cp p.json p.before
cp q.json q.mid
$V "$EFPLAN" plan --jobs q.before --cluster n1g8 --curves A100 --now 600 \
    --out p600.json >/dev/null || fail "plan --now 600 failed"
set +e
$V "$EFPLAN" submit --plan p600.json --job \
    '{"id":"past","model":"bert","batch_size":64,"iterations":100,"submit_time":100,"deadline":100000}' \
    >past.out 2>past.err
rc=$?
set -e
[ $rc -eq 3 ] || fail "a submit_time in the plan's past: exit $rc, expected 3"
grep -q "submit_time: 100 is before the plan's now 600" past.err ||
    { cat past.err; fail "no past-submit message"; }
set +e
$V "$EFPLAN" submit --plan p.json --job \
    '{"id":"huge","model":"vgg16","batch_size":256,"iterations":200000,"deadline":5000}' \
    >huge.out
rc=$?
set -e
[ $rc -eq 4 ] || fail "infeasible submit: exit $rc, expected 4"
cmp -s p.json p.before || fail "a rejected submit changed the plan"
cmp -s q.json q.mid || fail "a rejected submit changed the jobs file"
# the default submit_time: --now, when later than the plan's now
cp q.before q600.json
$V "$EFPLAN" plan --jobs q600.json --cluster n1g8 --curves A100 --now 600 \
    --out n600.json >/dev/null || fail "plan --now 600 failed"
$V "$EFPLAN" submit --plan n600.json --now 900 --job \
    '{"id":"late","model":"bert","batch_size":64,"iterations":100,"deadline":100000}' \
    >late.out || { cat late.out; fail "submit --now 900 failed"; }
grep -q "^submit_time: +15m (--now; the plan's now is +10m)" late.out ||
    { cat late.out; fail "no submit_time line for --now 900"; }
grep '"id": "late"' n600.json | grep -q '"submit_time": 900' ||
    fail "the plan does not hold late at submit_time 900"
tr -d ' \n' <q600.json | grep -q '"id":"late"[^}]*"submit_time":900' ||
    tr -d ' \n' <q600.json | grep -q '"submit_time":900[^{]*"id":"late"' ||
    fail "the jobs file does not hold late at submit_time 900"
# --now earlier than the plan's now: the plan's now (not its past)
$V "$EFPLAN" submit --plan n600.json --now 100 --job \
    '{"id":"early","model":"bert","batch_size":64,"iterations":100,"deadline":100000}' \
    >early.out || { cat early.out; fail "submit --now 100 failed"; }
grep -q '^submit_time:' early.out && fail "--now 100 said a submit_time"
grep '"id": "early"' n600.json | grep -q '"submit_time": 600' ||
    fail "--now before the plan's now: early not at the plan's now 600"
# a submit_time the job gives is kept
$V "$EFPLAN" submit --plan n600.json --now 5000 --job \
    '{"id":"given","model":"bert","batch_size":64,"iterations":100,"submit_time":700,"deadline":100000}' \
    >given.out || { cat given.out; fail "submit of given failed"; }
grep '"id": "given"' n600.json | grep -q '"submit_time": 700' ||
    fail "a given submit_time was not kept"

# a plan in Unix time: --now stands for the wall clock
cat > qu.json <<'JSON'
{"jobs": [{"id": "u0", "model": "resnet50", "batch_size": 64,
  "iterations": 500, "submit_time": "2023-11-14T22:13:20Z",
  "deadline": "2023-11-16T00:00:00Z", "command": ["true"]}]}
JSON
$V "$EFPLAN" plan --jobs qu.json --cluster n1g8 --curves A100 --out pu.json \
    >/dev/null || fail "plan of a queue in Unix time failed"
grep -q '"now": 1700000000' pu.json || fail "the Unix plan's now"
$V "$EFPLAN" submit --plan pu.json --now 2023-11-14T22:30:00Z --job \
    '{"id":"u1","model":"bert","batch_size":64,"iterations":100,"deadline":"2023-11-15T12:00:00Z"}' \
    >u1.out || { cat u1.out; fail "submit into the Unix plan failed"; }
grep -q "^submit_time: 2023-11-14T22:30:00Z (--now; the plan's now is 2023-11-14T22:13:20Z)" \
    u1.out || { cat u1.out; fail "no submit_time line for the Unix plan"; }
grep '"id": "u1"' pu.json | grep -q '"submit_time": 1700001000' ||
    fail "the Unix plan does not hold u1 at --now"
grep -q '^admitted: u1' u1.out || { cat u1.out; fail "u1 not admitted"; }

# a bad --now: usage error, nothing written
cp n600.json n600.before
set +e
$V "$EFPLAN" submit --plan n600.json --now yesterday --job \
    '{"id":"bad","model":"bert","batch_size":64,"iterations":100}' \
    >bad.out 2>bad.err
rc=$?
set -e
[ $rc -eq 2 ] || fail "--now yesterday: exit $rc, expected 2"
grep -q -- '--now: "yesterday" is not a time' bad.err ||
    { cat bad.err; fail "no message for a bad --now"; }
cmp -s n600.json n600.before || fail "a bad --now changed the plan"
exit 0
