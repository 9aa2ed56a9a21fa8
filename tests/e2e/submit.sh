#!/bin/sh
# End-to-end: efplan submit keeps its contract with the real binary.
# - 8 submits of distinct jobs run at once into one plan (PLAN.lock
#   serialises them): each prints "admitted", and the plan file and the
#   jobs file it names hold all 8 (the jobs are sized to fit);
# - plan -> submit -> apply works without hand edits: the submitted job's
#   command reaches the jobs file, and apply --backend dry-run starts it;
# - a submit_time before the plan's now is refused (exit 3, nothing
#   written); a rejection (exit 4) writes nothing either.
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
exit 0
